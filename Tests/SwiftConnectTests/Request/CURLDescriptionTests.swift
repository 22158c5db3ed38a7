import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("CURLDescription")
struct CURLDescriptionTests {
    static let separator = "======================================="

    func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:], body: Data? = nil
    ) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        return request
    }

    // MARK: Layout

    @Test func layoutFollowsTheUsageDocument() throws {
        let put = try request(
            "https://myserver.com/users/1/todos/2?action=update", method: "PUT",
            headers: ["Content-Type": "application/json"], body: Data(#"{"id":1,"title":"Test Todo"}"#.utf8))
        let expected = """
            =======================================
            $ curl -v \\
                -X PUT \\
                -H "Content-Type: application/json" \\
                -d "{\\"id\\":1,\\"title\\":\\"Test Todo\\"}" \\
                "https://myserver.com/users/1/todos/2?action=update"
            =======================================
            """
        #expect(DebugDescription.curl(put) == expected)
    }

    struct Session: Connector, AuthorizedConnector {
        var token: AuthorizationToken? = .header(name: "X-Member", value: "s3cret")
        var baseURL: URL { URL(string: "https://api.test/v1")! }
        var endpoint: String { "/users/{id}" }
        var method: HTTPMethod { .patch }
        var parameters: ParametersRepresentable? {
            CompositeParameters(
                .path(key: "id", value: "a b"), .query(key: "api_key", value: "k"), .query(key: "page", value: "2"),
                .jsonObject(value: ["name": "Ada", "password": "hunter2"]))
        }
        var authorizationToken: AuthorizationToken? { token }
    }

    /// `Connect.cURLDescription(for:)`: the command debug output would log, unframed, nothing sent.
    @Test func connectDescribesAConnectorsRequestWithoutSendingIt() throws {
        let transport = RecordingTransport()
        let connect = PipelineFixtures.connect(transport: transport) { configuration in
            configuration.jsonEncoder.outputFormatting = .sortedKeys
            configuration.defaultHeaders = [.accept("application/json")]
        }
        let expected = """
            $ curl -v \\
                -X PATCH \\
                -H "Accept: application/json" \\
                -H "Content-Type: application/json" \\
                -H "X-Member: <redacted>" \\
                -d "{\\"name\\":\\"Ada\\",\\"password\\":\\"<redacted>\\"}" \\
                "https://api.test/v1/users/a%20b?api_key=<redacted>&page=2"
            """
        #expect(try connect.cURLDescription(for: Session()) == expected)
        #expect(transport.requests.isEmpty)
        #expect(throws: ConnectError.invalidRequest(.emptyToken)) {
            try connect.cURLDescription(for: Session(token: .bearer(token: " ")))
        }
    }

    @Test func aContentLengthHeaderIsLeftToCurl() throws {
        let cut = try request(
            "https://h.test/x", method: "POST", headers: ["content-length": "100000", "X-A": "1"],
            body: Data(repeating: UInt8(ascii: "a"), count: 100_000))
        let text = DebugDescription.curl(cut, framed: false)
        #expect(!text.lowercased().contains("content-length"))
        #expect(text.contains(#"-H "X-A: 1""#))
        #expect(text.contains("# body cut"))
    }

    @Test func requestWithoutBodyHasNoDataLine() throws {
        let get = try request("https://h.test/todos/1")
        let text = DebugDescription.curl(get)
        #expect(
            text == "\(Self.separator)\n$ curl -v \\\n    -X GET \\\n    \"https://h.test/todos/1\"\n\(Self.separator)")
    }

    @Test func headersArePrintedInAStableNameOrder() throws {
        let get = try request("https://h.test/", headers: ["X-Zulu": "z", "Accept": "a", "X-Mike": "m"])
        let lines = DebugDescription.curl(get).split(separator: "\n").filter { $0.contains("-H ") }
        #expect(
            lines.map { $0.trimmingCharacters(in: .whitespaces) } == [
                #"-H "Accept: a" \"#, #"-H "X-Mike: m" \"#, #"-H "X-Zulu: z" \"#,
            ])
    }

    /// The command replays what was sent, where curl reads an option its own way.
    @Test func aHeadRequestIsReplayedWithHeadNotAMethodOverride() throws {
        // `-X HEAD` sends a HEAD but then waits for the body its Content-Length announces.
        let head = try request("https://h.test/todos/1", method: "HEAD")
        let text = DebugDescription.curl(head, framed: false)
        #expect(text == "$ curl -v \\\n    --head \\\n    \"https://h.test/todos/1\"")
    }

    @Test func aHeaderWithAnEmptyValueIsWrittenSoCurlSendsIt() throws {
        // `-H "X-Empty:"` tells curl to remove the header; `-H "X-Empty;"` sends it empty.
        let get = try request("https://h.test/", headers: ["X-Empty": "", "X-Full": "1"])
        let text = DebugDescription.curl(get, framed: false)
        #expect(text.contains(#"-H "X-Empty;""#))
        #expect(text.contains(#"-H "X-Full: 1""#))
        #expect(!text.contains("X-Empty:"))
    }

    @Test func aBodyStartingWithAnAtSignIsSentAsTextNotReadFromAFile() throws {
        // `-d "@/etc/passwd"` would upload that file; `--data-raw` sends the text.
        let post = try request(
            "https://h.test/notes", method: "POST", headers: ["Content-Type": "text/plain"],
            body: Data("@/etc/passwd".utf8))
        let text = DebugDescription.curl(post, framed: false)
        #expect(text.contains(#"--data-raw "@/etc/passwd""#))
        #expect(!text.contains("-d "))
        let plain = try request("https://h.test/notes", method: "POST", body: Data("a @ b".utf8))
        #expect(DebugDescription.curl(plain, framed: false).contains(#"-d "a @ b""#))
    }

    @Test func binaryBodyIsSummarisedNotPrinted() throws {
        let post = try request("https://h.test/upload", method: "POST", body: Data([0xFF, 0xFE, 0x00, 0x80]))
        let text = DebugDescription.curl(post)
        #expect(text.contains("--data-binary <4 bytes>"))
        #expect(!text.contains("-d "))
    }

    // MARK: Redaction

    @Test(arguments: [
        "Authorization", "Proxy-Authorization", "Cookie", "authorization", "X-API-Key", "X-Session-Token",
        // One of each word that makes a name a credential's wherever it stands in it.
        "X-Session-Id", "X-Client-Secret", "X-Password", "X-Passwd", "X-Apikey", "X-Api_Key", "X-Signature",
    ])
    func sensitiveHeaderValuesAreRedacted(name: String) throws {
        let get = try request("https://h.test/", headers: [name: "s3cr3t-value", "Accept": "application/json"])
        let text = DebugDescription.curl(get)
        #expect(!text.contains("s3cr3t-value"))
        // URLRequest may canonicalise the name's case (Linux does: "X-Api-Key").
        #expect(text.lowercased().contains("-h \"\(name.lowercased()): <redacted>\""))
        #expect(text.contains("-H \"Accept: application/json\""))
    }

    /// A session id in the query is as good as the cookie that would carry it.
    @Test func aSessionInTheQueryIsRedacted() throws {
        let text = DebugDescription.curl(try request("https://h.test/items?session=abc123&page=2"))
        #expect(!text.contains("abc123"))
        #expect(text.contains("session=<redacted>&page=2"))
    }

    @Test func passwordInTheURLIsRedacted() throws {
        let get = try request("https://alice:hunter2@h.test/todos")
        let text = DebugDescription.curl(get)
        #expect(!text.contains("hunter2"))
        #expect(text.contains("alice"))
    }

    /// A token rides in a URL as a user name without a password: that name is the secret.
    @Test func aUserNameWithoutAPasswordIsRedacted() throws {
        let url = try #require(URL(string: "https://ghp_SECRETTOKEN@h.test/repo.git"))
        #expect(DebugDescription.redactedURL(url) == "https://<redacted>@h.test/repo.git")
        let text = DebugDescription.curl(URLRequest(url: url))
        #expect(!text.contains("SECRETTOKEN"))
    }

    @Test func urlWithoutSecretsIsPrintedUnchanged() throws {
        let url = "https://h.test/search?q=a%26b&page=2"
        #expect(DebugDescription.redactedURL(try #require(URL(string: url))) == url)
    }

    // Run in a child process: a crash in the redaction must fail this test, not the whole run.
    @Test func tokenLikeQueryValuesAreRedacted() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let url = URL(string: "https://h.test/todos?access_token=tok-123&page=2&api_key=key-456")!
            print(DebugDescription.redactedURL(url))
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(!output.contains("tok-123"))
        #expect(!output.contains("key-456"))
        #expect(output.contains("page=2"))
        #expect(output.contains("access_token="))
    }

    @Test func tokenLikeQueryValuesAreRedactedInTheCURLCommand() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            var request = URLRequest(url: URL(string: "https://h.test/todos?password=hunter2")!)
            request.httpMethod = "GET"
            print(DebugDescription.curl(request))
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        #expect(output.contains("$ curl -v"))
        #expect(!output.contains("hunter2"))
    }

    @Test func tokenLikeJSONKeysAreRedactedAtAnyDepth() throws {
        let body = Data(
            #"{"user":"alice","password":"hunter2","auth":{"refresh_token":"tok-123"},"items":[{"apiKey":"key-456"}]}"#
                .utf8)
        let post = try request(
            "https://h.test/login", method: "POST", headers: ["Content-Type": "application/json"], body: body)
        let text = DebugDescription.curl(post)
        for secret in ["hunter2", "tok-123", "key-456"] {
            #expect(!text.contains(secret))
        }
        #expect(text.contains(#"\"user\":\"alice\""#))
        #expect(text.contains(#"\"password\":\"<redacted>\""#))
    }

    /// httpbin echoes the request's URL in its body: the values the request line hides stay
    /// hidden there too.
    @Test func urlsInJSONValuesAreRedactedAsTheRequestLineIs() {
        let body =
            #"{"url":"http://u:p4ssw0rd@h.test/get?password=hunter2&page=2","links":["https://h.test/x?access_token=tok-1"],"note":"a://b"}"#
        let text = DebugDescription.response(PipelineFixtures.response(status: 200, body: body), elapsed: 0)
        for secret in ["p4ssw0rd", "hunter2", "tok-1"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains("page=2"))
        #expect(text.contains("a://b"))
    }

    /// A redirect to an implicit-grant callback carries the token in its `Location`: URLs in
    /// response headers hide what the request line hides, and what the next hop's cURL line and
    /// `ConnectError.tooManyRedirects` hide.
    @Test func urlsInResponseHeadersAreRedactedAsTheRequestLineIs() throws {
        let location = "https://app.test/cb?access_token=IMPLICITSECRET&state=s1"
        let response = PipelineFixtures.response(
            status: 302,
            headers: [
                "Location": location,
                "Content-Location": "https://u:p4ssw0rd@h.test/doc",
                "Link": #"<https://h.test/items?page=2&api_key=LINKSECRET>; rel="next", </items?page=1>; rel="first""#,
                "Refresh": "5; url=https://h.test/next?password=REFRESHSECRET",
                "X-Request-Id": "req-1",
            ])
        let text = DebugDescription.response(response, elapsed: 0)
        for secret in ["IMPLICITSECRET", "p4ssw0rd", "LINKSECRET", "REFRESHSECRET"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        let redactedLocation = DebugDescription.redactedURL(location)
        #expect(text.contains("\nLocation: \(redactedLocation)\n"))
        #expect(ConnectError.tooManyRedirects(response).description.hasSuffix(redactedLocation))
        #expect(DebugDescription.curl(try request(location)).contains(DebugDescription.quoted(redactedLocation)))
        #expect(text.contains("\nContent-Location: https://u:<redacted>@h.test/doc\n"))
        #expect(
            text.contains(
                #"Link: <https://h.test/items?page=2&api_key=<redacted>>; rel="next", </items?page=1>; rel="first""#))
        #expect(text.contains("\nRefresh: 5; url=https://h.test/next?password=<redacted>\n"))
        #expect(text.contains("\nX-Request-Id: req-1\n"))
        let quotedRefresh = HTTPHeader(name: "refresh", value: "0;URL='https://h.test/?token=t1'")
        #expect(DebugDescription.shownValue(of: quotedRefresh) == "0;URL='https://h.test/?token=<redacted>'")
    }

    /// A 401 is debugged with its challenge: `WWW-Authenticate` (RFC 6750's `error` and
    /// `error_description`), its proxy's twin and CORS's `Access-Control-Allow-Credentials` look
    /// secret by name (`authenticat…`, `credentials`) but carry no secret, and are shown. The
    /// request's credential headers and a header named as a connector's token stay redacted.
    @Test func challengeHeadersAreShown() {
        let challenge = #"Bearer realm="api", error="invalid_token", error_description="The access token expired""#
        let response = PipelineFixtures.response(
            status: 401,
            headers: [
                "WWW-Authenticate": challenge,
                "Proxy-Authenticate": #"Basic realm="proxy""#,
                "Access-Control-Allow-Credentials": "true",
                "Set-Cookie": "sid=COOKIESECRET",
                "X-Auth-Token": "HEADERSECRET",
            ])
        let text = DebugDescription.response(response, elapsed: 0)
        #expect(text.contains("\nWWW-Authenticate: \(challenge)"), "\(text)")
        #expect(text.contains(#"Proxy-Authenticate: Basic realm="proxy""#), "\(text)")
        #expect(text.contains("Access-Control-Allow-Credentials: true"), "\(text)")
        for secret in ["COOKIESECRET", "HEADERSECRET"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(DebugDescription.isSensitive(name: "www-authenticate", credentialHeaders: ["www-authenticate"]))
        #expect(DebugDescription.isSensitive(name: "X-Authentication-Token"))
    }

    /// An OAuth implicit grant returns its token in the callback URL's fragment
    /// (`#access_token=…`, RFC 6749 §4.2.2), not in its query: the redirect's `Location`, the next
    /// hop's cURL line and `ConnectError.tooManyRedirects` hide it as they hide a query's. A
    /// fragment that is an anchor stays as it is.
    @Test func secretFieldsInAFragmentAreRedacted() throws {
        let location = "https://app.test/cb#access_token=FRAGMENTSECRET&expires_in=3600&state=s1"
        let redacted = "https://app.test/cb#access_token=<redacted>&expires_in=3600&state=s1"
        #expect(DebugDescription.redactedURL(location) == redacted)
        let response = PipelineFixtures.response(status: 302, headers: ["Location": location])
        let text = DebugDescription.response(response, elapsed: 0)
        #expect(text.contains("\nLocation: \(redacted)"))
        #expect(!ConnectError.tooManyRedirects(response).description.contains("FRAGMENTSECRET"))
        #expect(!DebugDescription.curl(try request(location)).contains("FRAGMENTSECRET"))
        #expect(DebugDescription.redactedURL("https://h.test/doc?page=2#token") == "https://h.test/doc?page=2#token")
        #expect(DebugDescription.redactedURL("https://h.test/doc#top") == "https://h.test/doc#top")
    }

    /// An OAuth authorization code (RFC 6749 §4.1.2) comes back as `code` beside `state` in the
    /// callback's query, and goes out as `code` beside `grant_type` in the token request: hidden
    /// there, with the PKCE `code_verifier` and a device flow's `device_code`, whatever the names'
    /// case (`redirectUri`, `deviceCode`). A `code` among other fields (a country) or a number (an
    /// error's, even beside a `state`) is shown.
    @Test func anAuthorizationCodeIsRedactedWhereOAuthPutsIt() throws {
        #expect(
            DebugDescription.redactedURL("https://app.test/cb?code=SplxlOBeZQ&state=xyz")
                == "https://app.test/cb?code=<redacted>&state=xyz")
        #expect(
            DebugDescription.redactedURL("https://app.test/cb#state=xyz&code=FRAGCODE")
                == "https://app.test/cb#state=xyz&code=<redacted>")
        #expect(DebugDescription.redactedURL("https://h.test/countries?code=US") == "https://h.test/countries?code=US")
        let location = "https://app.test/cb?code=LOCATIONCODE&state=s1"
        let response = PipelineFixtures.response(status: 302, headers: ["Location": location])
        #expect(!DebugDescription.response(response, elapsed: 0).contains("LOCATIONCODE"))

        let form = try request(
            "https://auth.test/token", method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data(
                "grant_type=authorization_code&code=FORMCODE&redirect_uri=https%3A%2F%2Fapp.test%2Fcb&code_verifier=PKCE1"
                    .utf8))
        let formText = DebugDescription.curl(form)
        #expect(!formText.contains("FORMCODE"))
        #expect(!formText.contains("PKCE1"))
        #expect(
            formText.contains("grant_type=authorization_code&code=<redacted>&redirect_uri=https%3A%2F%2Fapp.test%2Fcb"))

        let json = try request(
            "https://auth.test/token", method: "POST", headers: ["Content-Type": "application/json"],
            body: Data(
                #"{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"DEV1","Code":"JC2"}"#.utf8
            ))
        let jsonText = DebugDescription.curl(json)
        for secret in ["DEV1", "JC2"] { #expect(!jsonText.contains(secret), "\(secret)") }
        let camel = try request(
            "https://api.test/oauth/exchange", method: "POST", headers: ["Content-Type": "application/json"],
            body: Data(
                #"{"code":"CAMEL1","redirectUri":"https://app.test/cb","codeVerifier":"CAMEL2","deviceCode":"CAMEL3"}"#
                    .utf8))
        let camelText = DebugDescription.curl(camel)
        for secret in ["CAMEL1", "CAMEL2", "CAMEL3"] { #expect(!camelText.contains(secret), "\(secret)") }
        #expect(
            DebugDescription.redactedURL("https://app.test/cb?code=ISSCODE&iss=https%3A%2F%2Fauth.test")
                == "https://app.test/cb?code=<redacted>&iss=https%3A%2F%2Fauth.test")

        let error = PipelineFixtures.response(status: 400, body: #"{"code":4012,"message":"bad"}"#)
        #expect(DebugDescription.response(error, elapsed: 0).contains("4012"))
        let job = PipelineFixtures.response(status: 200, body: #"{"code":4013,"state":"failed"}"#)
        #expect(DebugDescription.response(job, elapsed: 0).contains("4013"))
    }

    /// A field with no name (`=value`) keeps its value where it is, shown: it is not read as a name.
    @Test func aFieldWithoutANameIsLeftAsItIs() {
        #expect(
            DebugDescription.redactedURL("https://h.test/a?=mytoken_value&b=1") == "https://h.test/a?=mytoken_value&b=1"
        )
    }

    /// httpbin's `/anything` echoes the request body as a string (`"data": "{\"password\":…}"`):
    /// a string that holds a JSON object or array is redacted inside and shown compact, still as a
    /// string.
    @Test func jsonHeldInAJSONStringIsRedactedInside() throws {
        let body = #"""
            {"data":"{\"password\":\"JP1\",\"user\":\"a\",\"next\":\"https://h.test/?token=JT2\"}",\#
            "list":" [{\"api_key\":\"JK3\"}, 2]","brace":"{not json","empty":"{}"}
            """#
        let text = DebugDescription.response(PipelineFixtures.response(status: 200, body: body), elapsed: 0)
        for secret in ["JP1", "JT2", "JK3"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(
            text.contains(
                #""{\"next\":\"https://h.test/?token=<redacted>\",\"password\":\"<redacted>\",\"user\":\"a\"}""#),
            "\(text)")
        #expect(text.contains(#""[{\"api_key\":\"<redacted>\"},2]""#), "\(text)")
        #expect(text.contains(#""{not json""#))
        #expect(text.contains(#""{}""#))
        let post = try request(
            "https://h.test/anything", method: "POST", headers: ["Content-Type": "application/json"],
            body: Data(#"{"payload":"{\"refresh_token\":\"JR4\"}"}"#.utf8))
        #expect(!DebugDescription.curl(post).contains("JR4"))
        #expect(DebugDescription.curl(post).contains(#"refresh_token\\\":\\\"<redacted>"#))
    }

    /// Prose that mentions a URL is not one: redacting it as a URL mangled the sentence.
    @Test func proseMentioningAURLIsLeftAlone() {
        let note = "Visit https://example.com, open 10:30, contact me@x.org"
        let response = PipelineFixtures.response(status: 200, body: #"{"note":"\#(note)"}"#)
        #expect(DebugDescription.response(response, elapsed: 0).contains(note))
    }

    @Test(
        "secret JSON keys are redacted whatever the body's declared type",
        arguments: [
            "application/merge-patch+json", "application/vnd.api+json; charset=utf-8", "text/plain",
            "application/x-www-form-urlencoded", nil,
        ])
    func secretJSONKeysAreRedactedWhateverTheContentType(contentType: String?) throws {
        let body = Data(#"{"user":"alice","password":"hunter2","items":[{"apiKey":"key-456"}]}"#.utf8)
        let patch = try request(
            "https://h.test/me", method: "PATCH", headers: contentType.map { ["Content-Type": $0] } ?? [:], body: body)
        let text = DebugDescription.curl(patch)
        #expect(!text.contains("hunter2"))
        #expect(!text.contains("key-456"))
        #expect(text.contains(#"\"password\":\"<redacted>\""#))
        #expect(text.contains(#"\"user\":\"alice\""#))
    }

    /// Names that carry credentials by their words, not by a word the first list knows — and
    /// names that only look like them.
    @Test func credentialNamesAreRecognisedWordByWord() {
        for name in [
            "X-Auth-Key", "Ocp-Apim-Subscription-Key", "X-Access-Key", "x-functions-key", "X-Credentials",
            "clientKey", "subscription_key", "authKey", "X-Authentication", "Authorization-Code", "credential",
            "code_verifier", "oauth_verifier", "client_assertion", "passcode", "X-OTP", "otp", "pin", "user_pin",
            "X-Device-Pin", "jwt", "X-JWT", "id_jwt", "sig", "bearer", "X-Bearer",
        ] {
            #expect(DebugDescription.isSensitive(name: name), "\(name)")
        }
        for name in [
            "author", "Authority", "key", "keyword", "keys", "Accept", "X-Request-Id", "monkey", "accessKeyId",
            "code", "isPinned", "spinner", "verified", "optional", "assertions_count", "client_assertion_type",
            "otp_enabled", "pin_code", "X-Request-Pin-Id", "signed", "sig_version", "jwt_alg",
        ] {
            #expect(!DebugDescription.isSensitive(name: name), "\(name)")
        }
        #expect(DebugDescription.words(of: "Ocp-Apim-SubscriptionKey") == ["ocp", "apim", "subscription", "key"])
        #expect(DebugDescription.words(of: "x_functions.KEY") == ["x", "functions", "key"])
    }

    /// `?key=` is how Google's APIs (Maps, YouTube, Gemini) and many others take their API key: a
    /// lone `key` is a credential in a URL's query or fragment. In a body, a `"key"` is as often
    /// an object's name (a storage listing's `Key`), and is shown.
    @Test func aLoneKeyIsACredentialInAURLButNotInABody() throws {
        #expect(DebugDescription.isSensitive(name: "key", inURL: true))
        #expect(DebugDescription.isSensitive(name: "KEY", inURL: true))
        #expect(!DebugDescription.isSensitive(name: "keyword", inURL: true))
        #expect(!DebugDescription.isSensitive(name: "key"))
        let url = "https://maps.test/geocode?address=Main%20St&key=AIzaSECRET#k=AIzaOTHER"
        #expect(
            DebugDescription.redactedURL(url)
                == "https://maps.test/geocode?address=Main%20St&key=<redacted>#k=AIzaOTHER")
        #expect(
            DebugDescription.redactedURL("https://h.test/cb#key=FRAGMENT&state=s")
                == "https://h.test/cb#key=<redacted>&state=s")
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"key":"reports/2026.csv"}"#.utf8)
        let text = DebugDescription.curl(request)
        #expect(!text.contains("AIzaSECRET"))
        #expect(text.contains("reports/2026.csv"))
    }

    @Test func credentialHeadersKnownByTheirWordsAreRedactedInTheCURLCommand() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.test/a")))
        request.setValue("s3cr3t", forHTTPHeaderField: "X-Auth-Key")
        request.setValue("s3cr3t", forHTTPHeaderField: "Ocp-Apim-Subscription-Key")
        request.setValue("Jane", forHTTPHeaderField: "X-Author")
        let curl = DebugDescription.curl(request)
        #expect(!curl.contains("s3cr3t"))
        #expect(curl.contains("X-Author: Jane"))
    }

    /// A JSON body is shown pretty-printed, but no more of it than of any other body: a 300 KB
    /// upload echoed back printed all of its 300 KB.
    @Test func aLargeJSONBodyIsCutLikeAnyOther() throws {
        let items = (0..<20_000).map { #"{"n":\#($0)}"# }.joined(separator: ",")
        let body = Data("[\(items)]".utf8)
        let shown = DebugDescription.body(body)
        #expect(shown.utf8.count < DebugDescription.shownBodyLimit + 100)
        #expect(shown.hasPrefix("[\n"), "still pretty-printed")
        #expect(shown.hasSuffix("… (\(body.count) bytes in all)"))
    }

    /// A request body is cut as a response body is: a large JSON or text upload logged as a cURL
    /// command printed all of it. A line after the command says how much of it `-d` holds.
    @Test func aLongRequestBodyIsCutInTheCURLCommand() throws {
        let limit = DebugDescription.shownBodyLimit
        let text = String(repeating: "a", count: limit - 1) + "ééé" + String(repeating: "z", count: 10_000)
        let post = try request(
            "https://h.test/notes", method: "POST", headers: ["Content-Type": "text/plain"], body: Data(text.utf8))
        let curl = DebugDescription.curl(post)
        #expect(curl.utf8.count < limit + 300)
        #expect(!curl.contains("z") && !curl.contains("é"), "cut before the character that crosses the limit")
        let end = """
            a" \\
                "https://h.test/notes"
            # body cut: -d holds \(limit - 1) of its \(text.utf8.count) bytes
            \(Self.separator)
            """
        #expect(curl.hasSuffix(end), "\(curl.suffix(200))")

        // Redacted first, then cut: a secret early in a long JSON body stays hidden.
        let json = Data(#"{"token":"S3CR3T","pad":"\#(String(repeating: "p", count: limit))"}"#.utf8)
        let put = try request(
            "https://h.test/a", method: "PUT", headers: ["Content-Type": "application/json"], body: json)
        let cut = DebugDescription.curl(put)
        #expect(!cut.contains("S3CR3T"))
        #expect(cut.contains(#"-d "{\"pad\":\"ppp"#))
        #expect(cut.contains("# body cut: -d holds \(limit) of its \(json.count) bytes"))

        // A body at the limit is whole, with no note.
        let whole = try request(
            "https://h.test/a", method: "POST", body: Data(String(repeating: "w", count: limit).utf8))
        #expect(!DebugDescription.curl(whole).contains("# body cut"))
        #expect(DebugDescription.curl(whole).contains(String(repeating: "w", count: limit) + "\""))
    }

    /// Cut inside a character, a text body was shown as binary data.
    @Test func aLongTextBodyIsCutWhereACharacterStarts() {
        let body = Data((String(repeating: "a", count: DebugDescription.shownBodyLimit - 1) + "ééé").utf8)
        let shown = DebugDescription.body(body)
        #expect(shown.hasPrefix("aaa"), "\(shown.prefix(40))")
        #expect(shown.contains("a\n… (\(body.count) bytes in all)"))
        #expect(DebugDescription.body(Data("short é".utf8)) == "short é")
    }

    @Test func tokenLikeFormFieldsAreRedacted() throws {
        let body = Data("username=bob&password=hunter2&api%5Fkey=key-456&note=a%26b".utf8)
        let post = try request(
            "https://h.test/login", method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"], body: body)
        let text = DebugDescription.curl(post)
        #expect(text.contains("-d \"username=bob&password=<redacted>&api%5Fkey=<redacted>&note=a%26b\""))
    }

    /// An OAuth token endpoint may answer in a form (GitHub's does): its fields are redacted as a
    /// form request body's are, and the body is still cut at the limit.
    @Test func tokenLikeFieldsOfAFormResponseBodyAreRedacted() {
        let response = PipelineFixtures.response(
            status: 200, body: "access_token=gho_SECRET&scope=repo&refresh%5Ftoken=r-1",
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"])
        let text = DebugDescription.response(response, elapsed: 0)
        #expect(text.hasSuffix("\n\naccess_token=<redacted>&scope=repo&refresh%5Ftoken=<redacted>"), "\(text)")
        let plain = PipelineFixtures.response(
            status: 200, body: "access_token=visible-by-design", headers: ["Content-Type": "text/plain"])
        #expect(DebugDescription.response(plain, elapsed: 0).hasSuffix("\n\naccess_token=visible-by-design"))
        let long = Data(("token=t0p&note=" + String(repeating: "a", count: DebugDescription.shownBodyLimit)).utf8)
        let shown = DebugDescription.body(long, contentType: "application/x-www-form-urlencoded")
        #expect(shown.hasPrefix("token=<redacted>&note=aaa"))
        #expect(shown.hasSuffix("a\n… (\(long.count) bytes in all)"))
    }

    /// NDJSON (one JSON object a line) is not one JSON document: each line is redacted as one.
    /// Text with a line that is not JSON is shown as it is.
    @Test func tokenLikeKeysOfAJSONLinesBodyAreRedacted() {
        let lines = Data("{\"token\":\"NDSECRET1\",\"n\":1}\r\n\n[{\"password\":\"NDSECRET2\"}]\n".utf8)
        let shown = DebugDescription.body(lines)
        #expect(!shown.contains("NDSECRET"), "\(shown)")
        #expect(shown == "{\"n\":1,\"token\":\"<redacted>\"}\n\n[{\"password\":\"<redacted>\"}]\n")
        let sent = DebugDescription.redactedBody(
            "{\"token\":\"NDSECRET3\"}\n{\"n\":2}", contentType: "application/x-ndjson")
        #expect(sent == "{\"token\":\"<redacted>\"}\n{\"n\":2}", "a request body of JSON lines too")
        // Text that starts as JSON but is not JSON lines is redacted as written.
        let prose = Data("{\"token\":\"hidden\"}\nnot json\n".utf8)
        #expect(DebugDescription.body(prose) == "{\"token\":\"<redacted>\"}\nnot json\n")
        let note = Data("note: {\"token\":\"visible\"}\nnot json\n".utf8)
        #expect(DebugDescription.body(note) == "note: {\"token\":\"visible\"}\nnot json\n", "prose as it is")
    }

    /// JSON that `JSONSerialization` does not read, and JSON lines with a string or a number, are
    /// redacted too (they were shown in full): read token by token, shown as written.
    @Test(arguments: [
        // A number too large for a Double.
        ("{\"access_token\":\"S1\",\"n\":1e400}", "{\"access_token\":\"<redacted>\",\"n\":1e400}"),
        // A lone surrogate escape, and a key written with an escape.
        ("{\"\\u0074oken\": \"S2\", \"s\":\"\\ud800\"}", "{\"\\u0074oken\": \"<redacted>\", \"s\":\"\\ud800\"}"),
        // JSON lines with a string line and a number line.
        ("{\"access_token\":\"S3\"}\n\"x\"\n42", "{\"access_token\":\"<redacted>\"}\n\"x\"\n42"),
        ("\"x\"\n{\"password\":\"S4\",\"n\":1e400}", "\"x\"\n{\"password\":\"<redacted>\",\"n\":1e400}"),
        // An object or array under a secret-looking key, and a value left open by a cut body.
        (
            "[{\"credentials\": {\"a\": \"S5\", \"b\": [1]}, \"n\": 1e400}]",
            "[{\"credentials\": \"<redacted>\", \"n\": 1e400}]"
        ),
        ("{\"n\":1,\"secret\":\"S6 and the rest", "{\"n\":1,\"secret\":\"<redacted>\""),
        // JSON held in a string, and an authorization code beside a state (a number is shown).
        (
            "{\"data\":\"{\\\"token\\\":\\\"S7\\\"}\",\"n\":1e400}",
            "{\"data\":\"{\\\"token\\\":\\\"<redacted>\\\"}\",\"n\":1e400}"
        ),
        ("{\"code\":\"S8\",\"state\":\"s\",\"n\":1e400}", "{\"code\":\"<redacted>\",\"state\":\"s\",\"n\":1e400}"),
        ("{\"code\":42,\"state\":\"s\",\"n\":1e400}", "{\"code\":42,\"state\":\"s\",\"n\":1e400}"),
    ])
    func jsonThatFoundationDoesNotReadIsRedactedAsWritten(body: String, shown: String) {
        #expect(DebugDescription.body(Data(body.utf8)) == shown)
        #expect(DebugDescription.redactedBody(body, contentType: "application/json") == shown, "as a request body")
    }

    @Test func bodyOfOtherTypesIsPrintedAsIs() throws {
        let post = try request(
            "https://h.test/notes", method: "POST", headers: ["Content-Type": "text/plain"],
            body: Data("password=visible-by-design".utf8))
        #expect(DebugDescription.curl(post).contains("-d \"password=visible-by-design\""))
    }

    @Test func debugOutputOfARealRequestRedactsTheBearerToken() async throws {
        struct Authorized: Connector, AuthorizedConnector {
            var baseURL: URL { URL(string: "https://h.test")! }
            var endpoint: String { "/me" }
            var authorizationToken: AuthorizationToken? { .bearer(token: "tok-123") }
        }
        let logger = CapturingLogger()
        let connect = makeConnect(transport: RecordingTransport(), logger: logger)
        _ = try await connect.request(Authorized(), debugResponse: true).value
        let curl = try #require(logger.messages.first { $0.contains("$ curl") })
        #expect(curl.contains("-H \"Authorization: <redacted>\""))
        #expect(!logger.messages.joined().contains("tok-123"))
    }

    // MARK: Shell quoting

    @Test(arguments: [
        (#"plain"#, #""plain""#),
        (#"say "hi""#, #""say \"hi\"""#),
        (#"$HOME"#, #""\$HOME""#),
        (#"`id`"#, #""\`id\`""#),
        (#"back\slash"#, #""back\\slash""#),
        (#"it's"#, #""it's""#),
    ])
    func shellSpecialCharactersAreEscapedInsideDoubleQuotes(text: String, quoted: String) {
        #expect(DebugDescription.quoted(text) == quoted)
    }

    /// The last ones: a combining mark after `"`, `` ` `` or `$` makes one `Character` of the two, so
    /// a quoting that compared characters left the quote unescaped: `"\u{301}; cmd` ended the quoted
    /// word there and ran `cmd` when the logged command was pasted into a shell.
    @Test(arguments: [
        #"a "b" $HOME `id` \n \ ' $(whoami) ; | & > < * ?"#,
        "\"\u{301}; echo injected; \"\u{301}",
        "`\u{301}echo injected`\u{301}",
        "$\u{301}(echo injected) \\\u{301}\"",
    ])
    func quotedTextSurvivesAPOSIXShellUnchanged(text: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "printf '%s' \(DebugDescription.quoted(text))"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: output, as: UTF8.self) == text)
    }
}
