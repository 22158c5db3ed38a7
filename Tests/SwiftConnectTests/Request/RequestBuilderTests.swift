import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("RequestBuilder")
struct RequestBuilderTests {
    static let base = URL(string: "https://api.example.com")!

    /// The absolute URL `connector` builds.
    func builtURL(_ connector: TestConnector, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let request = try connector.asURLRequest()
        return try #require(request.url, sourceLocation: sourceLocation).absoluteString
    }

    func connector(
        _ endpoint: String, _ parameters: ParametersRepresentable?, baseURL: URL = Self.base
    ) -> TestConnector {
        TestConnector(baseURL: baseURL, endpoint: endpoint, parameters: parameters)
    }

    // MARK: Path values

    @Test(arguments: [
        ("a/b", "a%2Fb"), ("a?b", "a%3Fb"), ("a#b", "a%23b"), ("100%", "100%25"), ("a b", "a%20b"),
        ("a+b", "a%2Bb"), ("a&b", "a%26b"), ("a=b", "a%3Db"), ("a;b", "a%3Bb"), ("café", "caf%C3%A9"),
        ("日本", "%E6%97%A5%E6%9C%AC"), ("👍🏽", "%F0%9F%91%8D%F0%9F%8F%BD"), ("../etc", "..%2Fetc"),
    ])
    func pathValueFillsExactlyOneSegment(value: String, encoded: String) throws {
        let request = try connector("/items/{id}/tail", Parameter.path(key: "id", value: value)).asURLRequest()
        let url = try #require(request.url)
        #expect(url.absoluteString == "https://api.example.com/items/\(encoded)/tail")
        #expect(url.query == nil)
        #expect(url.fragment == nil)
        #expect(url.pathComponents == ["/", "items", value, "tail"])
    }

    @Test func severalSlotsAreEachEncodedExactlyOnce() throws {
        let parameters = CompositeParameters(
            .path(key: "userId", value: "a b"),
            .path(key: "todoId", value: "c/d%"),
            .path(key: "tag", value: "é")
        )
        let url = try builtURL(connector("/users/{userId}/todos/{todoId}/tags/{tag}", parameters))
        #expect(url == "https://api.example.com/users/a%20b/todos/c%2Fd%25/tags/%C3%A9")
    }

    @Test func valueSpellingAnotherSlotIsNotSubstitutedAgain() throws {
        let parameters = CompositeParameters(
            .path(key: "userId", value: "{todoId}"),
            .path(key: "todoId", value: "5")
        )
        let url = try builtURL(connector("/users/{userId}/todos/{todoId}", parameters))
        #expect(url == "https://api.example.com/users/%7BtodoId%7D/todos/5")
    }

    @Test func pathParametersMayComeInAnyOrder() throws {
        let parameters = CompositeParameters(.path(key: "todoId", value: "2"), .path(key: "userId", value: "1"))
        let url = try builtURL(connector("/users/{userId}/todos/{todoId}", parameters))
        #expect(url == "https://api.example.com/users/1/todos/2")
    }

    @Test func slotInsideASegmentIsFilledInPlace() throws {
        let url = try builtURL(connector("/files/{name}.json", Parameter.path(key: "name", value: "q3 report")))
        #expect(url == "https://api.example.com/files/q3%20report.json")
    }

    @Test func slotUsedTwiceIsFilledTwiceFromOneValue() throws {
        let url = try builtURL(connector("/a/{id}/b/{id}", Parameter.path(key: "id", value: "x/y")))
        #expect(url == "https://api.example.com/a/x%2Fy/b/x%2Fy")
    }

    @Test func slotInTheEndpointQueryIsEncodedAsAQueryValue() throws {
        let url = try builtURL(connector("/search?q={term}&limit=10", Parameter.path(key: "term", value: "a&b=c d")))
        #expect(url == "https://api.example.com/search?q=a%26b%3Dc%20d&limit=10")
    }

    @Test func endpointLiteralsKeepTheirEscapesAndEncodeTheRest() throws {
        let url = try builtURL(connector("/caf%C3%A9/menu du jour/é", nil))
        #expect(url == "https://api.example.com/caf%C3%A9/menu%20du%20jour/%C3%A9")
    }

    // MARK: Query items

    @Test(arguments: [
        ("+", "%2B"), ("&", "%26"), ("=", "%3D"), (";", "%3B"), ("/", "%2F"), ("?", "%3F"), ("#", "%23"),
        (" ", "%20"), ("%", "%25"), ("é", "%C3%A9"), ("日本", "%E6%97%A5%E6%9C%AC"), ("🙂", "%F0%9F%99%82"),
    ])
    func queryNameAndValueAreRFC3986Encoded(raw: String, encoded: String) throws {
        let request = try connector("/search", Parameter.query(key: "k\(raw)", value: "v\(raw)")).asURLRequest()
        let url = try #require(request.url)
        #expect(url.absoluteString == "https://api.example.com/search?k\(encoded)=v\(encoded)")
        #expect(url.fragment == nil)
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        #expect(items == [URLQueryItem(name: "k\(raw)", value: "v\(raw)")])
    }

    @Test func queryItemsKeepTheirOrderAndMayRepeat() throws {
        let parameters = CompositeParameters(
            .query(key: "tag", value: "z"),
            .query(key: "page", value: "2"),
            .query(key: "tag", value: "a")
        )
        let url = try builtURL(connector("/todos", parameters))
        #expect(url == "https://api.example.com/todos?tag=z&page=2&tag=a")
    }

    @Test func endpointQueryIsKeptAndParameterItemsFollowIt() throws {
        let url = try builtURL(connector("/todos?expand=user&sort=-id", Parameter.query(key: "page", value: "2")))
        #expect(url == "https://api.example.com/todos?expand=user&sort=-id&page=2")
    }

    @Test func baseURLQueryIsKeptBeforeEndpointAndParameterItems() throws {
        let base = URL(string: "https://api.example.com/v2?key=abc")!
        let url = try builtURL(connector("/todos?expand=user", Parameter.query(key: "page", value: "2"), baseURL: base))
        #expect(url == "https://api.example.com/v2/todos?key=abc&expand=user&page=2")
    }

