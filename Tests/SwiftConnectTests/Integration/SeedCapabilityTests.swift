import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Black-box acceptance tests of the capabilities taken from the four other reference documents
/// (Backchat, Decree, RestBird, Endpoints), written from Usage.md, README.md, the design's
/// contracts and the public API documentation only, against httpbin on loopback.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct SeedCapabilityTests {

    // MARK: Fixtures

    /// A connector for one-off calls, every requirement settable.
    struct Call: Connector, AuthorizedConnector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var parameters: ParametersRepresentable? = nil
        var authorizationToken: AuthorizationToken? = nil
        var acceptableStatusCodes: Range<Int> = 200..<300
        var validators: [ResponseValidator]? = nil
        var jsonDecoder: JSONDecoder? = nil
        var middleware: ConnectorMiddleware = .inherited
        var timeoutInterval: TimeInterval? = nil
    }

    /// A `200` whose body is `json`, as httpbin's `/base64/{value}` answers it.
    static func body(_ json: String) -> Call {
        let encoded = Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return Call(endpoint: "/base64/{value}", parameters: Parameter.path(key: "value", value: encoded))
    }

    /// `body(json)` taken as an error response: the acceptable range leaves out its `200`.
    static func errorBody(_ json: String) -> Call {
        var call = body(json)
        call.acceptableStatusCodes = 201..<300
        return call
    }

    /// The real transport, counting what reaches it: the transport knows nothing of the data.
    struct CountingTransport: Transport {
        let inner = URLSessionTransport()
        let sent = Recorder<String>()

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            sent.append("\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "")")
            return try await inner.send(request)
        }
    }

    /// How a request travels: straight from URLSession's callback (no middleware), through the
    /// middleware pipeline, or through a transport of the user's own.
    enum Route: String, CaseIterable, Sendable {
        case direct, middleware, ownTransport
    }

    /// Decree's error handler that sends the request elsewhere: redirects the first failure to
    /// `url`, and gives up on any later one.
    static func redirectingOnce(to url: URL) -> ClosureRetrier {
        ClosureRetrier { attempt in attempt.number == 1 ? .redirect(to: url) : .doNotRetry }
    }

    static func connect(
        _ route: Route = .direct,
        middleware: (any ConnectMiddlewareProtocol)? = nil,
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
        transport: CountingTransport? = nil,
        configure: (inout ConnectConfiguration) -> Void = { _ in }
    ) -> Connect {
        let passThrough = ConnectMiddleware(adapters: [ClosureAdapter { $0 }])
        let chosen: any ConnectMiddlewareProtocol =
            middleware ?? (route == .middleware ? passThrough : ConnectMiddleware())
        let transport = transport ?? (route == .ownTransport ? CountingTransport() : nil)
        return HTTPBin.connect(middleware: chosen, errorHandler: errorHandler, transport: transport) {
            configuration in
            let session = URLSessionConfiguration.default
            session.httpCookieStorage = nil
            session.httpShouldSetCookies = false
            configuration.sessionConfiguration = session
            configure(&configuration)
        }
    }

    func outcome<Value>(_ future: SwiftConnect.Future<Value>) async -> Result<Value, any Error> {
        await withCheckedContinuation { continuation in
            future.observe { result in continuation.resume(returning: result) }
        }
    }

    func failure<Value>(_ future: SwiftConnect.Future<Value>) async -> (any Error)? {
        switch await outcome(future) {
        case .success(let value):
            Issue.record("expected a failure, got \(value)")
            return nil
        case .failure(let error):
            return error
        }
    }

    func connectError<Value>(_ future: SwiftConnect.Future<Value>) async -> ConnectError? {
        await expectConnectError(future)
    }

    struct Failure: Error, Equatable {
        let code: String
    }

    // MARK: Backchat: a transport that knows nothing of the data

    @Test func aTransportOfYourOwnSeesOnlyTheBuiltRequestAndDecodingHappensAroundIt() async throws {
        let transport = CountingTransport()
        let connect = Self.connect(transport: transport)
        let call = Call(
            endpoint: "/anything/{kind}", method: .post,
            parameters: CompositeParameters(
                .path(key: "kind", value: "a b"), .query(key: "q", value: "1+1"),
                .jsonObject(value: ["name": "Ada"])))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.json == .object(["name": .string("Ada")]))
        #expect(echo.args == ["q": .one("1+1")])
        #expect(transport.sent.values == ["POST \(HTTPBin.baseURL.absoluteString)/anything/a%20b?q=1%2B1"])
    }

    /// Bad input of every kind the seeds' capabilities add (tokens, hooks, adapters) is a typed
    /// error, and nothing reaches the transport.
    @Test func badInputIsATypedErrorAndNothingIsSent() async throws {
        struct MissingKey: ParametersRepresentable {
            func apply(to parameters: inout RequestParameters) throws { throw Failure(code: "no key") }
        }
        let plain: [(String, Call, (ConnectError) -> Bool)] = [
            (
                "missing slot", Call(endpoint: "/anything/{id}"),
                { if case .invalidRequest(.missingPathValue(slot: "id")) = $0 { true } else { false } }
            ),
            (
                "basic username with a colon",
                Call(endpoint: "/anything", authorizationToken: .basic(username: "a:b", password: "p")),
                { if case .invalidRequest(.invalidBasicUsername) = $0 { true } else { false } }
            ),
            (
                "bearer token with CR LF",
                Call(endpoint: "/anything", authorizationToken: .bearer(token: "abc\r\nX-Evil: 1")),
                { if case .invalidRequest(.invalidHeader(name: "Authorization")) = $0 { true } else { false } }
            ),
            (
                "custom token with LF",
                Call(endpoint: "/anything", authorizationToken: .custom(token: "Token a\nb")),
                { if case .invalidRequest(.invalidHeader(name: "Authorization")) = $0 { true } else { false } }
            ),
            (
                "header token with a name that is not a token",
                Call(endpoint: "/anything", authorizationToken: .header(name: "X Api Key", value: "v")),
                { if case .invalidRequest(.invalidHeader(name: "X Api Key")) = $0 { true } else { false } }
            ),
            (
                "NaN in a JSON body",
                Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: ["x": Double.nan])),
                { if case .invalidRequest(.encodingFailed) = $0 { true } else { false } }
            ),
            (
                "an API key parameter that throws",
                Call(endpoint: "/anything", parameters: CompositeParameters([MissingKey()])),
                {
                    if case .invalidRequest(.parametersFailed(let underlying)) = $0 {
                        underlying as? Failure == Failure(code: "no key")
                    } else {
                        false
                    }
                }
            ),
        ]
        for (name, call, matches) in plain {
            let transport = CountingTransport()
            let connect = Self.connect(transport: transport)
            let error = await connectError(connect.request(call))
            #expect(error.map(matches) == true, "\(name): \(String(describing: error))")
            #expect(error.map { !$0.description.isEmpty } == true, "\(name)")
            #expect(transport.sent.count == 0, "\(name): \(transport.sent.values)")
        }

        let adapters: [(String, any RequestAdapter, (any Error) -> Bool)] = [
            (
                "an adapter that throws",
                ClosureAdapter { _ in throw Failure(code: "adapter") },
                { $0 as? Failure == Failure(code: "adapter") }
            ),
            (
                "an adapter that sets Content-Length",
                ClosureAdapter { request in
                    var request = request
                    request.setValue("3", forHTTPHeaderField: "Content-Length")
                    return request
                },
                {
                    if case .invalidRequest(.reservedHeader(name: "Content-Length"))? = $0 as? ConnectError {
                        true
                    } else {
                        false
                    }
                }
            ),
            (
                "an adapter that points the request at ftp",
                ClosureAdapter { request in
                    var request = request
                    request.url = URL(string: "ftp://127.0.0.1/file")
                    return request
                },
                {
                    if case .invalidRequest(.unsupportedURL)? = $0 as? ConnectError { true } else { false }
                }
            ),
            (
                "a token hook whose refresh fails",
                TokenAuthenticator(token: nil) { _ in throw Failure(code: "refresh") },
                { $0 as? Failure == Failure(code: "refresh") }
            ),
            (
                "a token hook that gives a token with a line break",
                TokenAuthenticator(token: nil) { _ in AccessToken("abc\r\nX-Evil: 1") },
                {
                    if case .invalidRequest(.invalidHeader)? = $0 as? ConnectError { true } else { false }
                }
            ),
        ]
        for (name, adapter, matches) in adapters {
            let transport = CountingTransport()
            let connect = Self.connect(middleware: ConnectMiddleware(adapters: [adapter]), transport: transport)
            let error = await failure(connect.request(Call(endpoint: "/anything")))
            #expect(error.map(matches) == true, "\(name): \(String(describing: error))")
            #expect(transport.sent.count == 0, "\(name): \(transport.sent.values)")
        }
    }

    // MARK: Backchat: the token hook

    /// A token hook with a header of the API's own: asked before the first request, its header is
    /// a credential whatever its name — never sent to another origin, never in debug output.
    @Test func tokenHookWithAHeaderOfItsOwnIsTreatedAsACredential() async throws {
        let logger = CapturingLogger()
        let asked = Counter()
        let authenticator = TokenAuthenticator(
            token: nil, header: { HTTPHeader(name: "X-Session", value: $0.value) },
            refresh: { previous in
                #expect(previous == nil)
                asked.increment()
                return AccessToken("hook-token-4711")
            })
        let connect = Self.connect(middleware: authenticator) { $0.logger = logger }
        let echo = try await connect.request(Call(endpoint: "/anything/me"), debugResponse: true)
            .decoded(toType: Echo.self).value
        #expect(echo.header("X-Session") == "hook-token-4711")
        #expect(asked.value == 1)
        #expect(!logger.text.isEmpty)
        #expect(!logger.text.contains("hook-token-4711"), "\(logger.text)")

        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/elsewhere"
        let away = try await connect.request(
            Call(endpoint: "/redirect-to", parameters: Parameter.query(key: "url", value: other))
        ).decoded(toType: Echo.self).value
        #expect(away.url == other)
        #expect(away.header("X-Session") == nil)
        #expect(asked.value == 1, "the token was reused, not refreshed")
    }

    // MARK: Backchat: response data validators and required JSON keys

    @Test(arguments: Route.allCases)
    func aDataValidatorThatThrowsFailsWithTheResponseAndItsErrorAndSkipsErrors(route: Route) async throws {
        let ran = Counter()
        let connect = Self.connect(route) { configuration in
            configuration.validators = [
                .data { data in
                    ran.increment()
                    if data.isEmpty || data.first != UInt8(ascii: "{") { throw Failure(code: "not an object") }
                }
            ]
        }
        _ = try await connect.request(Self.body(#"{"ok":true}"#)).value
        #expect(ran.value == 1)

        let error = await connectError(connect.request(Self.body("[1,2]")))
        guard case .validationFailed(let response, let underlying)? = error else {
            Issue.record("expected validationFailed, got \(String(describing: error))")
            return
        }
        #expect(underlying as? Failure == Failure(code: "not an object"))
        #expect(response.statusCode == 200)
        #expect(error?.statusCode == 200)
        #expect(error?.responseBody == Data("[1,2]".utf8))
        #expect(error?.underlyingError as? Failure == Failure(code: "not an object"))
        #expect(ran.value == 2)

        // An error status goes to the error handler; validators only check successes.
        let notFound = await connectError(connect.request(Call(endpoint: "/status/404")))
        guard case .unacceptableStatus? = notFound else {
            Issue.record("expected unacceptableStatus, got \(String(describing: notFound))")
            return
        }
        #expect(ran.value == 2)
    }

    @Test(arguments: Route.allCases)
    func requiredJSONKeysFindNestedIndexedNullAndDottedKeysAndNameEveryMissingOne(route: Route) async throws {
        let json = #"{"status":"ok","data":{"id":null,"items":[{"id":1},{"name":"b"}]},"user.name":"ada"}"#
        let present = Self.connect(route) {
            $0.validators = [.requiredJSONKeys(["status", "data.id", "data.items.0.id", "data.items.1", "user.name"])]
        }
        _ = try await present.request(Self.body(json)).value

        let missing = Self.connect(route) {
            $0.validators = [.requiredJSONKeys(["status", "data.name", "data.items.1.id", "data.items.2", "gone"])]
        }
        let error = await connectError(missing.request(Self.body(json)))
        guard case .validationFailed(_, let underlying)? = error else {
            Issue.record("expected validationFailed, got \(String(describing: error))")
            return
        }
        #expect((underlying as? MissingJSONKeys)?.keys == ["data.name", "data.items.1.id", "data.items.2", "gone"])
        let text = error?.localizedDescription ?? ""
        #expect(text.contains("data.name") && text.contains("gone"), "\(text)")

        // A body that is not a JSON object has none of the keys: a failure, not a crash.
        for call in [Self.body("[1]"), Self.body("not json"), Call(endpoint: "/status/204")] {
            let error = await connectError(missing.request(call))
            guard case .validationFailed? = error else {
                Issue.record("expected validationFailed for \(call.endpoint), got \(String(describing: error))")
                continue
            }
        }
    }

    // MARK: Decree: the basic response every reply contains

    struct Envelope: Decodable, Sendable {
        let status: String
        let requestId: String
    }

    @Test(arguments: Route.allCases)
    func everyReplyMustContainTheBasicResponseDecodedWithTheConfigurationsDecoder(route: Route) async throws {
        let checked = Recorder<String>()
        let connect = Self.connect(route) { configuration in
            configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            configuration.validators = [
                .basicResponse(Envelope.self) { envelope in
                    checked.append(envelope.requestId)
                    guard envelope.status == "ok" else { throw Failure(code: envelope.status) }
                }
            ]
        }
        struct Item: Decodable, Sendable, Equatable {
            let itemName: String
        }
        let item = try await connect.request(
            Self.body(#"{"status":"ok","request_id":"r1","data":{"item_name":"x"}}"#)
        ).decoded(toType: Item.self, keyPath: "data").value
        #expect(item == Item(itemName: "x"))
        #expect(checked.values == ["r1"])

        let rejected = await connectError(connect.request(Self.body(#"{"status":"busy","request_id":"r2"}"#)))
        guard case .validationFailed(let response, let underlying)? = rejected else {
            Issue.record("expected validationFailed, got \(String(describing: rejected))")
            return
        }
        #expect(underlying as? Failure == Failure(code: "busy"))
        #expect(response.statusCode == 200)

        let incomplete = await connectError(connect.request(Self.body(#"{"request_id":"r3"}"#)))
        guard case .validationFailed? = incomplete else {
            Issue.record("expected validationFailed, got \(String(describing: incomplete))")
            return
        }
        let text = incomplete?.localizedDescription ?? ""
        #expect(text.contains("status"), "the error names the missing field: \(text)")
        #expect(checked.values == ["r1", "r2"])
    }

    /// Decree configures the decoder per endpoint: a connector's `jsonDecoder` decodes its basic
    /// response and its typed error body, not the configuration's.
    @Test(arguments: Route.allCases)
    func anEndpointsDecoderDecodesItsBasicResponseAndErrorBody(route: Route) async throws {
        struct Stamped: Decodable, Sendable {
            let at: Date
        }
        struct LegacyFailure: Decodable, Error {
            let at: Date
            let reason: String
        }
        let legacy = JSONDecoder()
        legacy.dateDecodingStrategy = .secondsSince1970
        let seen = Recorder<Date>()
        let connect = Self.connect(route, errorHandler: DecodingErrorHandler(LegacyFailure.self)) { configuration in
            configuration.jsonDecoder.dateDecodingStrategy = .iso8601
            configuration.validators = [.basicResponse(Stamped.self) { seen.append($0.at) }]
        }
        var call = Self.body(#"{"at":1700000000,"reason":"legacy"}"#)
        call.jsonDecoder = legacy
        let stamped = try await connect.request(call).decoded(toType: Stamped.self).value
        #expect(stamped.at == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(seen.values == [Date(timeIntervalSince1970: 1_700_000_000)])

        // The rest of the API keeps the configuration's decoder.
        let modern = try await connect.request(Self.body(#"{"at":"2023-11-14T22:13:20Z"}"#))
            .decoded(toType: Stamped.self).value
        #expect(modern.at == Date(timeIntervalSince1970: 1_700_000_000))

        var failing = Self.errorBody(#"{"at":1700000000,"reason":"legacy"}"#)
        failing.jsonDecoder = legacy
        let error = await failure(connect.request(failing))
        let typed = error as? LegacyFailure
        #expect(typed?.reason == "legacy", "\(String(describing: error))")
        #expect(typed?.at == Date(timeIntervalSince1970: 1_700_000_000))
    }

    // MARK: Decree: the typed error response

    @Test(arguments: Route.allCases)
    func theTypedErrorBodyIsTheErrorAndOtherBodiesFallBack(route: Route) async throws {
        struct APIFailure: Decodable, Error {
            let message: String
            let code: Int
        }
        let connect = Self.connect(route, errorHandler: DecodingErrorHandler(APIFailure.self))
        let typed = await failure(connect.request(Self.errorBody(#"{"message":"quota","code":42}"#)))
        #expect((typed as? APIFailure)?.code == 42, "\(String(describing: typed))")
        #expect((typed as? APIFailure)?.message == "quota")

        let partial = await connectError(connect.request(Self.errorBody(#"{"message":"only a message"}"#)))
        guard case .unacceptableStatus(let response, let message)? = partial else {
            Issue.record("expected the fallback's unacceptableStatus, got \(String(describing: partial))")
            return
        }
        #expect(message == "only a message")
        #expect(response.statusCode == 200)

        let teapot = await connectError(connect.request(Call(endpoint: "/status/418")))
        #expect(teapot?.statusCode == 418)
        #expect(teapot?.responseBody?.isEmpty == false)

        // A success is not an error, whatever its shape.
        _ = try await connect.request(Self.body(#"{"message":"fine","code":0}"#)).value
    }

    // MARK: Decree: none, basic, bearer and custom authorization

    @Test(arguments: Route.allCases)
    func noneBasicBearerAndCustomAuthorizationReachTheServer(route: Route) async throws {
        let connect = Self.connect(route) { $0.defaultHeaders = [.authorization("Default d")] }

        let basic = Call(
            endpoint: "/basic-auth/{user}/{password}",
            parameters: CompositeParameters(
                .path(key: "user", value: "ada"), .path(key: "password", value: "pässwörd")),
            authorizationToken: .basic(username: "ada", password: "pässwörd"))
        let accepted = try await connect.request(basic).decoded(toType: [String: JSONValue].self).value
        #expect(accepted["authenticated"] == .bool(true))

        var wrong = basic
        wrong.authorizationToken = .basic(username: "ada", password: "nope")
        let rejected = await connectError(connect.request(wrong))
        #expect(rejected?.statusCode == 401, "a 401 comes back instead of hanging")

        let bearer = Call(endpoint: "/bearer", authorizationToken: .bearer(token: "t0k3n"))
        let token = try await connect.request(bearer).decoded(toType: String.self, keyPath: "token").value
        #expect(token == "t0k3n")

        let custom = Call(
            endpoint: "/anything", headers: [.authorization("Header h")], authorizationToken: .custom(token: "Token c"))
        #expect(try await connect.request(custom).decoded(toType: Echo.self).value.header("Authorization") == "Token c")

        let apiKey = Call(endpoint: "/anything", authorizationToken: .header(name: "X-API-Key", value: "k-1"))
        let keyed = try await connect.request(apiKey).decoded(toType: Echo.self).value
        #expect(keyed.header("X-API-Key") == "k-1")
        #expect(keyed.header("Authorization") == "Default d", "a header token leaves Authorization alone")

        let none = try await connect.request(Call(endpoint: "/anything")).decoded(toType: Echo.self).value
        #expect(none.header("Authorization") == "Default d")
    }

    /// Usage.md: an AuthorizationToken's credentials are never sent to another origin, and the
    /// header a `.header(name:value:)` token goes in is redacted whatever its name.
    @Test func aHeaderTokenOfAnyNameIsACredential() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect { $0.logger = logger }
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/elsewhere"
        let away = Call(
            endpoint: "/redirect-to", parameters: Parameter.query(key: "url", value: other),
            authorizationToken: .header(name: "X-Tenant", value: "tenant-secret-9"))
        let echo = try await connect.request(away, debugResponse: true).decoded(toType: Echo.self).value
        #expect(echo.url == other)
        #expect(echo.header("X-Tenant") == nil)
        #expect(!logger.text.contains("tenant-secret-9"), "\(logger.text)")

        let home = Call(
            endpoint: "/anything/home", authorizationToken: .header(name: "X-Tenant", value: "tenant-secret-9"))
        let homeEcho = try await connect.request(home, debugResponse: true).decoded(toType: Echo.self).value
        #expect(homeEcho.header("X-Tenant") == "tenant-secret-9")
        #expect(!logger.text.contains("tenant-secret-9"), "the echoed header is redacted too: \(logger.text)")
    }

    // MARK: Decree / RestBird: per-endpoint and client configuration

    @Test func theClientsEncoderAndDecoderAndAnEndpointsOwnSettingsApply() async throws {
        struct Draft: Encodable {
            let createdAt: Date
            let displayName: String
        }
        struct Sent: Decodable, Sendable {
            let json: Body
            struct Body: Decodable, Sendable {
                let createdAt: Int
                let displayName: String
            }
        }
        let connect = Self.connect { configuration in
            configuration.jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
            configuration.jsonEncoder.dateEncodingStrategy = .secondsSince1970
            configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            configuration.defaultHeaders = [.accept("text/plain"), HTTPHeader(name: "X-Client", value: "c")]
        }
        let draft = Draft(createdAt: Date(timeIntervalSince1970: 1_700_000_000), displayName: "Ada")
        let call = Call(
            endpoint: "/anything", method: .post, headers: [.accept("application/json")],
            parameters: Parameter.jsonObject(value: draft))
        let response = try await connect.response(call).value
        let echo = try response.decoded(toType: Echo.self)
        #expect(echo.json == .object(["created_at": .number(1_700_000_000), "display_name": .string("Ada")]))
        #expect(echo.header("Accept") == "application/json")
        #expect(echo.header("X-Client") == "c")
        let sent = try await connect.request(call).decoded(toType: Sent.self).value
        #expect(sent.json.createdAt == 1_700_000_000)
        #expect(sent.json.displayName == "Ada")

        // An endpoint's decoder is used for its own body after a flatMap from another endpoint.
        struct Raw: Decodable, Sendable {
            let displayName: String
            enum CodingKeys: String, CodingKey {
                case displayName = "display_name"
            }
        }
        let raw = try await connect.request(call)
            .flatMap { _ in
                var legacy = Self.body(#"{"display_name":"raw"}"#)
                legacy.jsonDecoder = JSONDecoder()
                return connect.request(legacy)
            }
            .decoded(toType: Raw.self).value
        #expect(raw.displayName == "raw")

        // An endpoint's own timeout.
        var slow = Call(endpoint: "/delay/5")
        slow.timeoutInterval = 1
        let timedOut = await connectError(connect.request(slow))
        guard case .transport? = timedOut else {
            Issue.record("expected a transport error, got \(String(describing: timedOut))")
            return
        }
        #expect(timedOut?.isCancellation == false)
    }

    // MARK: Decree: validating responses

    @Test(arguments: Route.allCases)
    func responseValidatorsSeeTheResponseAndAConnectorReplacesThem(route: Route) async throws {
        let serviceWide = Counter()
        let connect = Self.connect(route) { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    serviceWide.increment()
                    if response.statusCode == 201 { throw Failure(code: "should not have created anything") }
                    if response.headers["X-Deprecated"] != nil { throw Failure(code: "deprecated") }
                }
            ]
        }
        let created = await connectError(connect.request(Call(endpoint: "/status/201")))
        guard case .validationFailed(let response, let underlying)? = created else {
            Issue.record("expected validationFailed, got \(String(describing: created))")
            return
        }
        #expect(response.statusCode == 201)
        #expect(underlying as? Failure == Failure(code: "should not have created anything"))

        let deprecated = await connectError(
            connect.request(
                Call(endpoint: "/response-headers", parameters: Parameter.query(key: "X-Deprecated", value: "1"))))
        #expect(deprecated?.underlyingError as? Failure == Failure(code: "deprecated"))
        #expect(serviceWide.value == 2)

        let own = Counter()
        var replaced = Call(endpoint: "/status/201")
        replaced.validators = [ResponseValidator { _ in own.increment() }]
        _ = try await connect.request(replaced).value
        #expect(own.value == 1)
        #expect(serviceWide.value == 2, "a connector's validators replace the service-wide ones")

        var none = Call(endpoint: "/status/201")
        none.validators = []
        _ = try await connect.request(none).value
        #expect(serviceWide.value == 2)
    }

    // MARK: Decree: an error handler that sends the same request elsewhere

    /// The same request — method, path, query, body, headers — goes to the other URL, the result
    /// goes through the whole pipeline again, the adapters run again, and credentials stay with
    /// the origin the request was built for.
    @Test func aRetrierRedirectSendsTheSameRequestElsewhereWithoutItsCredentials() async throws {
        let adapted = Counter()
        let asked = Recorder<Int>()
        let other = HTTPBin.otherOriginURL
        let middleware = ConnectMiddleware(
            adapters: [
                ClosureAdapter { request in
                    adapted.increment()
                    var request = request
                    request.setValue("key-77", forHTTPHeaderField: "X-API-Key")
                    return request
                }
            ],
            retriers: [
                ClosureRetrier { attempt in
                    asked.append(attempt.statusCode ?? -1)
                    guard attempt.statusCode == 503 else { return .doNotRetry }
                    return .redirect(to: other.appendingPathComponent("anything/mirror"))
                }
            ])
        let transport = CountingTransport()
        let seen = Counter()
        let connect = Self.connect(middleware: middleware, transport: transport) {
            $0.validators = [ResponseValidator { _ in seen.increment() }]
        }
        let call = Call(
            endpoint: "/status/503", method: .post,
            headers: [HTTPHeader(name: "X-Trace", value: "t-1"), HTTPHeader(name: "Cookie", value: "s=1")],
            parameters: CompositeParameters(.query(key: "page", value: "2"), .jsonObject(value: ["name": "Ada"])),
            authorizationToken: .bearer(token: "bearer-secret"))
        let response = try await connect.response(call).value
        let echo = try response.decoded(toType: Echo.self)
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["name": .string("Ada")]))
        #expect(echo.header("X-Trace") == "t-1")
        #expect(echo.header("Content-Type") == "application/json")
        #expect(echo.header("Authorization") == nil)
        #expect(echo.header("Cookie") == nil)
        #expect(echo.header("X-API-Key") == nil)
        #expect(response.url?.host == other.host)
        #expect(response.request.url?.host == other.host)
        #expect(adapted.value == 2)
        #expect(asked.values == [503])
        #expect(seen.value == 1, "the redirected answer went through validation")
        #expect(transport.sent.count == 2)

        // The redirected answer goes through the error handler too.
        let failing = ConnectMiddleware(retriers: [
            Self.redirectingOnce(to: HTTPBin.baseURL.appendingPathComponent("status/404"))
        ])
        let error = await connectError(Self.connect(middleware: failing).request(Call(endpoint: "/status/503")))
        #expect(error?.statusCode == 404)
    }

    @Test func aRetrierRedirectToTheSameOriginKeepsCredentialsAndOneToFTPIsRefused() async throws {
        let middleware = ConnectMiddleware(retriers: [
            ClosureRetrier { attempt in
                guard attempt.number == 1 else { return .doNotRetry }
                return .redirect(to: HTTPBin.baseURL.appendingPathComponent("anything/mirror"))
            }
        ])
        let connect = Self.connect(middleware: middleware)
        let echo = try await connect.request(
            Call(endpoint: "/status/500", authorizationToken: .bearer(token: "same-origin"))
        ).decoded(toType: Echo.self).value
        #expect(echo.header("Authorization") == "Bearer same-origin")
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/mirror")

        let transport = CountingTransport()
        let ftp = Self.connect(
            middleware: ConnectMiddleware(retriers: [
                ClosureRetrier { _ in .redirect(to: URL(string: "ftp://127.0.0.1/mirror")!) }
            ]), transport: transport)
        let error = await connectError(ftp.request(Call(endpoint: "/status/503")))
        guard case .invalidRequest(.unsupportedURL)? = error else {
            Issue.record("expected unsupportedURL, got \(String(describing: error))")
            return
        }
        #expect(transport.sent.count == 1)
    }

    // MARK: RestBird: pre-middlewares (logging, signing)

    /// A checksum of the body, as a signing adapter would compute it.
    static func signature(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    @Test func preMiddlewaresSeeTheBuiltRequestInOrderAndCanSignItsBody() async throws {
        let logged = Recorder<String>()
        let middleware = ConnectMiddleware(adapters: [
            ClosureAdapter { request in
                logged.append(
                    "\(request.httpMethod ?? "?") \(request.url?.absoluteString ?? "") "
                        + "\(request.value(forHTTPHeaderField: "Authorization") ?? "-")")
                return request
            },
            ClosureAdapter { request in
                var request = request
                guard let body = request.httpBody else { throw Failure(code: "no body to sign") }
                request.setValue(Self.signature(body), forHTTPHeaderField: "X-Signature")
                request.setValue(String(body.count), forHTTPHeaderField: "X-Body-Length")
                return request
            },
            ClosureAdapter { request in
                // A later adapter sees what the earlier one did.
                var request = request
                let signature = request.value(forHTTPHeaderField: "X-Signature") ?? "none"
                request.setValue(signature, forHTTPHeaderField: "X-Checked-Signature")
                return request
            },
        ])
        let connect = Self.connect(middleware: middleware)
        let bodies: [(String, ParametersRepresentable)] = [
            ("json", Parameter.jsonObject(value: ["amount": 10])),
            ("form", CompositeParameters(.form(key: "a", value: "1 2"), .form(key: "b", value: "&"))),
            ("data", Parameter.data(Data("<x/>".utf8), contentType: "application/xml")),
        ]
        for (name, parameters) in bodies {
            let call = Call(
                endpoint: "/anything/{kind}", method: .post,
                parameters: CompositeParameters([Parameter.path(key: "kind", value: name), parameters]),
                authorizationToken: .bearer(token: "tok"))
            let echo = try await connect.request(call).decoded(toType: Echo.self).value
            #expect(echo.header("X-Signature") == echo.header("X-Checked-Signature"), "\(name): \(echo.headers)")
            #expect(echo.header("X-Body-Length") == echo.header("Content-Length"), "\(name): \(echo.headers)")
            if let data = echo.data, !data.isEmpty {
                #expect(echo.header("X-Signature") == Self.signature(Data(data.utf8)), "\(name)")
            } else {
                #expect(echo.form == ["a": .one("1 2"), "b": .one("&")], "\(name)")
            }
        }
        #expect(logged.count == 3)
        #expect(
            logged.values.first
                == "POST \(HTTPBin.baseURL.absoluteString)/anything/json Bearer tok",
            "the adapter sees the request as built, the token set")
    }

    // MARK: RestBird: post-middlewares (error mapping)

    @Test func postMiddlewaresMapErrorsBeforeTheErrorHandlerAndCanAcceptAStatus() async throws {
        struct QuotaExceeded: Error {}
        struct CountingHandler: ErrorHandlerProtocol {
            let calls: Counter
            func handle(response: [String: Any]) -> Error? {
                calls.increment()
                return Failure(code: "handler")
            }
        }
        let handled = Counter()
        let validated = Counter()
        let connect = Self.connect(
            middleware: ConnectMiddleware(interceptors: [
                ClosureInterceptor { response in
                    if response.statusCode == 429 { throw QuotaExceeded() }
                    if response.statusCode == 404 { return .accept }
                    return .proceed
                }
            ]), errorHandler: CountingHandler(calls: handled)
        ) { $0.validators = [ResponseValidator { _ in validated.increment() }] }

        let quota = await failure(connect.request(Call(endpoint: "/status/429")))
        #expect(quota is QuotaExceeded, "\(String(describing: quota))")
        #expect(handled.value == 0)

        let accepted = try await connect.response(Call(endpoint: "/status/404")).value
        #expect(accepted.statusCode == 404)
        #expect(validated.value == 1, "validators still check an accepted response")

        let other = await failure(connect.request(Call(endpoint: "/status/500")))
        #expect(other as? Failure == Failure(code: "handler"))
        #expect(handled.value == 1)
    }

    // MARK: Endpoints: encode every call, parse every response

    /// An adapter appends the API key to every call; the key reaches the server next to the
    /// call's own query, and debug output never shows it.
    @Test func anAdapterAddsAnAPIKeyToEveryCallAndDebugOutputHidesIt() async throws {
        let logger = CapturingLogger()
        let appendKey = ClosureAdapter { request in
            var request = request
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return request }
            components.percentEncodedQueryItems =
                (components.percentEncodedQueryItems ?? []) + [URLQueryItem(name: "api_key", value: "dc6zaTOxFJmzC")]
            request.url = components.url
            return request
        }
        let connect = Self.connect(middleware: ConnectMiddleware(adapters: [appendKey])) { $0.logger = logger }
        let call = Call(
            endpoint: "/anything/gifs/random",
            parameters: CompositeParameters(.query(key: "tag", value: "cat & dog"), .query(key: "tag", value: "a+b")))
        let echo = try await connect.request(call, debugResponse: true).decoded(toType: Echo.self).value
        #expect(echo.args["tag"] == .many(["cat & dog", "a+b"]))
        #expect(echo.args["api_key"] == .one("dc6zaTOxFJmzC"))
        #expect(logger.text.contains("api_key"), "\(logger.text)")
        #expect(!logger.text.contains("dc6zaTOxFJmzC"), "\(logger.text)")
    }

    /// Endpoints' response parsers: a parser per type, in `map` — what it throws reaches the
    /// observer unchanged; `decoded` and `decodedIfPresent` carry the response on failure.
    @Test func responseParsersPerType() async throws {
        let connect = Self.connect()
        let call = Self.body(#"{"data":{"images":[{"url":"https://x/1.gif"}]}}"#)
        let url = try await connect.request(call)
            .map { data -> URL in
                guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let data = object["data"] as? [String: Any], let images = data["images"] as? [[String: Any]],
                    let first = images.first?["url"] as? String, let url = URL(string: first)
                else { throw Failure(code: "unparsable") }
                return url
            }.value
        #expect(url.absoluteString == "https://x/1.gif")

        let thrown = await failure(connect.request(Self.body("[]")).map { _ -> Int in throw Failure(code: "mine") })
        #expect(thrown as? Failure == Failure(code: "mine"))

        let absent = try await connect.request(call).decodedIfPresent(toType: String.self, keyPath: "data.title").value
        #expect(absent == nil)
        let wrong = await connectError(connect.request(call).decoded(toType: Int.self, keyPath: "data.images.0.url"))
        guard let failure = decodingFailure(wrong) else { return }
        #expect(failure.keyPath == "data.images.0.url")
        #expect(wrong?.statusCode == 200)
    }

    // MARK: Endpoints: debug mode

    @Test func debugModeLogsTheTrafficButNoSecretsAndIsOffUnlessAsked() async throws {
        let logger = CapturingLogger()
        let authenticator = TokenAuthenticator(
            token: AccessToken("hook-secret-1"), header: { HTTPHeader(name: "X-Access", value: $0.value) },
            refresh: { _ in AccessToken("hook-secret-2") })
        let connect = Self.connect(middleware: authenticator) { $0.logger = logger }

        struct Login: Encodable {
            let username: String
            let password: String
            let devices: [[String: String]]
        }
        let login = Login(username: "ada", password: "json-secret-1", devices: [["refresh_token": "json-secret-2"]])
        let call = Call(
            endpoint: "/anything/login", method: .post,
            parameters: CompositeParameters(
                .query(key: "client_secret", value: "query-secret-1"), .jsonObject(value: login)),
            authorizationToken: .basic(username: "ada", password: "basic-secret-1"))
        _ = try await connect.request(call).value
        #expect(logger.messages.isEmpty, "debug output is off unless a request asks for it")
        _ = await outcome(connect.request(Call(endpoint: "/status/500")))
        #expect(logger.messages.isEmpty, "also for failures")

        let echo = try await connect.request(call, debugResponse: true).decoded(toType: Echo.self).value
        #expect(echo.header("X-Access") == "hook-secret-1")
        let text = logger.text
        #expect(text.contains("curl"))
        #expect(text.contains("/anything/login"))
        #expect(text.contains("200"))
        #expect(text.contains("ada"), "what is not secret is shown: \(text)")
        for secret in ["hook-secret-1", "json-secret-1", "json-secret-2", "query-secret-1", "basic-secret-1"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        let basic = Data("ada:basic-secret-1".utf8).base64EncodedString()
        #expect(!text.contains(basic), "the Basic credentials, encoded: \(text)")

        let form = Call(
            endpoint: "/anything/token", method: .post,
            parameters: CompositeParameters(
                .form(key: "grant_type", value: "password"), .form(key: "password", value: "form-secret-1")))
        _ = try await connect.request(form, debugResponse: true).value
        #expect(!logger.text.contains("form-secret-1"), "\(logger.text)")
    }
}

extension SeedCapabilityTests {

    // MARK: The seeds' capabilities on every kind of request

    /// Uploads run through the same validators, typed error bodies and endpoint decoders.
    @Test func uploadsAreValidatedAndTheirErrorBodiesTypedWithTheEndpointsDecoder() async throws {
        struct Failure: Decodable, Error {
            let errorCode: String
        }
        struct Envelope: Decodable, Sendable {
            let files: [String: String]
        }
        let snake = JSONDecoder()
        snake.keyDecodingStrategy = .convertFromSnakeCase
        let seen = Recorder<String>()
        let connect = Self.connect(errorHandler: DecodingErrorHandler(Failure.self)) { configuration in
            configuration.validators = [
                .requiredJSONKeys(["files.avatar", "form.caption"]),
                .basicResponse(Envelope.self) { seen.append($0.files["avatar"] ?? "none") },
            ]
        }
        let avatar = File(name: "a.txt", key: "avatar", mimeType: .txt, data: Data("hello".utf8))
        var call = Call(endpoint: "/post", method: .post, parameters: Parameter.form(key: "caption", value: "hi"))
        _ = try await connect.upload(files: [avatar], to: call).value
        #expect(seen.values == ["hello"])

        call.validators = [.requiredJSONKeys(["files.missing"])]
        let missing = await connectError(connect.upload(files: [avatar], to: call))
        #expect((missing?.underlyingError as? MissingJSONKeys)?.keys == ["files.missing"])

        // An error body: /response-headers answers its query as a JSON object; 200 is left out of
        // the range, and the endpoint's decoder reads `error_code`.
        var failing = Call(
            endpoint: "/response-headers", method: .post, parameters: Parameter.query(key: "error_code", value: "E7"),
            acceptableStatusCodes: 201..<300)
        failing.jsonDecoder = snake
        let error = await failure(connect.upload(files: [avatar], to: failing))
        #expect((error as? Failure)?.errorCode == "E7", "\(String(describing: error))")
    }

    /// An error handler that accepts a response hands it to the validators, on every route.
    @Test(arguments: Route.allCases)
    func anErrorHandlerThatAcceptsAResponseHandsItToTheValidators(route: Route) async throws {
        struct Lenient: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { nil }
        }
        let validated = Counter()
        let connect = Self.connect(route, errorHandler: Lenient()) { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    validated.increment()
                    if response.statusCode == 404 { throw Failure(code: "still a 404") }
                }
            ]
        }
        let error = await connectError(connect.request(Call(endpoint: "/status/404")))
        #expect(error?.underlyingError as? Failure == Failure(code: "still a 404"), "\(String(describing: error))")
        #expect(validated.value == 1)
        _ = try await connect.request(Call(endpoint: "/status/418")).value
        #expect(validated.value == 2)
    }

    /// Key paths look up object keys that are numbers too, as a JSON object's keys are strings.
    @Test func requiredJSONKeysFindNumericObjectKeys() async throws {
        let connect = Self.connect { $0.validators = [.requiredJSONKeys(["years.2024.total", "years.7"])] }
        _ = try await connect.request(Self.body(#"{"years":{"2024":{"total":3},"7":null}}"#)).value
        let total = try await connect.request(Self.body(#"{"years":{"2024":{"total":3},"7":null}}"#))
            .decoded(toType: Int.self, keyPath: "years.2024.total").value
        #expect(total == 3)
    }

    /// A retrier that keeps sending the request elsewhere cannot loop: at most 20 sends.
    @Test func aRetrierRedirectLoopEndsAfterTwentySends() async throws {
        let transport = CountingTransport()
        let target = HTTPBin.baseURL.appendingPathComponent("status/503")
        let connect = Self.connect(
            middleware: ConnectMiddleware(retriers: [ClosureRetrier { _ in .redirect(to: target) }]),
            transport: transport)
        let error = await connectError(connect.request(Call(endpoint: "/status/503")))
        #expect(error?.statusCode == 503)
        #expect(transport.sent.count == 20)
    }

    /// The token hook's header, and an adapter's API key, are credentials on a retrier's redirect
    /// too.
    @Test func aRetrierRedirectElsewhereDropsTheTokenHooksHeader() async throws {
        let other = HTTPBin.otherOriginURL.appendingPathComponent("anything/mirror")
        let authenticator = TokenAuthenticator(
            token: AccessToken("hook-1"), header: { HTTPHeader(name: "X-Session", value: $0.value) },
            refresh: { _ in AccessToken("hook-2") })
        let retrier = ConnectMiddleware(retriers: [
            Self.redirectingOnce(to: other)
        ])
        let connect = Self.connect(middleware: ConnectMiddleware([authenticator, retrier]))
        let echo = try await connect.request(Call(endpoint: "/status/503")).decoded(toType: Echo.self).value
        #expect(echo.url == other.absoluteString)
        #expect(echo.header("X-Session") == nil)
        #expect(await authenticator.refreshCount == 0)
    }

    /// A body is decoded with the decoder of the endpoint it came from, from a `Response` and
    /// after a `flatRecover` too.
    @Test func anEndpointsDecoderAppliesToItsResponseAndAfterFlatRecover() async throws {
        struct Stamped: Decodable, Sendable {
            let at: Date
        }
        let connect = Self.connect { $0.jsonDecoder.dateDecodingStrategy = .iso8601 }
        @Sendable func legacy() -> Call {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            var call = Self.body(#"{"at":1700000000}"#)
            call.jsonDecoder = decoder
            return call
        }
        let fromResponse = try await connect.response(legacy()).decoded(toType: Stamped.self).value
        #expect(fromResponse.at == Date(timeIntervalSince1970: 1_700_000_000))
        let recovered = try await connect.request(Call(endpoint: "/status/500"))
            .flatRecover { _ in connect.request(legacy()) }
            .decoded(toType: Stamped.self).value
        #expect(recovered.at == Date(timeIntervalSince1970: 1_700_000_000))
    }

    /// Endpoints' debug mode shows the traffic as sent — what the adapters added included — and
    /// an error's description never shows the API key they added.
    @Test func debugOutputShowsWhatAdaptersAddedAndErrorsHideTheirAPIKey() async throws {
        let logger = CapturingLogger()
        let adapter = ClosureAdapter { request in
            var request = request
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return request }
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "api_key", value: "k-secret-5")]
            request.url = components.url
            request.setValue("rid-visible", forHTTPHeaderField: "X-Request-Id")
            return request
        }
        let connect = Self.connect(middleware: ConnectMiddleware(adapters: [adapter])) { $0.logger = logger }
        let error = await connectError(connect.request(Call(endpoint: "/status/500"), debugResponse: true))
        #expect(error?.statusCode == 500)
        let description = error.map { "\($0) \($0.localizedDescription)" } ?? ""
        #expect(!description.contains("k-secret-5"), "\(description)")
        #expect(logger.text.contains("X-Request-Id"), "\(logger.text)")
        #expect(logger.text.contains("rid-visible"), "\(logger.text)")
        #expect(!logger.text.contains("k-secret-5"), "\(logger.text)")
    }
}

extension SeedCapabilityTests {

    /// A connector's `.header(name:value:)` token is a credential on a retrier's redirect too.
    @Test func aRetrierRedirectElsewhereDropsAHeaderTokenOfAnyName() async throws {
        let other = HTTPBin.otherOriginURL.appendingPathComponent("anything/mirror")
        let connect = Self.connect(
            middleware: ConnectMiddleware(retriers: [
                Self.redirectingOnce(to: other)
            ]))
        let call = Call(
            endpoint: "/status/503", headers: [HTTPHeader(name: "X-Plain", value: "kept")],
            authorizationToken: .header(name: "X-Tenant", value: "tenant-secret-9"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == other.absoluteString)
        #expect(echo.header("X-Tenant") == nil)
        #expect(echo.header("X-Plain") == "kept")
    }

    /// Error descriptions never show the secrets of the URLs they name, whatever the stage.
    @Test func errorDescriptionsOfEveryStageHideURLSecrets() async throws {
        var descriptions: [String] = []
        let toFTP = ClosureAdapter { request in
            var request = request
            request.url = URL(string: "ftp://ada:url-secret-1@127.0.0.1/x?api_key=url-secret-2")
            return request
        }
        let refused = await connectError(
            Self.connect(middleware: ConnectMiddleware(adapters: [toFTP])).request(Call(endpoint: "/anything")))
        descriptions.append(refused.map { "\($0)" } ?? "no error")

        var slow = Call(endpoint: "/delay/5", parameters: Parameter.query(key: "api_key", value: "url-secret-3"))
        slow.timeoutInterval = 1
        let timedOut = await connectError(Self.connect().request(slow))
        descriptions.append(timedOut.map { "\($0) \($0.localizedDescription)" } ?? "no error")

        let redirected = await connectError(
            Self.connect { $0.redirectPolicy = .follow(maximumHops: 1) }.request(
                Call(
                    endpoint: "/redirect-to",
                    parameters: Parameter.query(
                        key: "url", value: "/redirect-to?url=%2Fanything%23access_token%3Durl-secret-4"))))
        descriptions.append(redirected.map { "\($0)" } ?? "no error")

        for description in descriptions {
            #expect(!description.contains("url-secret"), "\(description)")
        }
    }
}

extension SeedCapabilityTests {

    /// Debug mode and validators look into bodies; a deeply nested one must not bring the process
    /// down.
    @Test(arguments: [1_000, 20_000])
    func deeplyNestedBodiesDoNotCrashDebugModeOrValidators(depth: Int) async throws {
        let logger = CapturingLogger()
        let nested = String(repeating: #"{"a":["#, count: depth) + String(repeating: "]}", count: depth)
        let connect = Self.connect(middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }])) {
            $0.logger = logger
            $0.validators = [.requiredJSONKeys(["a.0.a.0.password"])]
        }
        let call = Call(
            endpoint: "/anything", method: .post,
            parameters: Parameter.data(Data(nested.utf8), contentType: "text/plain"))
        let result = await outcome(connect.request(call, debugResponse: true))
        if case .failure(let error) = result {
            #expect(error is ConnectError, "\(error)")
        }
        #expect(logger.text.contains("curl"))
    }
}

extension SeedCapabilityTests {

    /// Decree's handler sends the same request elsewhere also when the first server could not be
    /// reached, and an upload goes with its whole body; a relative URL is refused.
    @Test func aRetrierRedirectAfterATransportErrorAndForAnUpload() async throws {
        let other = HTTPBin.otherOriginURL.appendingPathComponent("anything/mirror")
        let connect = Self.connect(
            middleware: ConnectMiddleware(retriers: [
                Self.redirectingOnce(to: other)
            ]))
        var unreachable = Call(
            endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: ["n": 1]),
            authorizationToken: .bearer(token: "b-secret"))
        unreachable.baseURL = URL(string: "http://127.0.0.1:9")!
        let echo = try await connect.request(unreachable).decoded(toType: Echo.self).value
        #expect(echo.url == other.absoluteString)
        #expect(echo.json == .object(["n": .number(1)]))
        #expect(echo.header("Authorization") == nil)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fileURL = directory.appendingPathComponent("notes.txt")
        try Data("from disk".utf8).write(to: fileURL)
        let files = [
            File(name: "a.txt", key: "memory", mimeType: .txt, data: Data("in memory".utf8)),
            File(key: "disk", fileURL: fileURL),
        ]
        let upload = Call(
            endpoint: "/status/503", method: .post, parameters: Parameter.form(key: "caption", value: "hi"),
            authorizationToken: .bearer(token: "b-secret"))
        let uploaded = try await connect.upload(files: files, to: upload).decoded(toType: Echo.self).value
        #expect(uploaded.url == other.absoluteString)
        #expect(uploaded.files == ["memory": .one("in memory"), "disk": .one("from disk")])
        #expect(uploaded.form == ["caption": .one("hi")])
        #expect(uploaded.header("Authorization") == nil)

        let transport = CountingTransport()
        let relative = Self.connect(
            middleware: ConnectMiddleware(retriers: [ClosureRetrier { _ in .redirect(to: URL(string: "/anything")!) }]),
            transport: transport)
        let error = await connectError(relative.request(Call(endpoint: "/status/503")))
        guard case .invalidRequest(.unsupportedURL)? = error else {
            Issue.record("expected unsupportedURL, got \(String(describing: error))")
            return
        }
        #expect(transport.sent.count == 1)
    }
}

extension SeedCapabilityTests {

    /// The server spells header names its own way (httpbin title-cases them): a token header
    /// named in lower case is still redacted where the echo names it.
    @Test func tokenHeadersNamedInLowerCaseAreRedactedInTheirEcho() async throws {
        let logger = CapturingLogger()
        let authenticator = TokenAuthenticator(
            token: AccessToken("hook-secret-7"), header: { HTTPHeader(name: "x-session-ref", value: $0.value) },
            refresh: { _ in AccessToken("hook-secret-8") })
        let connect = Self.connect(middleware: authenticator) { $0.logger = logger }
        let call = Call(
            endpoint: "/anything", authorizationToken: .header(name: "x-tenant-ref", value: "tenant-secret-7"))
        let echo = try await connect.request(call, debugResponse: true).decoded(toType: Echo.self).value
        #expect(echo.header("X-Session-Ref") == "hook-secret-7")
        #expect(echo.header("X-Tenant-Ref") == "tenant-secret-7")
        #expect(!logger.text.contains("hook-secret-7"), "\(logger.text)")
        #expect(!logger.text.contains("tenant-secret-7"), "\(logger.text)")
    }

    /// A connector picks its middleware: `.none` sends no token, `.only` runs its own alone.
    @Test func aConnectorChoosesItsMiddleware() async throws {
        let authenticator = TokenAuthenticator(token: AccessToken("tok-1"), refresh: { _ in AccessToken("tok-2") })
        let connect = Self.connect(middleware: authenticator)
        var login = Call(endpoint: "/anything/login")
        login.middleware = .none
        #expect(try await connect.request(login).decoded(toType: Echo.self).value.header("Authorization") == nil)

        struct Teapot: Error {}
        var own = Call(endpoint: "/status/418")
        own.middleware = .only([
            ConnectMiddleware(interceptors: [
                ClosureInterceptor { response in
                    #expect(response.request.value(forHTTPHeaderField: "Authorization") == nil)
                    throw Teapot()
                }
            ])
        ])
        #expect(await failure(connect.request(own)) is Teapot)

        var added = Call(endpoint: "/status/418")
        added.middleware = .adding([ConnectMiddleware(interceptors: [ClosureInterceptor { _ in .accept }])])
        let response = try await connect.response(added).value
        #expect(response.statusCode == 418)
        #expect(response.request.value(forHTTPHeaderField: "Authorization") == "Bearer tok-1")
    }
}

extension SeedCapabilityTests {

    /// Cancelling a request that waits for the token hook ends it at once with `.cancelled`,
    /// sends nothing, and leaves the refresh to finish for the next request.
    @Test func cancellingARequestWaitingForTheTokenHookSendsNothing() async throws {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let authenticator = TokenAuthenticator(
            token: nil,
            refresh: { _ in
                startedContinuation.yield()
                for await _ in release { break }
                return AccessToken("late-token")
            })
        let transport = CountingTransport()
        let connect = Self.connect(middleware: authenticator, transport: transport)
        let future = connect.request(Call(endpoint: "/anything"))
        for await _ in started { break }
        future.cancel()
        let error = await withTaskGroup(of: ConnectError?.self) { group in
            group.addTask { await connectError(future) }
            group.addTask {
                try? await Task.sleep(nanoseconds: 10_000_000_000)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            releaseContinuation.yield()
            return first
        }
        #expect(error?.isCancellation == true, "\(String(describing: error))")
        let echo = try await connect.request(Call(endpoint: "/anything")).decoded(toType: Echo.self).value
        #expect(echo.header("Authorization") == "Bearer late-token")
        #expect(transport.sent.count == 1, "\(transport.sent.values)")
    }
}

extension SeedCapabilityTests {

    /// Indexes that are not array positions are missing keys, not crashes.
    @Test func oddArrayIndexesAreMissingNotACrash() async throws {
        let keys = ["items.-1", "items.+1", "items.9223372036854775808", "items.2", "items. 0"]
        let connect = Self.connect { $0.validators = [.requiredJSONKeys(keys)] }
        let error = await connectError(connect.request(Self.body(#"{"items":[1,2]}"#)))
        let missing = (error?.underlyingError as? MissingJSONKeys)?.keys ?? []
        #expect(missing.contains("items.-1") && missing.contains("items.2"), "\(missing)")
        for key in keys {
            let result = await outcome(
                Self.connect().request(Self.body(#"{"items":[1,2]}"#)).decodedIfPresent(toType: Int.self, keyPath: key))
            if case .success(let value) = result, key != "items.+1" {
                #expect(value == nil, "\(key)")
            }
        }
    }
}