    /// A base or endpoint query that ends with `&` is followed by the next part without another
    /// one, and kept as written when nothing follows; an endpoint query that starts with `&`
    /// follows the base's without another.
    @Test(arguments: [
        ("https://api.example.com/v2?key=abc&", "/todos?expand=user&", true, "?key=abc&expand=user&page=2"),
        ("https://api.example.com/v2?key=abc&", "/todos", true, "?key=abc&page=2"),
        ("https://api.example.com/v2", "/todos?expand=user&", true, "?expand=user&page=2"),
        ("https://api.example.com/v2?key=abc&", "/todos?expand=user", false, "?key=abc&expand=user"),
        ("https://api.example.com/v2", "/todos?expand=user&", false, "?expand=user&"),
        ("https://api.example.com/v2?key=abc", "/todos?&expand=user", true, "?key=abc&expand=user&page=2"),
        // Each part's own `&` goes as written: the library adds none between them.
        ("https://api.example.com/v2?key=abc&", "/todos?&expand=user", false, "?key=abc&&expand=user"),
        ("https://api.example.com/v2", "/todos?&expand=user", false, "?&expand=user"),
    ])
    func queryPartEndingWithAmpersandIsNotFollowedByAnother(
        base: String, endpoint: String, withItem: Bool, query: String
    ) throws {
        let parameters = withItem ? Parameter.query(key: "page", value: "2") : nil
        let url = try builtURL(connector(endpoint, parameters, baseURL: try #require(URL(string: base))))
        #expect(url == "https://api.example.com/v2/todos" + query)
    }

    @Test func queryItemWithoutValueIsSentAsNameAlone() throws {
        struct Flag: ParametersRepresentable {
            func apply(to parameters: inout RequestParameters) throws {
                parameters.appendQueryItem(name: "verbose", value: nil)
            }
        }
        let url = try builtURL(
            connector("/todos", CompositeParameters([Flag(), Parameter.query(key: "a", value: "1")])))
        #expect(url == "https://api.example.com/todos?verbose&a=1")
    }

    // MARK: Base URL and endpoint joining

    @Test(arguments: [
        ("https://h.test/api/v1", "/todos", "https://h.test/api/v1/todos"),
        ("https://h.test/api/v1/", "/todos", "https://h.test/api/v1/todos"),
        ("https://h.test/api/v1/", "todos", "https://h.test/api/v1/todos"),
        ("https://h.test/api/v1", "todos", "https://h.test/api/v1/todos"),
        ("https://h.test", "todos", "https://h.test/todos"),
        ("https://h.test", "/todos", "https://h.test/todos"),
        ("https://h.test/", "/todos", "https://h.test/todos"),
        ("https://h.test/api/v1", "", "https://h.test/api/v1"),
        ("https://h.test/api/v1/", "", "https://h.test/api/v1/"),
        ("http://h.test:8080/api", "/todos/", "http://h.test:8080/api/todos/"),
        ("HTTPS://h.test/api", "/todos", "https://h.test/api/todos"),
    ])
    func baseURLPathIsKept(base: String, endpoint: String, expected: String) throws {
        let url = try builtURL(connector(endpoint, nil, baseURL: try #require(URL(string: base))))
        #expect(url == expected)
    }

    /// Usage.md: a slot may appear more than once, each filled with its value; the template's own
    /// query goes out as written, a `+` kept and a space encoded.
    @Test func aSlotThatAppearsTwiceIsFilledTwiceAndTheTemplatesOwnQueryIsWrittenAsGiven() throws {
        let twice = try builtURL(connector("/u/{x}/{x}?again={x}", Parameter.path(key: "x", value: "a b+")))
        #expect(twice == "https://api.example.com/u/a%20b%2B/a%20b%2B?again=a%20b%2B")
        #expect(try builtURL(connector("/s?a=1+1 2&b=%2B", nil)) == "https://api.example.com/s?a=1+1%202&b=%2B")
    }

    /// A base URL is not a template: a `{slot}` in it (as `URL(string:)` leaves or escapes it) is
    /// refused before anything is sent, rather than going out as `/%7Btenant%7D/…`.
    @Test(arguments: [
        "http://127.0.0.1:9/{x}", "https://h.test/%7Btenant%7D/api", "https://h.test/%7btenant%7d/api",
        "https://h.test/api/v{version}", "https://h.test/{api_version}/x", "https://u:p@h.test/{_t}?q=1#f",
    ])
    func aBaseURLWithASlotIsRefused(base: String) throws {
        let url = try #require(URL(string: base))
        #expect(throws: ConnectError.invalidRequest(.invalidBaseURL(url.absoluteString))) {
            try connector("/users", nil, baseURL: url).asURLRequest()
        }
        let description = ConnectError.invalidRequest(.invalidBaseURL(url.absoluteString)).description
        #expect(
            description.contains("has a {slot}, which nothing fills: slots belong in the endpoint"), "\(description)")
    }

    @Test(arguments: [
        "https://h.test/api/%7B%7D/x", "https://h.test/a%7Bb/c%7D", "https://h.test/a%7Db%7Bc", "https://h.test/%7B",
        "https://h.test/api?q=%7Ba=1%7D", "https://h.test/a%7Bb?c%7D", "https://h.test/%7Gx%7D", "https://h.test/%7",
        "https://h.test/tenants/%7B6F9619FF-8B86-D011-B42D-00C04FC964FF%7D/api", "https://h.test/%7B1abc%7D",
        "https://user:p%7Bx%7D@h.test/api", "https://h.test/api?filter=%7Bkey%7D", "https://h.test/api#%7Bx%7D",
        "https://h.test/a%20%7Bb%20c%7D", "https://h.test", "https://h.test?next=/%7Bx%7D", "https://h.test#/%7Bx%7D",
    ])
    func aBaseURLWithBracesThatAreNoSlotIsKept(base: String) throws {
        let url = try #require(URL(string: base))
        #expect(!RequestBuilder.hasSlot(url.absoluteString))
        #expect(
            try builtURL(connector("", nil, baseURL: url)).hasPrefix(
                url.absoluteString.prefix { $0 != "?" && $0 != "#" }))
    }

    /// What `URL` says of `url`: an `http` or `https` scheme, a host, and no port or one a
    /// connection can use (`URL` takes `:0` and `:99999`; URLSession then fails with -1000).
    static func isSendable(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return !(url.host ?? "").isEmpty && url.port.map { (1...65535).contains($0) } ?? true
    }

    /// The base URL check reads the scheme and host from `absoluteString`'s bytes; it must agree
    /// with `URL`'s own `scheme`, `host` and `port` on every URL, tricky ones included.
    @Test(arguments: [
        "https://api.example.com", "http://h.test:8080/api", "HTTPS://H.TEST/x", "hTtP://h.test",
        "https://user:pw@h.test/api", "https://user@h.test", "https://@h.test", "http://user@/api",
        "http://:80/api", "http:///api", "http://", "http:", "https:api.example.com", "http:/h.test/x",
        "http://[::1]:8080/x", "http://[fe80::1%25en0]/", "http://127.0.0.1:9/", "https://h.test?q=1",
        "https://h.test#frag", "http://h.test:/x", "http://%41.test/", "https://h.test/a@b/c", "https://h.test?a=@b",
        "http://%80/", "https://@~%80*+", "HTTP://%80/-&", "http://%C3%A9.test/", "http://h%2Etest/",
        "httpx://h.test", "htt://h.test", "https2://h.test", "ftp://files.example.com/pub", "file:///tmp/api",
        "mailto:someone@example.com", "/api/v1", "api/v1", "h.test:80", "data:text/plain,hi", "", "ws://h.test",
        "http://127.0.0.1:99999/", "http://h.test:0/", "http://h.test:65535/", "http://h.test:65536/",
        "http://[::1]:70000/", "http://[::1]:/", "http://h.test:00080/", "https://u:p@h.test:99999/",
    ])
    func baseURLCheckAgreesWithFoundation(string: String) throws {
        guard let url = URL(string: string) else { return }  // not a URL at all: nothing to build from
        let foundation = Self.isSendable(url)
        #expect(RequestBuilder.hasHTTPSchemeAndHost(url.absoluteString) == foundation, "\(url.absoluteString)")
    }

    @Test func baseURLCheckAgreesWithFoundationForRelativeURLs() throws {
        let base = try #require(URL(string: "https://api.example.com/v1/"))
        for relative in ["todos", "/todos", "?q=1", "//other.test/x", "http://h.test", "ftp://h.test", "#f"] {
            let url = try #require(URL(string: relative, relativeTo: base))
            let foundation = Self.isSendable(url)
            #expect(RequestBuilder.hasHTTPSchemeAndHost(url.absoluteString) == foundation, "\(url.absoluteString)")
        }
    }

    /// The check remembers the base it found valid last, with its layout: a base checked after it,
    /// valid or not, must still get its own answer and layout, in any order, from any thread.
    @Test func rememberedBaseURLNeverAnswersForAnother() async {
        let bases = [
            "https://api.example.com/v1", "ftp://api.example.com/v1", "https://api.example.com/v1",
            "http://", "https://other.test?key=1", "https:api.example.com", "https://other.test?key=1",
            "https://h.test/a?q#frag", "file:///tmp", "https://h.test/a#frag?not-a-query",
        ]
        let expected = bases.map { base in
            RequestBuilder.hasHTTPSchemeAndHost(base) ? base.withUTF8Bytes(RequestBuilder.BaseURLLayout.init(of:)) : nil
        }
        #expect(expected.contains(nil) && expected.contains { $0 != nil })
        // "https://h.test/a" is 16 bytes: then "?q" (a query) and "#frag"; a `?` after `#` is no query.
        #expect(expected[7].map { [$0.prefixEnd, $0.queryStart, $0.queryEnd] } == [16, 17, 18])
        #expect(expected[9].map { [$0.prefixEnd, $0.queryStart, $0.queryEnd] } == [16, 16, 16])
        let cache = RequestBuildCache(capacity: 8)
        await withTaskGroup(of: [Bool].self) { group in
            for offset in 0..<4 {
                group.addTask {
                    (0..<400).map { step in
                        let index = (step + offset) % bases.count
                        return cache.validBaseLayout(bases[index]) == expected[index]
                    }
                }
            }
            for await answers in group { #expect(answers.allSatisfy { $0 }) }
        }
    }

    /// Random strings made of the characters that matter to a URL's scheme and authority.
    @Test func baseURLCheckAgreesWithFoundationOnRandomURLs() {
        let schemes = ["http", "https", "HTTPs", "ftp", "", "h.test"]
        let separators = ["://", ":", ":/", ":///", "", "/"]
        let pieces = [
            ":", "/", "@", "[", "]", "::1", "?", "#", "%41", "%80", "%C3%A9", "%", "h.test", "80", "u", "http:", "//",
            "0", "99",
        ]
        var generator = SeededGenerator(state: 0x5EED)
        var parsed = 0
        for _ in 0..<20_000 {
            let string =
                schemes.randomElement(using: &generator)! + separators.randomElement(using: &generator)!
                + (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                .joined()
            guard let url = URL(string: string) else { continue }
            parsed += 1
            let foundation = Self.isSendable(url)
            #expect(RequestBuilder.hasHTTPSchemeAndHost(url.absoluteString) == foundation, "\(url.absoluteString)")
        }
        #expect(parsed > 1_000)  // enough of them are URLs for the comparison to mean something
    }

    /// The first slot without a value is reported, in the order the URL is written: the path's
    /// slots, then the endpoint query's.
    @Test(arguments: [
        ([], "userId"), (["userId"], "todoId"), (["todoId"], "userId"), (["userId", "todoId"], "ownerId"),
        (["ownerId"], "userId"), (["userId", "ownerId"], "todoId"),
    ])
    func theFirstMissingSlotIsReported(given keys: [String], missing: String) {
        let parameters = CompositeParameters(keys.map { Parameter.path(key: $0, value: "1") })
        let built = connector("/users/{userId}/todos/{todoId}?owner={ownerId}", parameters)
        #expect(rejectionReason(building: built) == .missingPathValue(slot: missing))
    }

    /// Path values given one at a time, as a type of one's own would give them (not a list kept
    /// whole).
    struct PathValuesOneByOne: ParametersRepresentable {
        let values: [(key: String, value: String)]
        func apply(to parameters: inout RequestParameters) throws {
            for (key, value) in values { try parameters.setPathValue(value, forKey: key) }
        }
    }

    /// Path values are checked while the slots are filled, yet the error is the one a check of
    /// every value before writing reports: the first unused or empty value in the order given,
    /// and only then the first slot without a value. Each case is given as a list kept whole and
    /// one value at a time.
    @Test(
        arguments: [
            // Every slot filled, one value over.
            ([("userId", "1"), ("todoId", "2"), ("ownerId", "3"), ("extra", "4")], .unusedPathParameter(key: "extra")),
            // An unused value and a missing slot, in either order.
            ([("extra", "4"), ("userId", "1")], .unusedPathParameter(key: "extra")),
            ([("userId", "1"), ("extra", "4")], .unusedPathParameter(key: "extra")),
            // An empty value and an unused one: the first given is reported.
            ([("userId", ""), ("extra", "4")], .emptyPathValue(key: "userId")),
            ([("extra", "4"), ("userId", "")], .unusedPathParameter(key: "extra")),
            // An empty value for the query's slot, every slot filled.
            ([("userId", "1"), ("todoId", "2"), ("ownerId", "")], .emptyPathValue(key: "ownerId")),
            // An empty value and a missing slot that the URL reaches first: the empty value.
            ([("ownerId", ""), ("userId", "1")], .emptyPathValue(key: "ownerId")),
            ([("userId", "1"), ("todoId", "")], .emptyPathValue(key: "todoId")),
        ] as [([(String, String)], InvalidRequestReason)])
    func pathValueErrorsAreThoseOfACheckBeforeWriting(given values: [(String, String)], expected: InvalidRequestReason)
    {
        let endpoint = "/users/{userId}/todos/{todoId}?owner={ownerId}"
        let kept = CompositeParameters(values.map { Parameter.path(key: $0.0, value: $0.1) })
        #expect(rejectionReason(building: connector(endpoint, kept)) == expected)
        let oneByOne = PathValuesOneByOne(values: values.map { (key: $0.0, value: $0.1) })
        #expect(rejectionReason(building: connector(endpoint, oneByOne)) == expected)
    }

    /// `.` and `..` are steps up the path to a server that decodes `%2E` before resolving
    /// dot-segments: refused as path values, alone in their segment or beside the template's
    /// dots, written or encoded. Dots with anything else, and dots in the query, go out.
    @Test(
        arguments: [
            ("/u/{id}/t", [("id", "..")], "id"),
            ("/u/{id}/t", [("id", ".")], "id"),
            ("/u/{id}", [("id", "..")], "id"),
            ("{id}/t", [("id", "..")], "id"),
            ("/api/.{x}/admin", [("x", ".")], "x"),
            ("/api/{x}./admin", [("x", ".")], "x"),
            ("/api/%2E{x}/admin", [("x", ".")], "x"),
            ("/api/{x}{y}/admin", [("x", "."), ("y", ".")], "x"),
            ("/api/{x}{y}/admin", [("x", "a"), ("y", "..")], "y"),
        ] as [(String, [(String, String)], String)])
    func pathValuesMakingADotSegmentAreRefused(endpoint: String, values: [(String, String)], key: String) {
        let parameters = CompositeParameters(values.map { Parameter.path(key: $0.0, value: $0.1) })
        #expect(rejectionReason(building: connector(endpoint, parameters)) == .dotSegmentPathValue(key: key))
    }

    @Test func dotsWithOtherCharactersOrInTheQueryAreSent() throws {
        let dots = CompositeParameters(
            .path(key: "a", value: "..."), .path(key: "b", value: "..x"), .path(key: "c", value: "v1.2"),
            .path(key: "q", value: ".."), .query(key: "up", value: ".."))
        #expect(
            try builtURL(connector("/{a}/{b}/{c}?q={q}", dots))
                == "https://api.example.com/.../..x/v1.2?q=..&up=..")
    }

    /// An unused value given before a dot-segment value is reported first, as a check of every
    /// value before writing would.
    @Test func anEarlierUnusedValueIsReportedBeforeADotSegmentValue() {
        let values = CompositeParameters(.path(key: "extra", value: "1"), .path(key: "id", value: ".."))
        #expect(rejectionReason(building: connector("/u/{id}", values)) == .unusedPathParameter(key: "extra"))
    }

    /// A name may fill several slots: one value serves them all, and a value of another name is
    /// still reported unused.
    @Test func aNameFillingSeveralSlotsTakesOneValue() throws {
        let endpoint = "/a/{id}/b/{id}?c={id}"
        #expect(
            try builtURL(connector(endpoint, Parameter.path(key: "id", value: "7")))
                == "https://api.example.com/a/7/b/7?c=7")
        let extra = CompositeParameters(.path(key: "id", value: "7"), .path(key: "other", value: "8"))
        #expect(rejectionReason(building: connector(endpoint, extra)) == .unusedPathParameter(key: "other"))
    }

    // MARK: Rejections: nothing is sent

    /// One way a connector can be invalid, and the reason it must be rejected with.
    enum Rejection: String, CaseIterable, Sendable {
        case missingSlotValue, unusedPathParameter, duplicatePathParameter, emptyPathValue
        case unclosedBrace, strayBrace, emptySlot, fragmentInEndpoint
        case jsonAndData, formAndJSON, dataAndForm, twoJSONBodies
        case jsonBodyOnGET, formBodyOnGET, dataBodyOnHEAD
        case headerValueWithCR, headerValueWithLF, headerValueWithCRLFInjection, headerValueWithNUL
        case headerNameWithSpace, headerNameWithColon, emptyHeaderName, nonASCIIHeaderName
        case ftpBaseURL, fileBaseURL, mailtoBaseURL, relativeBaseURL, hostlessHTTPBaseURL, opaqueHTTPBaseURL
        case emptyMethod, methodWithSpace, methodWithCRLF, nonASCIIMethod
        case nanInJSONBody, infinityInJSONBody

        var connector: TestConnector {
            var connector = TestConnector(baseURL: URL(string: "https://api.example.com")!, endpoint: "/items")
            switch self {
            case .missingSlotValue:
                connector.endpoint = "/users/{userId}/todos/{todoId}"
                connector.parameters = Parameter.path(key: "userId", value: "1")
            case .unusedPathParameter:
                connector.parameters = Parameter.path(key: "id", value: "1")
            case .duplicatePathParameter:
                connector.endpoint = "/items/{id}"
                connector.parameters = CompositeParameters(.path(key: "id", value: "1"), .path(key: "id", value: "2"))
            case .emptyPathValue:
                connector.endpoint = "/items/{id}/tail"
                connector.parameters = Parameter.path(key: "id", value: "")
            case .unclosedBrace: connector.endpoint = "/items/{id"
            case .strayBrace: connector.endpoint = "/items/id}"
            case .emptySlot: connector.endpoint = "/items/{}"
            case .fragmentInEndpoint: connector.endpoint = "/items#top"
            case .jsonAndData:
                connector.method = .post
                connector.parameters = CompositeParameters(
                    .jsonObject(value: ["a": 1]), .data(Data("x".utf8), contentType: "text/plain"))
            case .formAndJSON:
                connector.method = .post
                connector.parameters = CompositeParameters(.form(key: "a", value: "1"), .jsonObject(value: ["a": 1]))
            case .dataAndForm:
                connector.method = .post
                connector.parameters = CompositeParameters(
                    .data(Data("x".utf8), contentType: "text/plain"), .form(key: "a", value: "1"))
            case .twoJSONBodies:
                connector.method = .post
                connector.parameters = CompositeParameters(.jsonObject(value: ["a": 1]), .jsonObject(value: ["b": 2]))
            case .jsonBodyOnGET:
                connector.parameters = Parameter.jsonObject(value: ["a": 1])
            case .formBodyOnGET:
                connector.parameters = Parameter.form(key: "a", value: "1")
            case .dataBodyOnHEAD:
                connector.method = .head
                connector.parameters = Parameter.data(Data("x".utf8), contentType: "text/plain")
            case .headerValueWithCR: connector.headers = [HTTPHeader(name: "X-Note", value: "a\rb")]
            case .headerValueWithLF: connector.headers = [HTTPHeader(name: "X-Note", value: "a\nb")]
            case .headerValueWithCRLFInjection:
                connector.headers = [HTTPHeader(name: "X-Note", value: "a\r\nX-Injected: yes")]
            case .headerValueWithNUL: connector.headers = [HTTPHeader(name: "X-Note", value: "a\u{0}b")]
            case .headerNameWithSpace: connector.headers = [HTTPHeader(name: "X Note", value: "a")]
            case .headerNameWithColon: connector.headers = [HTTPHeader(name: "X-Note:", value: "a")]
            case .emptyHeaderName: connector.headers = [HTTPHeader(name: "", value: "a")]
            case .nonASCIIHeaderName: connector.headers = [HTTPHeader(name: "X-Noté", value: "a")]
            case .ftpBaseURL: connector.baseURL = URL(string: "ftp://files.example.com/pub")!
            case .fileBaseURL: connector.baseURL = URL(string: "file:///tmp/api")!
            case .mailtoBaseURL: connector.baseURL = URL(string: "mailto:someone@example.com")!
            case .relativeBaseURL: connector.baseURL = URL(string: "/api/v1")!
            case .hostlessHTTPBaseURL: connector.baseURL = URL(string: "http:///api")!
            case .opaqueHTTPBaseURL: connector.baseURL = URL(string: "https:api.example.com")!
            case .emptyMethod: connector.method = HTTPMethod(rawValue: "")
            case .methodWithSpace: connector.method = HTTPMethod(rawValue: "GET ALL")
            case .methodWithCRLF: connector.method = HTTPMethod(rawValue: "GET\r\n")
            case .nonASCIIMethod: connector.method = HTTPMethod(rawValue: "PÜT")
            case .nanInJSONBody:
                connector.method = .post
                connector.parameters = Parameter.jsonObject(value: ["score": Double.nan])
            case .infinityInJSONBody:
                connector.method = .post
                connector.parameters = Parameter.jsonObject(value: ["score": Double.infinity])
            }
            return connector
        }

        var expected: InvalidRequestReason {
            let connector = self.connector
            switch self {
            case .missingSlotValue: return .missingPathValue(slot: "todoId")
            case .unusedPathParameter: return .unusedPathParameter(key: "id")
            case .duplicatePathParameter: return .duplicatePathParameter(key: "id")
            case .emptyPathValue: return .emptyPathValue(key: "id")
            case .unclosedBrace, .strayBrace, .emptySlot, .fragmentInEndpoint:
                // The detail is free text; `matches` compares the case and the endpoint only.
                return .malformedEndpoint(connector.endpoint, detail: "")
            case .jsonAndData, .formAndJSON, .dataAndForm, .twoJSONBodies: return .multipleBodies
            case .jsonBodyOnGET, .formBodyOnGET: return .bodyNotAllowed(method: "GET")
            case .dataBodyOnHEAD: return .bodyNotAllowed(method: "HEAD")
            case .headerValueWithCR, .headerValueWithLF, .headerValueWithCRLFInjection, .headerValueWithNUL,
                .headerNameWithSpace, .headerNameWithColon, .emptyHeaderName, .nonASCIIHeaderName:
                return .invalidHeader(name: connector.headers[0].name)
            case .ftpBaseURL, .fileBaseURL, .mailtoBaseURL, .relativeBaseURL, .hostlessHTTPBaseURL, .opaqueHTTPBaseURL:
                return .invalidBaseURL(connector.baseURL.absoluteString)
            case .emptyMethod, .methodWithSpace, .methodWithCRLF, .nonASCIIMethod:
                return .invalidMethod(connector.method.rawValue)
            case .nanInJSONBody, .infinityInJSONBody:
                // `==` compares only the case for encodingFailed.
                return .encodingFailed(
                    underlying: EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "")))
            }
        }

        /// Whether `reason` is the expected one.
        func matches(_ reason: InvalidRequestReason?) -> Bool {
            switch (expected, reason) {
            case (.malformedEndpoint(let endpoint, _), .malformedEndpoint(let reported, _)?):
                return endpoint == reported
            default:
                return reason == expected
            }
        }
    }

    @Test(arguments: Rejection.allCases)
    func invalidConnectorIsRejectedWithItsReason(_ rejection: Rejection) {
        let reason = rejectionReason(building: rejection.connector)
        #expect(rejection.matches(reason), "got \(String(describing: reason)), expected \(rejection.expected)")
    }

    @Test(arguments: Rejection.allCases)
    func invalidConnectorFailsTheFutureAndSendsNothing(_ rejection: Rejection) async {
        let reason = await rejectionReasonWhenSent(rejection.connector)
        #expect(rejection.matches(reason), "got \(String(describing: reason)), expected \(rejection.expected)")
    }

    @Test func jsonBodyThatCannotBeEncodedKeepsTheEncoderError() throws {
        let connector = TestConnector(
            baseURL: Self.base, endpoint: "/scores", method: .post,
            parameters: Parameter.jsonObject(value: ["score": Double.nan]))
        let error = #expect(throws: ConnectError.self) { try connector.asURLRequest() }
        #expect(error?.underlyingError is EncodingError)
    }

    @Test func validConnectorIsSentExactlyOnceAsBuilt() async throws {
        // The counterpart of the rejections above: the same pipeline does send a valid request.
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport)
        let connector = TestConnector(
            baseURL: Self.base, endpoint: "/items/{id}", parameters: Parameter.path(key: "id", value: "7"))
        _ = try await connect.request(connector).value
        let sent = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(sent.url?.absoluteString == "https://api.example.com/items/7")
        #expect(sent.httpMethod == "GET")
    }

    // MARK: Headers

    @Test func connectorHeadersAreSent() throws {
        let request = try TestConnector(
            baseURL: Self.base, headers: [.accept("application/json"), HTTPHeader(name: "X-Client", value: "tests")]
        ).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "tests")
    }

    /// As documented: one field per name, the last of the same name (in any case) winning; a list
    /// goes in one header, comma-separated.
    @Test func aLaterHeaderOfTheSameNameReplacesAnEarlierOne() throws {
        let request = try TestConnector(
            baseURL: Self.base,
            headers: [HTTPHeader(name: "X-A", value: "1"), HTTPHeader(name: "x-a", value: "2"), .accept("a, b")]
        ).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "X-A") == "2")
        #expect(request.allHTTPHeaderFields?.keys.filter { $0.lowercased() == "x-a" }.count == 1)
        #expect(request.value(forHTTPHeaderField: "Accept") == "a, b")
    }

    @Test func bodyContentTypeIsSentWhenTheConnectorSetsNone() throws {
        let request = try TestConnector(
            baseURL: Self.base, method: .post, parameters: Parameter.jsonObject(value: ["a": 1])
        ).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func connectorContentTypeWinsOverTheBodys() throws {
        let request = try TestConnector(
            baseURL: Self.base, method: .post,
            headers: [HTTPHeader(name: "content-type", value: "application/vnd.api+json")],
            parameters: Parameter.jsonObject(value: ["a": 1])
        ).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        #expect(request.allHTTPHeaderFields?.keys.filter { $0.lowercased() == "content-type" }.count == 1)
    }

    @Test func bodyContentTypeWinsOverADefaultContentType() throws {
        let connect = makeConfiguredConnect(transport: RecordingTransport()) {
            $0.defaultHeaders = [.contentType("text/plain"), .accept("application/json")]
        }
        let request = try connect.urlRequest(
            for: TestConnector(baseURL: Self.base, method: .post, parameters: Parameter.form(key: "a", value: "1")))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test func rawBodyContentTypeWithLineBreaksFailsBeforeSending() async {
        let connector = TestConnector(
            baseURL: Self.base, method: .post,
            parameters: Parameter.data(Data("x".utf8), contentType: "text/plain\r\nX-Injected: 1"))
        #expect(rejectionReason(building: connector) == .invalidHeader(name: "Content-Type"))
        await expectRejectedBeforeSending(connector, with: .invalidHeader(name: "Content-Type"))
    }

    @Test func requestWithoutBodyHasNoContentType() throws {
        let request = try TestConnector(baseURL: Self.base).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(request.httpBody == nil)
    }

    @Test func defaultHeadersAreSentUnlessTheConnectorOverridesThem() async throws {
        let transport = RecordingTransport()
        let connect = makeConfiguredConnect(transport: transport) { configuration in
            configuration.defaultHeaders = [.userAgent("SwiftConnectTests/1.0"), .accept("*/*")]
        }
        let connector = TestConnector(
            baseURL: Self.base, headers: [HTTPHeader(name: "accept", value: "application/json")])
        _ = try await connect.request(connector).value
        let sent = try #require(transport.requests.first)
        #expect(sent.value(forHTTPHeaderField: "User-Agent") == "SwiftConnectTests/1.0")
        #expect(sent.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test func invalidDefaultHeaderFailsBeforeSending() async {
        let connector = TestConnector(baseURL: Self.base)
        await expectRejectedBeforeSending(connector, with: .invalidHeader(name: "X-Trace")) { transport in
            makeConfiguredConnect(transport: transport) { configuration in
                configuration.defaultHeaders = [HTTPHeader(name: "X-Trace", value: "1\r\n2")]
            }
        }
    }

    /// `HTTP` and `http` are the same scheme, but URLSession on Linux refuses the first.
    @Test(arguments: [
        ("HTTP://api.example.com", "/items/{id}", "http://api.example.com/items/7"),
        ("HtTpS://api.example.com/v1/", "/items/{id}", "https://api.example.com/v1/items/7"),
        ("HTTPS://API.example.com?k=v#f", "items/{id}", "https://API.example.com/items/7?k=v"),
    ])
    func anUppercaseSchemeIsSentLowercased(base: String, endpoint: String, expected: String) throws {
        let connector = TestConnector(
            baseURL: URL(string: base)!, endpoint: endpoint, parameters: Parameter.path(key: "id", value: "7"))
        #expect(try builtURL(connector) == expected)
    }

    /// A hand-set `Content-Length` cut the body short on the wire, and the rest of it went out as
    /// the start of another request on the same connection; the transport frames the body itself.
    @Test func aHeaderThatFramesTheBodyIsRefusedWhereverItComesFrom() async {
        let body = Parameter.data(Data("hello world".utf8), contentType: "text/plain")
        await expectRejectedBeforeSending(
            TestConnector(
                baseURL: Self.base, method: .post, headers: [HTTPHeader(name: "Content-Length", value: "5")],
                parameters: body),
            with: .reservedHeader(name: "Content-Length"))
        await expectRejectedBeforeSending(
            TestConnector(baseURL: Self.base, headers: [HTTPHeader(name: "transfer-encoding", value: "chunked")]),
            with: .reservedHeader(name: "transfer-encoding"))
        await expectRejectedBeforeSending(
            TestConnector(baseURL: Self.base), with: .reservedHeader(name: "CONTENT-LENGTH")
        ) {
            transport in
            makeConfiguredConnect(transport: transport) {
                $0.defaultHeaders = [HTTPHeader(name: "CONTENT-LENGTH", value: "0")]
            }
        }
        // Names that merely start alike are headers like any other.
        let request = try? TestConnector(
            baseURL: Self.base,
            headers: [
                HTTPHeader(name: "Content-Lengths", value: "1"), HTTPHeader(name: "Transfer-Encodings", value: "1"),
            ]
        ).asURLRequest()
        #expect(request?.value(forHTTPHeaderField: "Content-Lengths") == "1")
        #expect(request?.value(forHTTPHeaderField: "Transfer-Encodings") == "1")
    }

    // MARK: Bodies

    struct NewTodo: Encodable {
        let userId: Int
        let isCompleted: Bool
        let dueDate: String
    }

    @Test func jsonBodyUsesTheConfigurationsEncoder() async throws {
        let transport = RecordingTransport()
        let connect = makeConfiguredConnect(transport: transport) { configuration in
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            configuration.jsonEncoder = encoder
        }
        let connector = TestConnector(
            baseURL: Self.base, endpoint: "/todos", method: .post,
            parameters: Parameter.jsonObject(value: NewTodo(userId: 3, isCompleted: true, dueDate: "2024-01-31")))
        _ = try await connect.request(connector).value
        let sent = try #require(transport.requests.first)
        // Decoded with explicit snake_case keys, independently of the encoder under test.
        struct SnakeCased: Decodable, Equatable {
            let userId: Int
            let isCompleted: Bool
            let dueDate: String
            enum CodingKeys: String, CodingKey {
                case userId = "user_id"
                case isCompleted = "is_completed"
                case dueDate = "due_date"
            }
        }
        let body = try JSONDecoder().decode(SnakeCased.self, from: try #require(sent.httpBody))
        #expect(body == SnakeCased(userId: 3, isCompleted: true, dueDate: "2024-01-31"))
        #expect(sent.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func formFieldsAccumulateInOrderAndAreEncoded() throws {
        let parameters = CompositeParameters(
            .form(key: "name", value: "Jürgen K"),
            .form(key: "note", value: "a+b&c=d"),
            .form(key: "name", value: "second")
        )
        let request = try TestConnector(baseURL: Self.base, method: .post, parameters: parameters).asURLRequest()
        let body = try #require(request.httpBody)
        #expect(String(decoding: body, as: UTF8.self) == "name=J%C3%BCrgen%20K&note=a%2Bb%26c%3Dd&name=second")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func rawDataIsSentAsGivenWithItsContentType() throws {
        let xml = Data("<todo id=\"1\"/>".utf8) + Data([0xFF, 0x00])
        let request = try TestConnector(
            baseURL: Self.base, method: .put, parameters: Parameter.data(xml, contentType: "application/xml")
        ).asURLRequest()
        #expect(request.httpBody == xml)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/xml")
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete, .options, HTTPMethod(rawValue: "PROPFIND")])
    func methodsOtherThanGETAndHEADMayCarryABody(method: HTTPMethod) throws {
        let request = try TestConnector(
            baseURL: Self.base, method: method, parameters: Parameter.jsonObject(value: ["a": 1])
        ).asURLRequest()
        #expect(request.httpMethod == method.rawValue)
        #expect(request.httpBody == Data(#"{"a":1}"#.utf8))
    }

    struct APIKey: ParametersRepresentable {
        let key: String
        func apply(to parameters: inout RequestParameters) throws {
            parameters.appendQueryItem(name: "api_key", value: key)
            parameters.appendHeader(HTTPHeader(name: "X-API-Key", value: key))
        }
    }

    @Test func customParametersAddAQueryItemAndAHeader() throws {
        let parameters = CompositeParameters([Parameter.query(key: "page", value: "1"), APIKey(key: "k/1")])
        let request = try TestConnector(baseURL: Self.base, endpoint: "/todos", parameters: parameters).asURLRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/todos?page=1&api_key=k%2F1")
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "k/1")
    }

    struct SigningFailed: Error, Equatable {}

    struct FailingSignature: ParametersRepresentable {
        func apply(to parameters: inout RequestParameters) throws {
            parameters.appendQueryItem(name: "signed", value: "no")
            throw SigningFailed()
        }
    }

    /// Reported as the parameters' own failure, not as a body that could not be encoded (there is
    /// none).
    @Test func errorFromCustomParametersFailsTheRequestBeforeSending() async throws {
        let connector = TestConnector(baseURL: Self.base, parameters: FailingSignature())
        let error = #expect(throws: ConnectError.self) { try connector.asURLRequest() }
        #expect(error?.underlyingError as? SigningFailed == SigningFailed())
        #expect(
            error?.description
                == "Invalid request (nothing was sent): the connector's parameters could not be applied: SigningFailed()"
        )
        await expectRejectedBeforeSending(
            connector, with: .parametersFailed(underlying: SigningFailed()))
    }

    @Test func connectErrorFromCustomParametersIsPassedThroughUnchanged() throws {
        struct Strict: ParametersRepresentable {
            func apply(to parameters: inout RequestParameters) throws {
                throw ConnectError.invalidRequest(.missingPathValue(slot: "tenant"))
            }
        }
        let reason = rejectionReason(building: TestConnector(baseURL: Self.base, parameters: Strict()))
        #expect(reason == .missingPathValue(slot: "tenant"))
    }

    // MARK: Timeout and method

    @Test func connectorTimeoutWinsOverTheConfigurations() throws {
        let connect = makeConfiguredConnect(transport: RecordingTransport()) { $0.timeoutInterval = 30 }
        let own = try connect.urlRequest(for: TestConnector(baseURL: Self.base, timeoutInterval: 5))
        let inherited = try connect.urlRequest(for: TestConnector(baseURL: Self.base))
        #expect(own.timeoutInterval == 5)
        #expect(inherited.timeoutInterval == 30)
    }

    @Test func connectorTimeoutIsUsedWhenTheConfigurationHasNone() throws {
        let request = try TestConnector(baseURL: Self.base, timeoutInterval: 7).asURLRequest()
        #expect(request.timeoutInterval == 7)
    }

    @Test func configuredTimeoutReachesTheTransport() async throws {
        let transport = RecordingTransport()
        let connect = makeConfiguredConnect(transport: transport) { $0.timeoutInterval = 12 }
        _ = try await connect.request(TestConnector(baseURL: Self.base)).value
        #expect(transport.requests.first?.timeoutInterval == 12)
    }

    @Test(arguments: [TimeInterval.nan, 0, -1, -TimeInterval.infinity])
    func aTimeoutNoRequestCanWaitIsRefusedAndNothingIsSent(seconds: TimeInterval) async {
        // FoundationNetworking traps converting NaN or -inf to Int; 0 and -1 fail the request at once.
        let own = await rejectionReasonWhenSent(TestConnector(baseURL: Self.base, timeoutInterval: seconds))
        #expect(own == .invalidTimeout(seconds))
        let configured = await rejectionReasonWhenSent(TestConnector(baseURL: Self.base)) { transport in
            makeConfiguredConnect(transport: transport) { $0.timeoutInterval = seconds }
        }
        #expect(configured == .invalidTimeout(seconds))
    }

    @Test(arguments: [TimeInterval.infinity, 1e16, TimeInterval.greatestFiniteMagnitude])
    func anEndlessTimeoutWaitsAsLongAsURLSessionCan(seconds: TimeInterval) throws {
        // Past about 9.2e15 s, FoundationNetworking's `Int(timeout) * 1000` traps.
        let request = try TestConnector(baseURL: Self.base, timeoutInterval: seconds).asURLRequest()
        #expect(request.timeoutInterval == RequestTimeout.longest)
        #expect(RequestTimeout.longest == 1e9)
    }

    @Test func aFractionOfASecondIsRoundedUpOnLinuxOnly() throws {
        let half = try TestConnector(baseURL: Self.base, timeoutInterval: 0.5).asURLRequest()
        let oneAndAHalf = try TestConnector(baseURL: Self.base, timeoutInterval: 1.5).asURLRequest()
        #if canImport(FoundationNetworking)
            // FoundationNetworking truncates to whole seconds: 0.5 s would time out at once.
            #expect(half.timeoutInterval == 1)
            #expect(oneAndAHalf.timeoutInterval == 2)
        #else
            #expect(half.timeoutInterval == 0.5)
            #expect(oneAndAHalf.timeoutInterval == 1.5)
        #endif
    }

    @Test func theSessionsTimeoutsAreMadeSendableOnACopy() throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = .infinity
        configuration.timeoutIntervalForResource = .nan
        let transport = URLSessionTransport(configuration: configuration)
        #expect(transport.session.configuration.timeoutIntervalForRequest == RequestTimeout.longest)
        #expect(transport.session.configuration.timeoutIntervalForResource == 7 * 24 * 60 * 60)
        // The caller's configuration object is left as it was.
        #expect(configuration.timeoutIntervalForRequest == .infinity)
        #expect(configuration.timeoutIntervalForResource.isNaN)

        // Usage.md: URLSession's defaults, 60 s for a request and 7 days for a resource.
        let refused = URLSessionConfiguration.ephemeral
        refused.timeoutIntervalForRequest = 0
        refused.timeoutIntervalForResource = -1
        let connect = Connect(configuration: ConnectConfiguration(sessionConfiguration: refused))
        let session = try #require((connect.transport as? URLSessionTransport)?.session)
        #expect(session.configuration.timeoutIntervalForRequest == 60)
        #expect(session.configuration.timeoutIntervalForResource == 7 * 24 * 60 * 60)

        let untouched = URLSessionConfiguration.ephemeral
        untouched.timeoutIntervalForRequest = 30
        #expect(RequestTimeout.sanitized(untouched) === untouched)
    }

    // MARK: The usage document's connectors

    struct Todo: Codable, Equatable {
        let userId: Int
        let id: Int
        let title: String
        let completed: Bool
    }

    enum TodoConnector: Connector {
        case get(id: Int)

        var baseURL: URL { URL(string: "https://jsonplaceholder.typicode.com")! }
        var endpoint: String {
            switch self {
            case .get: return "/todos/{id}"
            }
        }
        var method: HTTPMethod {
            switch self {
            case .get: return .get
            }
        }
        var headers: [HTTPHeader] { [] }
        var parameters: ParametersRepresentable? {
            switch self {
            case .get(let id): return Parameter.path(key: "id", value: "\(id)")
            }
        }
    }

    enum TodoAction: String {
        case update
    }

    enum AdvancedTodoConnector: Connector {
        case update(userId: Int, todoId: Int, action: TodoAction, object: Encodable)

        var baseURL: URL { URL(string: "https://myserver.com")! }
        var endpoint: String {
            switch self {
            case .update: return "/users/{userId}/todos/{todoId}"
            }
        }
        var method: HTTPMethod {
            switch self {
            case .update: return .put
            }
        }
        var headers: [HTTPHeader] { [] }
        var parameters: ParametersRepresentable? {
            switch self {
            case .update(let userId, let todoId, let action, let object):
                return CompositeParameters(
                    .path(key: "userId", value: "\(userId)"),
                    .path(key: "todoId", value: "\(todoId)"),
                    .query(key: "action", value: action.rawValue),
                    .jsonObject(value: object)
                )
            }
        }
    }

    @Test func usageDocumentTodoConnectorBuildsTheTodoURL() throws {
        let request = try TodoConnector.get(id: 123).asURLRequest()
        #expect(request.url?.absoluteString == "https://jsonplaceholder.typicode.com/todos/123")
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
    }

    @Test func usageDocumentAdvancedConnectorBuildsThePUTWithQueryAndJSONBody() throws {
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)
        let request = try AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo)
            .asURLRequest()
        #expect(request.url?.absoluteString == "https://myserver.com/users/1/todos/2?action=update")
        #expect(request.httpMethod == "PUT")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(request.httpBody)
        #expect(try JSONDecoder().decode(Todo.self, from: body) == todo)
        #expect(try jsonObject(in: request).count == 4)
    }

    @Test func usageDocumentAdvancedConnectorIsSentAsBuilt() async throws {
        let transport = RecordingTransport()
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)
        _ = try await makeConnect(transport: transport)
            .request(AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo)).value
        let sent = try #require(transport.requests.first)
        #expect(sent.url?.absoluteString == "https://myserver.com/users/1/todos/2?action=update")
        #expect(sent.httpMethod == "PUT")
        #expect(try JSONDecoder().decode(Todo.self, from: try #require(sent.httpBody)) == todo)
    }
}
