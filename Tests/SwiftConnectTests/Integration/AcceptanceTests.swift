import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Black-box acceptance tests, written from the public documents only (the original SwiftConnect
/// usage document, Usage.md, README.md and the design's contracts), against httpbin on loopback.
/// Each test uses the documented call shapes and checks what the server received or what the
/// caller observes.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct AcceptanceTests {

    // MARK: Fixtures

    /// httpbin's echo and its values: the integration tests' own (HTTPBin.swift).
    typealias Strings = StringOrStrings
    typealias JSON = JSONValue

    struct Todo: Codable, Sendable, Equatable {
        let userId: Int
        let id: Int
        let title: String
        let completed: Bool
    }

    /// The seed document's `TodoConnector`, pointed at httpbin.
    enum TodoConnector: Connector {
        case get(id: Int)

        var baseURL: URL {
            return HTTPBin.baseURL
        }

        var endpoint: String {
            switch self {
            case .get:
                return "/anything/todos/{id}"
            }
        }

        var method: HTTPMethod {
            switch self {
            case .get:
                return .get
            }
        }

        var headers: [HTTPHeader] {
            return []
        }

        var parameters: ParametersRepresentable? {
            switch self {
            case .get(let id):
                return Parameter.path(key: "id", value: "\(id)")
            }
        }
    }

    enum TodoAction: String {
        case update
    }

    /// The seed document's `AdvancedTodoConnector`, pointed at httpbin.
    enum AdvancedTodoConnector: Connector {
        case update(userId: Int, todoId: Int, action: TodoAction, object: Encodable)

        var baseURL: URL {
            return HTTPBin.baseURL.appendingPathComponent("anything")
        }

        var endpoint: String {
            switch self {
            case .update:
                return "/users/{userId}/todos/{todoId}"
            }
        }

        var method: HTTPMethod {
            switch self {
            case .update:
                return .put
            }
        }

        var headers: [HTTPHeader] {
            return []
        }

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

    /// A connector for one-off calls.
    struct Call: Connector, AuthorizedConnector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var parameters: ParametersRepresentable? = nil
        var authorizationToken: AuthorizationToken? = nil
        var acceptableStatusCodes: Range<Int> = 200..<300
    }

    static func connect(
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(), logger: CapturingLogger? = nil,
        configure: (inout ConnectConfiguration) -> Void = { _ in }
    ) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "acceptance.callbacks")
        configuration.timeoutInterval = 20
        if let logger { configuration.logger = logger }
        configure(&configuration)
        return Connect(middleware: ConnectMiddleware(), errorHandler: errorHandler, configuration: configuration)
    }

    let connect = AcceptanceTests.connect()

    /// For the upload-inspection route's `content_type`, `transfer_encoding`, … keys.
    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    /// A session that neither stores nor sends cookies: URLSession's shared cookie store would
    /// otherwise replace a `Cookie` header with cookies other tests received (on Linux it matches
    /// cookies by host only).
    static func withoutCookieStore(_ configuration: inout ConnectConfiguration) {
        let session = URLSessionConfiguration.default
        session.httpCookieStorage = nil
        session.httpShouldSetCookies = false
        configuration.sessionConfiguration = session
    }

    /// The result a future delivers to `observe`.
    func outcome<Value>(_ future: SwiftConnect.Future<Value>) async -> Result<Value, any Error> {
        await withCheckedContinuation { continuation in
            future.observe { result in continuation.resume(returning: result) }
        }
    }

    func connectError<Value>(_ future: SwiftConnect.Future<Value>) async -> ConnectError? {
        await expectConnectError(future)
    }

    // MARK: The seed document's examples

    @Test func seedTodoConnectorFillsItsPathSlotAndObserveDeliversTheDecodedValue() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        let result = await withCheckedContinuation { continuation in
            connect.request(TodoConnector.get(id: 123), debugResponse: true).decoded(toType: Echo.self).observe {
                result in
                switch result {
                case .success(let echo):
                    continuation.resume(returning: Result<Echo, any Error>.success(echo))
                case .failure(let error):
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        let echo = try result.get()
        #expect(echo.method == "GET")
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/todos/123")
        #expect(logger.text.contains("curl"))
        #expect(logger.text.contains("/anything/todos/123"))
    }

    @Test func seedAdvancedTodoConnectorSendsPutWithPathsQueryAndJSONBody() async throws {
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)
        let call = AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo)
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "PUT")
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/users/1/todos/2?action=update")
        #expect(echo.args == ["action": .one("update")])
        #expect(echo.header("Content-Type") == "application/json")
        #expect(
            echo.json
                == .object([
                    "userId": .number(2), "id": .number(1), "title": .string("Test Todo"), "completed": .bool(false),
                ]))
        let decoded = try await connect.request(call).decoded(toType: Todo.self, keyPath: "json").value
        #expect(decoded == todo)
    }

    /// Usage.md shows the cURL command `debugResponse: true` logs for the AdvancedTodoConnector.
    @Test func seedAdvancedTodoConnectorDebugOutputIsTheDocumentedCurlCommand() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)
        _ = try await connect.request(
            AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo), debugResponse: true
        ).value
        let text = logger.text
        #expect(text.contains("$ curl -v"))
        #expect(text.contains("-X PUT"))
        #expect(text.contains(#"-H "Content-Type: application/json""#))
        #expect(text.contains(#"-d "{\"completed\":false,\"id\":1,\"title\":\"Test Todo\",\"userId\":2}""#))
        #expect(text.contains(#""\#(HTTPBin.baseURL.absoluteString)/anything/users/1/todos/2?action=update""#))
    }

    @Test func seedConstructorsAndDefaultClientWork() async throws {
        let plain = Connect()
        let custom = Connect(middleware: ConnectMiddleware(), errorHandler: ErrorHandler())
        for client in [plain, custom, Connect.default] {
            let echo = try await client.request(TodoConnector.get(id: 7)).decoded(toType: Echo.self).value
            #expect(echo.url.hasSuffix("/anything/todos/7"))
        }
    }

    // MARK: Path parameters

    @Test func pathValueWithReservedCharactersFillsExactlyOneSegment() async throws {
        let value = "a/b?c#d e+f&g=h;ü"
        let call = Call(endpoint: "/anything/items/{name}/end", parameters: Parameter.path(key: "name", value: value))
        let response = try await connect.response(call).value
        let echo = try response.decoded(toType: Echo.self)
        #expect(echo.args.isEmpty)
        #expect(echo.url.removingPercentEncoding == HTTPBin.baseURL.absoluteString + "/anything/items/\(value)/end")
        // As sent: one segment between "items" and "end" that decodes to the value.
        let sent = try #require(connect.urlRequest(for: call).url)
        let segments = URLComponents(url: sent, resolvingAgainstBaseURL: false)!.percentEncodedPath
            .split(separator: "/", omittingEmptySubsequences: false)
        #expect(segments.count == 5)
        #expect(segments[3].removingPercentEncoding == value)
        #expect(segments[4] == "end")
        #expect(sent.query == nil)
        #expect(sent.fragment == nil)
    }

    /// The original encoded the URL again after each substitution: a `%` in the second value came out
    /// as `%2525`.
    @Test func multipleSlotsAreEachEncodedExactlyOnce() async throws {
        let call = Call(
            endpoint: "/anything/{first}/{second}/{third}",
            parameters: CompositeParameters(
                .path(key: "first", value: "50%off"),
                .path(key: "second", value: "50%off"),
                .path(key: "third", value: "x y")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/50%off/50%off/x%20y")
    }

    @Test func aValueLookingLikeASlotIsNotSubstitutedAgain() async throws {
        let call = Call(
            endpoint: "/anything/{first}/{second}",
            parameters: CompositeParameters(
                .path(key: "first", value: "{second}"),
                .path(key: "second", value: "2")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url.removingPercentEncoding == HTTPBin.baseURL.absoluteString + "/anything/{second}/2")
    }

    @Test func dotSegmentValuesAreRefusedAndDotsInAValueAreSent() async throws {
        let call = Call(
            endpoint: "/anything/a/{x}/b", parameters: Parameter.path(key: "x", value: ".."))
        let error = await connectError(connect.request(call))
        #expect(error == .invalidRequest(.dotSegmentPathValue(key: "x")))
        let dotted = Call(endpoint: "/anything/a/{x}/b", parameters: Parameter.path(key: "x", value: "..."))
        let echo = try await connect.request(dotted).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/anything/a/.../b"))
    }

    @Test func missingSlotValueAndUnusedValueFailBeforeAnythingIsSent() async throws {
        let sent = Counter()
        let transport = StubTransport { _ in
            sent.increment()
            return StubTransport.Reply(statusCode: 200, body: Data("{}".utf8))
        }
        let stubbed = Connect(transport: transport)
        let missing = Call(endpoint: "/anything/{id}/{other}", parameters: Parameter.path(key: "id", value: "1"))
        let unused = Call(endpoint: "/anything", parameters: Parameter.path(key: "id", value: "1"))
        let duplicate = Call(
            endpoint: "/anything/{id}",
            parameters: CompositeParameters(.path(key: "id", value: "1"), .path(key: "id", value: "2")))
        for call in [missing, unused, duplicate] {
            let error = await connectError(stubbed.request(call))
            guard case .invalidRequest? = error else {
                Issue.record("expected invalidRequest for \(call.endpoint), got \(String(describing: error))")
                continue
            }
            #expect(throws: ConnectError.self) { try stubbed.urlRequest(for: call) }
        }
        #expect(sent.value == 0)
    }

    @Test(arguments: ["/api/v1", "/api/v1/"])
    func baseURLPathIsKept(basePath: String) async throws {
        let base = URL(string: HTTPBin.baseURL.absoluteString + "/anything" + basePath)!
        let call = Call(baseURL: base, endpoint: "/todos/{id}", parameters: Parameter.path(key: "id", value: "3"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/api/v1/todos/3")
    }

    // MARK: Query parameters

    @Test func queryItemsKeepOrderRepeatsAndEveryCharacter() async throws {
        let call = Call(
            endpoint: "/anything?fixed=1",
            parameters: CompositeParameters(
                .query(key: "b", value: "2"),
                .query(key: "a", value: "1"),
                .query(key: "b", value: "3"),
                .query(key: "sum", value: "1+1=2"),
                .query(key: "k&y", value: "a&b;c"),
                .query(key: "p", value: "/?#% x"),
                .query(key: "name", value: "Zoë 日本")))
        let response = try await connect.response(call).value
        let echo = try response.decoded(toType: Echo.self)
        #expect(echo.args["fixed"] == .one("1"))
        #expect(echo.args["b"] == .many(["2", "3"]))
        #expect(echo.args["a"] == .one("1"))
        #expect(echo.args["sum"] == .one("1+1=2"))
        #expect(echo.args["k&y"] == .one("a&b;c"))
        #expect(echo.args["p"] == .one("/?#% x"))
        #expect(echo.args["name"] == .one("Zoë 日本"))
        // As sent (httpbin's echoed `url` quotes some of it again, so it is read from the request).
        let query = try #require(
            response.request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) })
        #expect(query.percentEncodedQuery?.hasPrefix("fixed=1&b=2&a=1&b=3&sum=1%2B1%3D2&k%26y=a%26b") == true)
        #expect(query.queryItems?.map(\.name) == ["fixed", "b", "a", "b", "sum", "k&y", "p", "name"])
    }

    @Test func customParametersRepresentableMixesWithBuiltInOnes() async throws {
        struct APIKey: ParametersRepresentable {
            let key: String

            func apply(to parameters: inout RequestParameters) throws {
                parameters.appendQueryItem(name: "api_key", value: key)
            }
        }
        let call = Call(
            endpoint: "/anything/search",
            parameters: CompositeParameters([APIKey(key: "k-123"), Parameter.query(key: "q", value: "swift & co")]))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args == ["api_key": .one("k-123"), "q": .one("swift & co")])
    }

    // MARK: Bodies

    @Test func formAndRawBodiesArriveParsed() async throws {
        let form = Call(
            endpoint: "/post", method: .post,
            parameters: CompositeParameters(
                .form(key: "username", value: "ann & co"), .form(key: "password", value: "p+w=d")))
        let formEcho = try await connect.request(form).decoded(toType: Echo.self).value
        #expect(formEcho.form == ["username": .one("ann & co"), "password": .one("p+w=d")])
        #expect(formEcho.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)

        let raw = Call(
            endpoint: "/anything", method: .post,
            parameters: Parameter.data(Data("<a>ü</a>".utf8), contentType: "application/xml"))
        let rawEcho = try await connect.request(raw).decoded(toType: Echo.self).value
        #expect(rawEcho.data == "<a>ü</a>")
        #expect(rawEcho.header("Content-Type") == "application/xml")
    }

    @Test func invalidRequestsAreTypedErrorsAndNothingIsSent() async throws {
        let sent = Counter()
        let stubbed = Connect(
            transport: StubTransport { _ in
                sent.increment()
                return StubTransport.Reply(statusCode: 200, body: Data())
            })
        let calls: [Call] = [
            Call(endpoint: "/get", headers: [HTTPHeader(name: "X-Evil", value: "a\r\nInjected: yes")]),
            Call(baseURL: URL(string: "ftp://127.0.0.1/")!, endpoint: "/x"),
            Call(endpoint: "/get", parameters: Parameter.jsonObject(value: ["a": 1])),
            Call(endpoint: "/post", method: .post, parameters: Parameter.jsonObject(value: ["x": Double.nan])),
            Call(
                endpoint: "/post", method: .post,
                parameters: CompositeParameters(.jsonObject(value: ["a": 1]), .form(key: "b", value: "2"))),
            Call(endpoint: "/get", authorizationToken: .basic(username: "a:b", password: "c")),
        ]
        for call in calls {
            let error = await connectError(stubbed.request(call))
            guard case .invalidRequest? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                continue
            }
        }
        #expect(sent.value == 0)
        let basic = await connectError(
            stubbed.request(Call(endpoint: "/get", authorizationToken: .basic(username: "a:b", password: "c"))))
        guard case .invalidRequest(let reason)? = basic else {
            Issue.record("expected invalidRequest, got \(String(describing: basic))")
            return
        }
        #expect(reason == .invalidBasicUsername)
    }

    // MARK: Headers

    @Test func headersArriveAndTheConnectorsReplaceDefaults() async throws {
        let connect = Self.connect { configuration in
            configuration.defaultHeaders = [.accept("text/plain"), HTTPHeader(name: "X-App", value: "demo")]
        }
        let call = Call(
            endpoint: "/anything",
            headers: [
                .accept("application/json"), HTTPHeader(name: "X-Trace", value: "first"),
                HTTPHeader(name: "x-trace", value: "last"),
            ])
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.header("Accept") == "application/json")
        #expect(echo.header("X-App") == "demo")
        #expect(echo.header("X-Trace") == "last")
    }

    @Test func responseGivesStatusAndCaseInsensitiveHeaders() async throws {
        let call = Call(
            endpoint: "/response-headers",
            parameters: CompositeParameters(.query(key: "X-Total-Count", value: "42")))
        let response = try await connect.response(call).value
        #expect(response.statusCode == 200)
        #expect(response.headers["x-total-count"] == "42")
        #expect(response.headers["X-Total-Count"] == "42")
        #expect(response.url?.path == "/response-headers")
    }

    // MARK: AuthorizedConnector

    @Test func bearerTokenIsSentAndAcceptedByTheServer() async throws {
        let call = Call(endpoint: "/bearer", authorizationToken: .bearer(token: "tok-123"))
        struct Bearer: Decodable, Sendable {
            let authenticated: Bool
            let token: String
        }
        let reply = try await connect.request(call).decoded(toType: Bearer.self).value
        #expect(reply.authenticated)
        #expect(reply.token == "tok-123")
    }

    @Test func basicTokenIsAcceptedByTheServer() async throws {
        struct Basic: Decodable, Sendable {
            let authenticated: Bool
            let user: String
        }
        let call = Call(
            endpoint: "/basic-auth/{user}/{password}",
            parameters: CompositeParameters(.path(key: "user", value: "ann"), .path(key: "password", value: "s3cr=t")),
            authorizationToken: .basic(username: "ann", password: "s3cr=t"))
        let reply = try await connect.request(call).decoded(toType: Basic.self).value
        #expect(reply.authenticated)
        #expect(reply.user == "ann")

        let wrong = Call(
            endpoint: "/basic-auth/ann/right", authorizationToken: .basic(username: "ann", password: "wrong"))
        let error = await connectError(connect.request(wrong))
        #expect(error?.statusCode == 401)
    }

    @Test func customAndHeaderTokensAndNilToken() async throws {
        let custom = try await connect.request(
            Call(endpoint: "/anything", authorizationToken: .custom(token: "Token abc"))
        ).decoded(toType: Echo.self).value
        #expect(custom.header("Authorization") == "Token abc")

        let header = try await connect.request(
            Call(endpoint: "/anything", authorizationToken: .header(name: "X-API-Key", value: "key-1"))
        ).decoded(toType: Echo.self).value
        #expect(header.header("X-API-Key") == "key-1")

        let none = try await connect.request(Call(endpoint: "/anything")).decoded(toType: Echo.self).value
        #expect(none.header("Authorization") == nil)

        let wins = try await connect.request(
            Call(
                endpoint: "/anything", headers: [.authorization(bearerToken: "from-headers")],
                authorizationToken: .bearer(token: "from-token"))
        ).decoded(toType: Echo.self).value
        #expect(wins.header("Authorization") == "Bearer from-token")
    }

    // MARK: Decoding

    @Test func decodedWithKeyPathsAndDecodedIfPresent() async throws {
        struct Item: Decodable, Sendable, Equatable {
            let name: String
        }
        let body: [String: [String: [[String: String]]]] = ["data": ["items": [["name": "a"], ["name": "b"]]]]
        let call = Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: body))
        let second = try await connect.request(call).decoded(toType: Item.self, keyPath: "json.data.items.1").value
        #expect(second == Item(name: "b"))
        let all = try await connect.request(call).decoded(toType: [Item].self, keyPath: "json.data.items").value
        #expect(all == [Item(name: "a"), Item(name: "b")])
        let missing = try await connect.request(call).decodedIfPresent(toType: Item.self, keyPath: "json.nothing")
            .value
        #expect(missing == nil)
        let pastEnd = try await connect.request(call).decodedIfPresent(toType: Item.self, keyPath: "json.data.items.5")
            .value
        #expect(pastEnd == nil)
        let null = try await connect.request(Call(endpoint: "/anything")).decoded(toType: Int?.self, keyPath: "json")
            .value
        #expect(null == nil)
    }

    @Test func decodingErrorCarriesKeyPathAndResponse() async throws {
        let call = Call(endpoint: "/anything")
        let error = await connectError(connect.request(call).decoded(toType: Todo.self, keyPath: "args"))
        guard let failure = decodingFailure(error) else { return }
        #expect(failure.keyPath == "args")
        #expect(error?.statusCode == 200)
        #expect(error?.responseBody?.isEmpty == false)
    }

    @Test func emptySuccessDecodesToEmptyAndAModelFails() async throws {
        let call = Call(endpoint: "/status/204")
        _ = try await connect.request(call).decoded(toType: Empty.self).value
        let error = await connectError(connect.request(call).decoded(toType: Todo.self))
        guard decodingFailure(error) != nil else { return }
        #expect(error?.statusCode == 204)
    }

    // MARK: ErrorHandler

    /// httpbin's `/response-headers` answers its query as a JSON object; an acceptable range
    /// that leaves out 200 makes that body an error body.
    func errorBody(_ items: [(String, String)]) -> Call {
        Call(
            endpoint: "/response-headers",
            parameters: CompositeParameters(items.map { Parameter.query(key: $0.0, value: $0.1) }),
            acceptableStatusCodes: 201..<300)
    }

    @Test func defaultErrorHandlerReadsTheServersMessage() async throws {
        let cases: [([(String, String)], String)] = [
            ([("msg", "first"), ("message", "second")], "first"),
            ([("message", "from message")], "from message"),
            ([("messge", "typo kept")], "typo kept"),
            ([("error", "from error")], "from error"),
            ([("err", "from err")], "from err"),
        ]
        for (items, expected) in cases {
            let error = await connectError(connect.request(errorBody(items)))
            guard case .unacceptableStatus(let response, let message)? = error else {
                Issue.record("expected unacceptableStatus, got \(String(describing: error))")
                continue
            }
            #expect(message == expected)
            #expect(response.statusCode == 200)
            #expect(error?.responseBody?.isEmpty == false)
        }
    }

    @Test func errorStatusWithoutJSONStillGivesUnacceptableStatus() async throws {
        for status in [404, 500] {
            let error = await connectError(
                connect.request(
                    Call(endpoint: "/status/{code}", parameters: Parameter.path(key: "code", value: "\(status)"))))
            guard case .unacceptableStatus(let response, _)? = error else {
                Issue.record("expected unacceptableStatus, got \(String(describing: error))")
                continue
            }
            #expect(response.statusCode == status)
            #expect(error?.statusCode == status)
            #expect(error?.isCancellation == false)
        }
    }

    @Test func errorHandlerWithMessageKeys() async throws {
        let connect = Self.connect(errorHandler: ErrorHandler(messageKeys: ["detail", "title"]))
        let error = await connectError(connect.request(errorBody([("title", "T"), ("detail", "D")])))
        guard case .unacceptableStatus(_, let message)? = error else {
            Issue.record("expected unacceptableStatus, got \(String(describing: error))")
            return
        }
        #expect(message == "D")
    }

    /// The seed's `ErrorHandlerProtocol`: one requirement, `handle(response:)`.
    @Test func customErrorHandlerErrorReachesObserversUnchangedAndNilMeansSuccess() async throws {
        struct ServerSaid: Error, Equatable {
            let text: String
        }
        struct SeedHandler: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? {
                if response["accept"] as? String == "yes" { return nil }
                return ServerSaid(text: response["msg"] as? String ?? "nothing")
            }
        }
        let connect = Self.connect(errorHandler: SeedHandler())
        let result = await outcome(connect.request(errorBody([("msg", "custom")])))
        guard case .failure(let error) = result else {
            Issue.record("expected failure, got \(result)")
            return
        }
        #expect(error as? ServerSaid == ServerSaid(text: "custom"))

        let accepted = try await connect.request(errorBody([("accept", "yes")])).decoded(toType: [String: String].self)
            .value
        #expect(accepted["accept"] == "yes")
    }

    @Test func decodingErrorHandlerGivesTheTypedErrorBody() async throws {
        struct APIFailure: Decodable, Error {
            let message: String
            let code: String
        }
        let connect = Self.connect(errorHandler: DecodingErrorHandler(APIFailure.self))
        let result = await outcome(connect.request(errorBody([("message", "nope"), ("code", "E1")])))
        guard case .failure(let error) = result, let failure = error as? APIFailure else {
            Issue.record("expected APIFailure, got \(result)")
            return
        }
        #expect(failure.message == "nope")
        #expect(failure.code == "E1")
    }

    // MARK: Uploads

    struct UploadCall: Connector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String = "/post"
        var method: HTTPMethod = .post
        var parameters: ParametersRepresentable? = nil
    }

    @Test func uploadedFilesAndFieldsArriveParsedByTheServer() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00, 0xFE])
        let files = [
            File(name: "me.png", key: "avatar", mimeType: .png, data: png),
            File(name: "notes.txt", key: "notes", mimeType: .txt, data: Data("hello, ünïcode\r\n".utf8)),
        ]
        let call = UploadCall(
            endpoint: "/anything/users/{id}/avatar",
            parameters: CompositeParameters(
                .path(key: "id", value: "1"), .query(key: "v", value: "2"),
                .form(key: "caption", value: "Ada, 1843 & co")))
        let echo = try await connect.upload(files: files, to: call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/users/1/avatar?v=2")
        #expect(echo.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(echo.form == ["caption": .one("Ada, 1843 & co")])
        #expect(echo.files?["avatar"] == .one("data:image/png;base64," + png.base64EncodedString()))
        #expect(echo.files?["notes"] == .one("hello, ünïcode\r\n"))
    }

    @Test func uploadSendsJSONObjectMembersAsFields() async throws {
        struct AlbumInfo: Encodable {
            let title: String
            let isPublic: Bool
            let count: Int
        }
        let call = UploadCall(
            parameters: Parameter.jsonObject(value: AlbumInfo(title: "Holiday", isPublic: true, count: 3)))
        let file = File(name: "a.bin", key: "photos", mimeType: .myAcceptanceType, data: Data("x".utf8))
        let echo = try await connect.upload(files: [file], to: call).decoded(toType: Echo.self).value
        #expect(echo.form == ["title": .one("Holiday"), "isPublic": .one("true"), "count": .one("3")])
        #expect(echo.files?["photos"] == .one("x"))
    }

    @Test func uploadWithoutFilesAndFromDiskWithNameAndTypeInferred() async throws {
        let noFiles = try await connect.upload(
            files: nil, to: UploadCall(parameters: Parameter.form(key: "only", value: "field"))
        ).decoded(toType: Echo.self).value
        #expect(noFiles.form == ["only": .one("field")])

        let url = FileManager.default.temporaryDirectory.appendingPathComponent("acceptance-\(UUID().uuidString).json")
        try Data(#"{"a":1}"#.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        struct Seen: Decodable, Sendable {
            struct Part: Decodable, Sendable {
                let key: String
                let filename: String
                let contentType: String
                let size: Int
            }
            let files: [Part]
        }
        let seen = try await connect.upload(
            files: [File(key: "doc", fileURL: url)], to: UploadCall(endpoint: "/multipart")
        ).decoded(toType: Seen.self, decoder: Self.snakeCase).value
        #expect(seen.files.count == 1)
        #expect(seen.files.first?.key == "doc")
        #expect(seen.files.first?.filename == url.lastPathComponent)
        #expect(seen.files.first?.contentType == "application/json")
        #expect(seen.files.first?.size == 7)
    }

    @Test func uploadProgressEndsAtTheTotalBeforeObservers() async throws {
        let lastProgress = ProgressBox()
        let data = Data(repeating: 7, count: 300_000)
        let future = connect.upload(
            files: [File(name: "big.bin", key: "f", mimeType: .binary, data: data)],
            to: UploadCall(endpoint: "/multipart")
        ) { progress in
            lastProgress.set(progress.bytesSent, progress.totalBytes)
        }
        _ = try await future.value
        let (sent, total) = lastProgress.get()
        #expect(total > 300_000)
        #expect(sent == total)
    }

    final class ProgressBox: @unchecked Sendable {  // @unchecked: values sit behind lock
        private let lock = NSLock()
        private var sent: Int64 = 0
        private var total: Int64 = 0

        func set(_ sent: Int64, _ total: Int64) {
            lock.lock()
            self.sent = sent
            self.total = total
            lock.unlock()
        }

        func get() -> (Int64, Int64) {
            lock.lock()
            defer { lock.unlock() }
            return (sent, total)
        }
    }

    // MARK: Futures

    @Test func mapFlatMapAndRecoverChainRequests() async throws {
        let title = try await connect.request(TodoConnector.get(id: 5))
            .decoded(toType: Echo.self)
            .map { echo in Int(echo.url.split(separator: "/").last!)! }
            .flatMap { id in
                connect.request(
                    AdvancedTodoConnector.update(
                        userId: id, todoId: id + 1, action: .update,
                        object: Todo(userId: id, id: id + 1, title: "T\(id)", completed: true)))
            }
            .decoded(toType: Todo.self, keyPath: "json")
            .map { $0.title }
            .value
        #expect(title == "T5")

        let recovered = try await connect.request(Call(endpoint: "/status/500"))
            .decoded(toType: Todo.self)
            .map { $0.title }
            .recover { _ in "unknown" }
            .value
        #expect(recovered == "unknown")

        struct Wrapped: Error {}
        let mapped = await outcome(connect.request(Call(endpoint: "/status/500")).mapError { _ in Wrapped() })
        guard case .failure(let error) = mapped else {
            Issue.record("expected failure")
            return
        }
        #expect(error is Wrapped)
    }

    @Test func everyObserverRunsExactlyOnceInOrderAlsoAfterCompletion() async throws {
        let order = Recorder<Int>()
        let future = connect.request(TodoConnector.get(id: 1))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<5 {
                future.observe { _ in
                    order.append(index)
                    if index == 4 { continuation.resume() }
                }
            }
        }
        // Observing the completed future still runs the observer, once.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            future.observe { _ in
                order.append(5)
                continuation.resume()
            }
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(order.values == [0, 1, 2, 3, 4, 5])
    }

    @Test func aPromiseCompletesOnlyOnce() async throws {
        let promise = Promise<Int>()
        let calls = Counter()
        let seen = Recorder<Int>()
        promise.future.observe { result in
            calls.increment()
            if case .success(let value) = result { seen.append(value) }
        }
        promise.succeed(1)
        promise.succeed(2)
        promise.fail(ConnectError.cancelled)
        #expect(try await promise.future.value == 1)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(calls.value == 1)
        #expect(seen.values == [1])
    }

    @Test func aReleasedConnectStillCompletesItsFutures() async throws {
        func start() -> (SwiftConnect.Future<Data>, SwiftConnect.Future<Data>) {
            let shortLived = Self.connect()
            let plain = shortLived.request(TodoConnector.get(id: 9))
            let piped = Connect(
                middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }]), errorHandler: ErrorHandler()
            ).request(Call(endpoint: "/delay/{s}", parameters: Parameter.path(key: "s", value: "0.3")))
            return (plain, piped)
        }
        let (plain, piped) = start()
        let echo = try await plain.decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/anything/todos/9"))
        _ = try await piped.value
    }

    @Test func cancellingGivesOneDistinguishableError() async throws {
        let slow = Call(endpoint: "/delay/{s}", parameters: Parameter.path(key: "s", value: "10"))
        let calls = Counter()
        let future = connect.request(slow)
        let first = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Data, any Error>, Never>) in
            future.observe { result in
                if calls.increment() == 1 { continuation.resume(returning: result) }
            }
            future.cancel()
            future.cancel()
        }
        guard case .failure(let error) = first else {
            Issue.record("expected cancellation, got \(first)")
            return
        }
        guard case .cancelled? = error as? ConnectError else {
            Issue.record("expected ConnectError.cancelled, got \(error)")
            return
        }

        // cancelAllRequests, and a cancelled task.
        let all = connect.request(slow).decoded(toType: Echo.self)
        connect.cancelAllRequests()
        #expect(await connectError(all)?.isCancellation == true)

        // Cancelled before or after its request starts, as the scheduler has it: either way the
        // request fails as cancelled (a sleep here may outlast the request in a loaded run).
        let task = Task { try await connect.request(slow).value }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("expected cancellation")
        } catch {
            guard case .cancelled? = error as? ConnectError else {
                Issue.record("expected ConnectError.cancelled, got \(error)")
                return
            }
        }
        #expect(calls.value == 1)

        // A failure is not a cancellation.
        let refused = await connectError(
            connect.request(Call(baseURL: URL(string: "http://127.0.0.1:1")!, endpoint: "/get")))
        guard case .transport? = refused else {
            Issue.record("expected transport, got \(String(describing: refused))")
            return
        }
        #expect(refused?.isCancellation == false)
    }

    // MARK: Redirects

    @Test func redirectToAnotherOriginDropsCredentialsAndSameOriginKeepsThem() async throws {
        let connect = Self.connect(configure: Self.withoutCookieStore)
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/elsewhere"
        let credentials: [HTTPHeader] = [
            HTTPHeader(name: "Cookie", value: "session=abc"), HTTPHeader(name: "X-Plain", value: "kept"),
        ]
        let away = Call(
            endpoint: "/redirect-to", headers: credentials,
            parameters: Parameter.query(key: "url", value: other),
            authorizationToken: .bearer(token: "secret-token"))
        let awayEcho = try await connect.request(away).decoded(toType: Echo.self).value
        #expect(awayEcho.url == other)
        #expect(awayEcho.header("Authorization") == nil)
        #expect(awayEcho.header("Cookie") == nil)
        #expect(awayEcho.header("X-Plain") == "kept")

        let home = Call(
            endpoint: "/redirect-to", headers: credentials,
            parameters: Parameter.query(key: "url", value: "/anything/home"),
            authorizationToken: .bearer(token: "secret-token"))
        let homeEcho = try await connect.request(home).decoded(toType: Echo.self).value
        #expect(homeEcho.url.hasSuffix("/anything/home"))
        #expect(homeEcho.header("Authorization") == "Bearer secret-token")
        #expect(homeEcho.header("Cookie") == "session=abc")
    }

    @Test func redirect307KeepsMethodAndBody() async throws {
        let call = Call(
            endpoint: "/redirect-to", method: .post,
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything/target"), .query(key: "status_code", value: "307"),
                .jsonObject(value: ["kept": "yes"])))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["kept": .string("yes")]))
    }

    // MARK: Debug output

    @Test func debugOutputIsOffByDefault() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        _ = try await connect.request(Call(endpoint: "/anything", authorizationToken: .bearer(token: "t"))).value
        _ = try await connect.upload(
            files: [File(name: "a", key: "k", mimeType: .txt, data: Data("a".utf8))], to: UploadCall()
        )
        .value
        _ = await outcome(connect.request(Call(endpoint: "/status/500")))
        #expect(logger.text.isEmpty)
    }

    @Test func debugOutputRedactsCredentials() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        let call = Call(
            endpoint: "/anything", method: .post,
            headers: [HTTPHeader(name: "Cookie", value: "session=cookie-secret")],
            parameters: CompositeParameters(
                .query(key: "api_key", value: "query-secret"), .query(key: "page", value: "2"),
                .jsonObject(value: ["password": "body-secret", "name": "visible-name"])),
            authorizationToken: .bearer(token: "bearer-secret"))
        _ = try await connect.request(call, debugResponse: true).value
        let basic = Call(
            endpoint: "/basic-auth/u/basic-secret", authorizationToken: .basic(username: "u", password: "basic-secret"))
        _ = try await connect.request(basic, debugResponse: true).value
        let text = logger.text
        #expect(text.contains("curl"))
        #expect(text.contains("visible-name"))
        #expect(text.contains("page=2"))
        for secret in ["cookie-secret", "query-secret", "body-secret", "bearer-secret"] {
            #expect(!text.contains(secret), "\(secret) was logged")
        }
        let basicValue = Data("u:basic-secret".utf8).base64EncodedString()
        #expect(!text.contains(basicValue))
    }

    // MARK: Configuration

    @Test func configurationBaseURLReplacesTheConnectors() async throws {
        let connect = Self.connect { configuration in
            configuration.baseURL = HTTPBin.baseURL.appendingPathComponent("anything/staging")
        }
        let call = Call(
            baseURL: URL(string: "https://myserver.invalid")!, endpoint: "/todos/{id}",
            parameters: Parameter.path(key: "id", value: "1"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/staging/todos/1")
    }

    @Test func lowercaseMethodIsSentUppercase() async throws {
        let echo = try await connect.request(Call(endpoint: "/anything", method: HTTPMethod(rawValue: "delete")))
            .decoded(toType: Echo.self).value
        #expect(echo.method == "DELETE")
    }
}

extension AcceptanceTests {

    // MARK: More seed shapes

    @Test func seedFileAndMimeTypeShapes() {
        let file = File(name: "photo.jpg", key: "photo", mimeType: .jpg, data: Data([1, 2, 3]))
        #expect(file.name == "photo.jpg")
        #expect(file.key == "photo")
        #expect(file.mimeType == .jpg)
        #expect(file.data == Data([1, 2, 3]))
        #expect(MimeType.jpg.rawValue == "image/jpeg")
        #expect(MimeType.png.rawValue == "image/png")
        #expect(MimeType.mp4.rawValue == "video/mp4")
        #expect(MimeType.pdf.rawValue == "application/pdf")
        #expect(MimeType.myAcceptanceType == MimeType(rawValue: "awesome/type"))
        #expect(Set([MimeType.jpg, .jpg, .png]).count == 2)
        #expect(MimeType(fileExtension: "jpeg") == .jpg)
        #expect(MimeType(fileExtension: "unknown-ext") == .binary)
    }

    @Test func pathSlotInsideASegment() async throws {
        let call = Call(
            endpoint: "/anything/files/{name}.json", parameters: Parameter.path(key: "name", value: "a/b c"))
        let response = try await connect.response(call).value
        #expect(response.request.url?.absoluteString.hasSuffix("/anything/files/a%2Fb%20c.json") == true)
        let echo = try response.decoded(toType: Echo.self)
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/files/a/b%20c.json")
    }

    @Test func endpointQueryAndParameterQueryCombine() async throws {
        let call = Call(
            endpoint: "/anything/{id}?page=1&per_page=3",
            parameters: CompositeParameters(.path(key: "id", value: "7"), .query(key: "page", value: "2")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args["page"] == .many(["1", "2"]))
        #expect(echo.args["per_page"] == .one("3"))
        #expect(echo.url.hasPrefix(HTTPBin.baseURL.absoluteString + "/anything/7?"))
    }

    @Test func emptyPathValueIsRefused() async throws {
        let error = await connectError(
            connect.request(Call(endpoint: "/anything/{id}", parameters: Parameter.path(key: "id", value: ""))))
        guard case .invalidRequest? = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
    }

    // MARK: Pipeline (with middleware) behaves as the direct path

    static func pipelineConnect(logger: CapturingLogger? = nil) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "acceptance.pipeline")
        configuration.timeoutInterval = 20
        if let logger { configuration.logger = logger }
        return Connect(
            middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }]), errorHandler: ErrorHandler(),
            configuration: configuration)
    }

    @Test(arguments: [false, true])
    func crossOriginRedirectDropsEveryCredential(throughThePipeline: Bool) async throws {
        let connect = throughThePipeline ? Self.pipelineConnect() : Self.connect()
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/elsewhere"
        for status in ["302", "307"] {
            let call = Call(
                endpoint: "/redirect-to",
                headers: [
                    HTTPHeader(name: "Cookie", value: "sid=1"),
                    HTTPHeader(name: "Proxy-Authorization", value: "Basic eA=="),
                    HTTPHeader(name: "X-Auth-Token", value: "tok"), HTTPHeader(name: "X-Plain", value: "kept"),
                ],
                parameters: CompositeParameters(
                    .query(key: "url", value: other), .query(key: "status_code", value: status)),
                authorizationToken: .header(name: "X-API-Key", value: "api-secret"))
            let echo = try await connect.request(call).decoded(toType: Echo.self).value
            #expect(echo.url == other)
            for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Auth-Token", "X-API-Key"] {
                #expect(echo.header(name) == nil, "\(name) reached the other origin after a \(status)")
            }
            #expect(echo.header("X-Plain") == "kept")
        }
    }

    @Test func crossOriginRedirectOfAnUploadDropsAuthorizationButKeepsTheBody() async throws {
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/upload-target"
        struct AuthUpload: Connector, AuthorizedConnector {
            let target: String
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/redirect-to" }
            var method: HTTPMethod { .post }
            var parameters: ParametersRepresentable? {
                CompositeParameters(.query(key: "url", value: target), .query(key: "status_code", value: "307"))
            }
            var authorizationToken: AuthorizationToken? { .bearer(token: "upload-secret") }
        }
        let file = File(name: "n.txt", key: "doc", mimeType: .txt, data: Data("payload".utf8))
        let echo = try await connect.upload(files: [file], to: AuthUpload(target: other)).decoded(toType: Echo.self)
            .value
        #expect(echo.url == other)
        #expect(echo.method == "POST")
        #expect(echo.files?["doc"] == .one("payload"))
        #expect(echo.header("Authorization") == nil)
    }

    @Test func challengeWith401ComesBackThroughThePipelineToo() async throws {
        for connect in [Self.connect(), Self.pipelineConnect()] {
            let error = await connectError(connect.request(Call(endpoint: "/basic-auth/a/b")))
            #expect(error?.statusCode == 401)
        }
    }

    // MARK: Cancellation in chains and uploads

    @Test func cancellingAChainStartsNoLaterRequest() async throws {
        let started = Counter()
        let slow = Call(endpoint: "/delay/{s}", parameters: Parameter.path(key: "s", value: "3"))
        let chain = connect.request(slow)
            .flatMap { _ -> SwiftConnect.Future<Data> in
                started.increment()
                return self.connect.request(Call(endpoint: "/get"))
            }
        chain.cancel()
        let error = await connectError(chain)
        #expect(error?.isCancellation == true)
        #expect(started.value == 0)
    }

    @Test(arguments: [false, true])
    func cancellingAnUploadOrAPipelinedRequestFailsWithCancelled(throughThePipeline: Bool) async throws {
        let connect = throughThePipeline ? Self.pipelineConnect() : Self.connect()
        // Cancelled with no suspension in between: in a loaded parallel run, a sleep before the
        // cancel lasted longer than the request (a 50 ms sleep outlasted a 3 s /delay).
        let slowPipelined = connect.request(
            Call(endpoint: "/delay/{s}", parameters: Parameter.path(key: "s", value: "10")))
        let upload = connect.upload(
            files: [File(name: "big", key: "f", mimeType: .binary, data: Data(count: 40_000_000))],
            to: UploadCall(endpoint: "/sink?slow=1"))
        slowPipelined.cancel()
        upload.cancel()
        #expect(await connectError(slowPipelined)?.isCancellation == true)
        #expect(await connectError(upload)?.isCancellation == true)
    }

    @Test func cancelAfterCompletionChangesNothing() async throws {
        let calls = Counter()
        let future = connect.request(TodoConnector.get(id: 2))
        let first = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            future.observe { result in
                calls.increment()
                continuation.resume(returning: (try? result.get()) != nil)
            }
        }
        #expect(first)
        future.cancel()
        connect.cancelAllRequests()
        _ = try await future.value
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(calls.value == 1)
    }

    @Test func requestsAfterCancelAllRequestsStillWork() async throws {
        connect.cancelAllRequests()
        let echo = try await connect.request(TodoConnector.get(id: 3)).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/todos/3"))
    }

    // MARK: Threading

    @Test(arguments: [false, true])
    func observersAndClosuresRunOnTheCallbackQueue(throughThePipeline: Bool) async throws {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "acceptance.mine")
        queue.setSpecific(key: key, value: "mine")
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = queue
        let connect = Connect(
            middleware: ConnectMiddleware(adapters: throughThePipeline ? [ClosureAdapter { $0 }] : []),
            errorHandler: ErrorHandler(), configuration: configuration)
        let onQueue = Recorder<Int>()
        let done = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            connect.request(TodoConnector.get(id: 4))
                .decoded(toType: Echo.self)
                .map { echo -> String in
                    onQueue.append(DispatchQueue.getSpecific(key: key) == "mine" ? 1 : 0)
                    return echo.url
                }
                .observe { result in
                    onQueue.append(DispatchQueue.getSpecific(key: key) == "mine" ? 1 : 0)
                    continuation.resume(returning: (try? result.get()) != nil)
                }
        }
        #expect(done)
        #expect(onQueue.values == [1, 1])
    }

    @Test func manyConcurrentRequestsEachCompleteOnce() async throws {
        let calls = Counter()
        let ids = Array(1...40)
        let urls = await withTaskGroup(of: String?.self) { group in
            for id in ids {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        self.connect.request(TodoConnector.get(id: id)).decoded(toType: Echo.self).observe { result in
                            calls.increment()
                            continuation.resume(returning: try? result.get().url)
                        }
                    }
                }
            }
            var urls: [String] = []
            for await url in group { urls.append(url ?? "failed") }
            return urls
        }
        #expect(Set(urls) == Set(ids.map { HTTPBin.baseURL.absoluteString + "/anything/todos/\($0)" }))
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(calls.value == ids.count)
    }

    // MARK: Other combinators

    @Test func whenSuccessWhenFailureDiscardingValueAndFlatRecover() async throws {
        let successes = Counter()
        let failures = Counter()
        _ = try await connect.request(TodoConnector.get(id: 1))
            .whenSuccess { _ in successes.increment() }
            .whenFailure { _ in failures.increment() }
            .discardingValue()
            .value
        let recovered = try await connect.request(Call(endpoint: "/status/404"))
            .whenFailure { _ in failures.increment() }
            .flatRecover { _ in self.connect.request(TodoConnector.get(id: 6)) }
            .decoded(toType: Echo.self)
            .value
        #expect(recovered.url.hasSuffix("/todos/6"))
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(successes.value == 1)
        #expect(failures.value == 1)
    }

    // MARK: Middleware against the server

    @Test func retryPolicyRetriesIdempotentRequestsOnly() async throws {
        let attempts = Counter()
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "acceptance.retry")
        configuration.sleep = { _ in }
        let connect = Connect(
            middleware: ConnectMiddleware(
                adapters: [
                    ClosureAdapter { request in
                        attempts.increment()
                        return request
                    }
                ],
                retriers: [RetryPolicy(maximumAttempts: 3, baseDelay: 0.25)]),
            errorHandler: ErrorHandler(), configuration: configuration)
        let get = await connectError(connect.request(Call(endpoint: "/status/503")))
        #expect(get?.statusCode == 503)
        #expect(attempts.value == 3)
        let post = await connectError(connect.request(Call(endpoint: "/status/503", method: .post)))
        #expect(post?.statusCode == 503)
        #expect(attempts.value == 4)
    }

    @Test func tokenAuthenticatorRefreshesOnceForConcurrentRequests() async throws {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: nil) { _ in
            refreshes.increment()
            return AccessToken("fresh-token", expiresAt: Date().addingTimeInterval(300))
        }
        let connect = Connect(middleware: authenticator, errorHandler: ErrorHandler())
        struct Bearer: Decodable, Sendable {
            let token: String
        }
        async let first = connect.request(Call(endpoint: "/bearer")).decoded(toType: Bearer.self).value
        async let second = connect.request(Call(endpoint: "/bearer")).decoded(toType: Bearer.self).value
        async let third = connect.request(Call(endpoint: "/bearer")).decoded(toType: Bearer.self).value
        let tokens = try await [first, second, third].map(\.token)
        #expect(tokens == ["fresh-token", "fresh-token", "fresh-token"])
        #expect(refreshes.value == 1)
    }

    @Test func validatorsRejectASuccessWithoutTheRequiredKeys() async throws {
        let connect = Self.connect { $0.validators = [.requiredJSONKeys(["json.data.id"])] }
        let missing = await connectError(
            connect.request(
                Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: ["a": 1]))))
        guard case .validationFailed(let response, _)? = missing else {
            Issue.record("expected validationFailed, got \(String(describing: missing))")
            return
        }
        #expect(response.statusCode == 200)
        _ = try await connect.request(
            Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: ["data": ["id": 1]]))
        ).value
    }

    /// Usage.md: a header sent more than once arrives as one, its values joined with `, `.
    @Test func aResponseHeaderSentTwiceArrivesJoined() async throws {
        let parameters = CompositeParameters(.query(key: "X-Multi", value: "1"), .query(key: "X-Multi", value: "2"))
        let response = try await Self.connect().response(Call(endpoint: "/response-headers", parameters: parameters))
            .value
        let headers = response.headers
        #expect(headers["x-multi"] == "1, 2")
        #expect(headers.filter { $0.name.lowercased() == "x-multi" }.count == 1)
    }

    @Test func aContentTypeValidatorReadsTheServersContentType() async throws {
        let connect = Self.connect { $0.validators = [.contentType(["application/json"])] }
        _ = try await connect.request(Call(endpoint: "/json")).value
        let html = await connectError(connect.request(Call(endpoint: "/html")))
        guard case .validationFailed(let response, let underlying)? = html else {
            Issue.record("expected validationFailed, got \(String(describing: html))")
            return
        }
        #expect(response.statusCode == 200)
        #expect(
            underlying as? UnacceptableContentType
                == UnacceptableContentType(
                    acceptable: ["application/json"], received: "text/html; charset=utf-8"))
        // A pattern with a wildcard subtype: httpbin's `/xml` is `application/xml`.
        let anyApplication = Self.connect { $0.validators = [.contentType(["application/*"])] }
        _ = try await anyApplication.request(Call(endpoint: "/xml")).value
        let htmlAgain = await connectError(anyApplication.request(Call(endpoint: "/html")))
        #expect((htmlAgain?.underlyingError as? UnacceptableContentType)?.received == "text/html; charset=utf-8")
    }

    @Test func doNotFollowHandsBackTheRedirectAsAnError() async throws {
        let connect = Self.connect { $0.redirectPolicy = .doNotFollow }
        let error = await connectError(connect.request(Call(endpoint: "/redirect/1")))
        #expect(error?.statusCode == 302)
    }

    // MARK: Timeouts and transport

    @Test func aTimeoutIsATransportErrorNotACancellation() async throws {
        struct Slow: Connector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/delay/10" }
            var timeoutInterval: TimeInterval? { 1 }
        }
        let error = await connectError(connect.request(Slow()))
        guard case .transport(let underlying)? = error else {
            Issue.record("expected transport, got \(String(describing: error))")
            return
        }
        #expect((underlying as? URLError)?.code == .timedOut)
        #expect(error?.isCancellation == false)
    }

    // MARK: Uploads on the wire

    @Test func multipartFileNamesOrderAndFraming() async throws {
        struct Seen: Decodable, Sendable {
            struct Part: Decodable, Sendable {
                let key: String
                let filename: String
                let contentType: String
                let size: Int
            }
            let fields: [[String]]
            let files: [Part]
            let contentLength: String?
            let transferEncoding: String?
        }
        let files = [
            File(name: "ä \"q\".txt", key: "docs", mimeType: .txt, data: Data("one".utf8)),
            File(name: "second.pdf", key: "docs", mimeType: .pdf, data: Data("two!".utf8)),
        ]
        let call = UploadCall(
            endpoint: "/multipart",
            parameters: CompositeParameters(.form(key: "a", value: "1"), .form(key: "b", value: "ü & =")))
        let seen = try await connect.upload(files: files, to: call).decoded(toType: Seen.self, decoder: Self.snakeCase)
            .value
        #expect(seen.fields == [["a", "1"], ["b", "ü & ="]])
        #expect(seen.files.map(\.key) == ["docs", "docs"])
        #expect(seen.files.map(\.filename) == ["ä \"q\".txt", "second.pdf"])
        #expect(seen.files.map(\.contentType) == ["text/plain", "application/pdf"])
        #expect(seen.files.map(\.size) == [3, 4])
        #expect(seen.contentLength != nil)
        #expect(seen.transferEncoding == nil)

        let chunked = try await connect.upload(
            files: files, to: call, options: UploadOptions(framing: .chunked, boundary: "acceptance-boundary")
        ).decoded(toType: Seen.self, decoder: Self.snakeCase).value
        #expect(chunked.files.map(\.size) == [3, 4])
        #expect(chunked.transferEncoding?.lowercased() == "chunked")
    }

    @Test func uploadTaskReportsProgressAsAnAsyncSequence() async throws {
        let task = connect.uploadTask(
            files: [File(name: "x.bin", key: "f", mimeType: .binary, data: Data(count: 200_000))],
            to: UploadCall(endpoint: "/multipart"))
        var last: (Int64, Int64) = (0, 0)
        for await progress in task.progress {
            #expect(progress.bytesSent >= last.0)
            last = (progress.bytesSent, progress.totalBytes)
        }
        _ = try await task.response.value
        #expect(last.0 == last.1)
        #expect(last.1 > 200_000)
    }

    @Test func uploadDebugOutputRedactsSecretFields() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        struct Secured: Connector, AuthorizedConnector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/post" }
            var method: HTTPMethod { .post }
            var parameters: ParametersRepresentable? {
                CompositeParameters(.form(key: "password", value: "form-secret"), .form(key: "name", value: "visible"))
            }
            var authorizationToken: AuthorizationToken? { .custom(token: "custom-secret") }
        }
        _ = try await connect.upload(
            files: [File(name: "a.txt", key: "k", mimeType: .txt, data: Data("a".utf8))], to: Secured(),
            debugResponse: true
        ).value
        let text = logger.text
        #expect(text.contains("curl"))
        #expect(!text.contains("custom-secret"))
        #expect(!text.contains("form-secret"))
    }

    @Test func debugOutputRedactsTheHeaderTokenAndSetCookie() async throws {
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger, configure: Self.withoutCookieStore)
        let call = Call(
            endpoint: "/response-headers",
            parameters: CompositeParameters(.query(key: "Set-Cookie", value: "sid=cookie-leak")),
            authorizationToken: .header(name: "X-Service-Token", value: "svc-secret"))
        _ = try await connect.request(call, debugResponse: true).value
        let text = logger.text
        #expect(!text.contains("svc-secret"))
        #expect(!text.contains("Set-Cookie: sid=cookie-leak"))
    }
}

extension AcceptanceTests {

    // MARK: Error bodies of every documented shape

    static func stubbed(
        status: Int, body: String, headers: [String: String] = ["Content-Type": "application/json"],
        errorHandler: any ErrorHandlerProtocol = ErrorHandler()
    ) -> Connect {
        Connect(
            middleware: ConnectMiddleware(), errorHandler: errorHandler,
            transport: StubTransport { _ in
                StubTransport.Reply(statusCode: status, headers: headers, body: Data(body.utf8))
            })
    }

    @Test(arguments: [
        (#"{"error": {"message": "nested"}}"#, "nested"),
        (#"{"error": "e", "msg": "m"}"#, "m"),
        (#"{"error": [{"message": "in an array"}]}"#, "in an array"),
        (#"{"errors": "plain", "err": "short"}"#, "short"),
    ])
    func defaultHandlerFindsMessagesInDocumentedShapes(body: String, expected: String) async throws {
        let error = await connectError(Self.stubbed(status: 422, body: body).request(Call(endpoint: "/x")))
        guard case .unacceptableStatus(let response, let message)? = error else {
            Issue.record("expected unacceptableStatus, got \(String(describing: error))")
            return
        }
        #expect(message == expected)
        #expect(response.statusCode == 422)
        #expect(error?.responseBody == Data(body.utf8))
    }

    @Test func nonJSONErrorBodyIsKept() async throws {
        let error = await connectError(
            Self.stubbed(status: 503, body: "<h1>down</h1>", headers: ["Content-Type": "text/html"])
                .request(Call(endpoint: "/x")))
        guard case .unacceptableStatus(let response, _)? = error else {
            Issue.record("expected unacceptableStatus, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 503)
        #expect(error?.responseBody == Data("<h1>down</h1>".utf8))
    }

    @Test func messageKeysReadNestedArraysAndProblemDetails() async throws {
        let errors = await connectError(
            Self.stubbed(
                status: 400, body: #"{"errors": [{"message": "first problem"}]}"#,
                errorHandler: ErrorHandler(messageKeys: ["errors", "message"])
            ).request(Call(endpoint: "/x")))
        guard case .unacceptableStatus(_, let message)? = errors else {
            Issue.record("expected unacceptableStatus, got \(String(describing: errors))")
            return
        }
        #expect(message == "first problem")

        let problem = await connectError(
            Self.stubbed(
                status: 404, body: #"{"type": "about:blank", "title": "Not Found"}"#,
                headers: ["Content-Type": "application/problem+json"],
                errorHandler: ErrorHandler(messageKeys: ["detail", "title"])
            ).request(Call(endpoint: "/x")))
        guard case .unacceptableStatus(_, let problemMessage)? = problem else {
            Issue.record("expected unacceptableStatus, got \(String(describing: problem))")
            return
        }
        #expect(problemMessage == "Not Found")
    }

    @Test func handlerWithStatusCodeSeesTheStatusAndEmptyDictionaryForNonObjects() async throws {
        struct Seen: Error {
            let status: Int
            let keys: [String]
        }
        struct StatusHandler: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? {
                handle(response: response, statusCode: 0)
            }

            func handle(response: [String: Any], statusCode: Int) -> Error? {
                Seen(status: statusCode, keys: response.keys.sorted())
            }
        }
        let connect = Self.connect(errorHandler: StatusHandler())
        let result = await outcome(connect.request(Call(endpoint: "/status/418")))
        guard case .failure(let error as Seen) = result else {
            Issue.record("expected Seen, got \(result)")
            return
        }
        #expect(error.status == 418)
        #expect(error.keys.isEmpty)
    }

    @Test func acceptableStatusCodesMakeAnErrorStatusASuccess() async throws {
        let call = Call(endpoint: "/status/404", acceptableStatusCodes: 200..<500)
        let response = try await connect.response(call).value
        #expect(response.statusCode == 404)
    }

    // MARK: Redirect semantics against httpbin

    @Test func moreThanTenRedirectsFail() async throws {
        let ten = try await connect.response(Call(endpoint: "/redirect/10")).value
        #expect(ten.statusCode == 200)
        #expect(ten.url?.path == "/get")
        let error = await connectError(connect.request(Call(endpoint: "/redirect/11")))
        guard case .tooManyRedirects(let last)? = error else {
            Issue.record("expected tooManyRedirects, got \(String(describing: error))")
            return
        }
        #expect((300..<400).contains(last.statusCode))
    }

    @Test(arguments: ["302", "303"])
    func postRedirectedBecomesGetWithoutTheBody(status: String) async throws {
        let call = Call(
            endpoint: "/redirect-to", method: .post,
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything/after"), .query(key: "status_code", value: status),
                .jsonObject(value: ["dropped": true])))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "GET")
        #expect(echo.json == nil)
        #expect(echo.data == "")
        #expect(echo.header("Content-Type") == nil)
        #expect(echo.url.hasSuffix("/anything/after"))
    }

    @Test func credentialsInTheURLAreNotForwardedToAnotherOrigin() async throws {
        var components = URLComponents(url: HTTPBin.baseURL, resolvingAgainstBaseURL: false)!
        components.user = "ann"
        components.password = "url-secret"
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/away"
        let call = Call(
            baseURL: components.url!, endpoint: "/redirect-to", parameters: Parameter.query(key: "url", value: other))
        let logger = CapturingLogger()
        let connect = Self.connect(logger: logger)
        let echo = try await connect.request(call, debugResponse: true).decoded(toType: Echo.self).value
        #expect(echo.url == other)
        #expect(echo.header("Authorization") == nil)
        #expect(!logger.text.contains("url-secret"))
    }

    // MARK: Error descriptions

    @Test func errorDescriptionsRedactSecretsInURLs() async throws {
        let refused = await connectError(
            connect.request(
                Call(
                    baseURL: URL(string: "http://127.0.0.1:1")!, endpoint: "/x",
                    parameters: Parameter.query(key: "access_token", value: "desc-secret"))))
        let refusedDescription = refused.map { "\($0)" } ?? ""
        #expect(refused?.isCancellation == false)
        #expect(!refusedDescription.contains("desc-secret"))
        let status = await connectError(
            connect.request(
                Call(endpoint: "/status/500", parameters: Parameter.query(key: "api_key", value: "desc-secret2"))))
        #expect(status?.statusCode == 500)
        let statusDescription = status.map { "\($0)" } ?? ""
        #expect(statusDescription.contains("api_key"))
        #expect(!statusDescription.contains("desc-secret2"))
    }

    // MARK: Bodies and encoders

    @Test func configurationEncoderAndDecoderAreUsed() async throws {
        struct Outgoing: Encodable {
            let firstName: String
        }
        struct Incoming: Decodable, Sendable {
            let firstName: String
        }
        let connect = Self.connect { configuration in
            configuration.jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
            configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        }
        let call = Call(
            endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: Outgoing(firstName: "Ada")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.json == .object(["first_name": .string("Ada")]))
        let incoming = try await connect.request(call).decoded(toType: Incoming.self, keyPath: "json").value
        #expect(incoming.firstName == "Ada")
    }

    @Test func largeAndCompressedResponsesArriveWhole() async throws {
        let bytes = try await connect.request(
            Call(endpoint: "/bytes/{n}", parameters: Parameter.path(key: "n", value: "100000"))
        )
        .value
        #expect(bytes.count == 100_000)
        struct Gzipped: Decodable, Sendable {
            let gzipped: Bool
        }
        let gzip = try await connect.request(Call(endpoint: "/gzip")).decoded(toType: Gzipped.self).value
        #expect(gzip.gzipped)
    }

    @Test func headRequestHasNoBody() async throws {
        let response = try await connect.response(Call(endpoint: "/get", method: .head)).value
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        _ = try await connect.request(Call(endpoint: "/get", method: .head)).decoded(toType: Empty.self).value
        let absent = try await connect.request(Call(endpoint: "/status/204")).decodedIfPresent(toType: Todo.self).value
        #expect(absent == nil)
    }

    @Test func fractionalTimeoutNeverFiresEarly() async throws {
        struct Quick: Connector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/delay/0.2" }
            var timeoutInterval: TimeInterval? { 0.5 }
        }
        _ = try await connect.request(Quick()).value
    }

    // MARK: Upload errors

    @Test func uploadErrorsAreTypedAndNothingIsSent() async throws {
        let sent = Counter()
        let stubbed = Connect(
            transport: StubTransport { _ in
                sent.increment()
                return StubTransport.Reply(statusCode: 200)
            })
        let file = File(name: "a.txt", key: "k", mimeType: .txt, data: Data("a".utf8))
        let missingURL = URL(fileURLWithPath: "/nonexistent/acceptance-\(UUID().uuidString).bin")
        let cases: [(String, SwiftConnect.Future<Data>)] = [
            ("GET", stubbed.upload(files: [file], to: UploadCall(method: .get))),
            (
                "raw data",
                stubbed.upload(
                    files: [file], to: UploadCall(parameters: Parameter.data(Data("x".utf8), contentType: "text/plain"))
                )
            ),
            ("missing file", stubbed.upload(files: [File(key: "k", fileURL: missingURL)], to: UploadCall())),
            (
                "empty key",
                stubbed.upload(files: [File(name: "a", key: "", mimeType: .txt, data: Data())], to: UploadCall())
            ),
            (
                "array JSON",
                stubbed.upload(files: [file], to: UploadCall(parameters: Parameter.jsonObject(value: [1, 2])))
            ),
        ]
        for (name, future) in cases {
            let error = await connectError(future)
            guard case .invalidRequest(let reason)? = error else {
                Issue.record("\(name): expected invalidRequest, got \(String(describing: error))")
                continue
            }
            if name == "missing file" {
                #expect(reason == .fileNotFound(missingURL))
            }
            if name == "GET" {
                #expect(reason == .bodyNotAllowed(method: "GET"))
            }
            if name == "raw data" {
                #expect(reason == .multipleBodies)
            }
            if name == "empty key" {
                guard case .invalidPartName = reason else {
                    Issue.record("expected invalidPartName, got \(reason)")
                    continue
                }
            }
        }
        #expect(sent.value == 0)
    }

    @Test func uploadJSONObjectNestedAndNullMembers() async throws {
        struct Info: Encodable {
            let ratio: Double
            let tags: [String]
            let nested: [String: Int]
            let missing: String?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(ratio, forKey: .ratio)
                try container.encode(tags, forKey: .tags)
                try container.encode(nested, forKey: .nested)
                try container.encode(missing, forKey: .missing)  // an explicit null
            }

            enum CodingKeys: String, CodingKey {
                case ratio, tags, nested, missing
            }
        }
        let info = Info(ratio: 1.5, tags: ["a", "b"], nested: ["n": 1], missing: nil)
        let echo = try await connect.upload(
            files: [File(name: "f", key: "f", mimeType: .txt, data: Data("f".utf8))],
            to: UploadCall(parameters: Parameter.jsonObject(value: info))
        ).decoded(toType: Echo.self).value
        #expect(echo.form?["ratio"] == .one("1.5"))
        #expect(echo.form?["tags"] == .one(#"["a","b"]"#))
        #expect(echo.form?["nested"] == .one(#"{"n":1}"#))
        #expect(echo.form?["missing"] == nil)
    }

    @Test func streamFileUploads() async throws {
        let content = Data("streamed content".utf8)
        let file = File(name: "s.txt", key: "s", mimeType: .txt, length: UInt64(content.count)) {
            InputStream(data: content)
        }
        let echo = try await connect.upload(files: [file], to: UploadCall()).decoded(toType: Echo.self).value
        #expect(echo.files?["s"] == .one("streamed content"))
    }

    // MARK: Lifetime

    @Test func observersAreReleasedAfterTheyRun() async throws {
        final class Witness: Sendable {}
        let future = connect.request(TodoConnector.get(id: 8))
        weak var weakWitness: Witness?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let witness = Witness()
            weakWitness = witness
            future.observe { _ in
                _ = witness
                continuation.resume()
            }
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(weakWitness == nil)
        _ = future
    }

    @Test func cancelAllRequestsCancelsOnlyItsOwnClient() async throws {
        let mine = Self.connect()
        let other = Self.connect()
        let slow = Call(endpoint: "/delay/{s}", parameters: Parameter.path(key: "s", value: "0.5"))
        let mineFuture = mine.request(slow)
        let otherFuture = other.request(slow)
        mine.cancelAllRequests()
        #expect(await connectError(mineFuture)?.isCancellation == true)
        _ = try await otherFuture.value
    }

    @Test func tokenAuthenticatorAgainstAnAlways401EndpointEnds() async throws {
        let refreshes = Counter()
        let authenticator = TokenAuthenticator(token: AccessToken("stale")) { _ in
            AccessToken("refreshed-\(refreshes.increment())")
        }
        let connect = Connect(middleware: authenticator, errorHandler: ErrorHandler())
        let error = await connectError(connect.request(Call(endpoint: "/status/401")))
        #expect(error?.statusCode == 401)
        #expect(refreshes.value <= 3)
    }

    @Test func connectorWithoutMiddlewareSkipsTheClients() async throws {
        struct Plain: Connector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/anything" }
            var middleware: ConnectorMiddleware { .none }
        }
        let connect = Connect(
            middleware: ConnectMiddleware(adapters: [
                ClosureAdapter { request in
                    var request = request
                    request.setValue("yes", forHTTPHeaderField: "X-Adapted")
                    return request
                }
            ]), errorHandler: ErrorHandler())
        let plain = try await connect.request(Plain()).decoded(toType: Echo.self).value
        #expect(plain.header("X-Adapted") == nil)
        let adapted = try await connect.request(Call(endpoint: "/anything")).decoded(toType: Echo.self).value
        #expect(adapted.header("X-Adapted") == "yes")
    }
}

extension AcceptanceTests {

    // MARK: Debug output redaction, case by case

    func debugLog(_ call: Call, connect: Connect? = nil, logger: CapturingLogger = CapturingLogger()) async -> String {
        let connect = connect ?? Self.connect(logger: logger, configure: Self.withoutCookieStore)
        _ = await outcome(connect.request(call, debugResponse: true))
        return logger.text
    }

    @Test func debugRedactsSecretHeadersByName() async throws {
        let text = await debugLog(
            Call(
                endpoint: "/anything",
                headers: [
                    HTTPHeader(name: "X-Auth-Key", value: "h-secret-1"),
                    HTTPHeader(name: "Ocp-Apim-Subscription-Key", value: "h-secret-2"),
                    HTTPHeader(name: "X-API-Key", value: "h-secret-3"),
                    HTTPHeader(name: "Proxy-Authorization", value: "Basic aC1zZWNyZXQtNA=="),
                    HTTPHeader(name: "X-Request-Id", value: "visible-id"),
                ]))
        #expect(text.contains("visible-id"))
        for secret in ["h-secret-1", "h-secret-2", "h-secret-3", "aC1zZWNyZXQtNA=="] {
            #expect(!text.contains(secret), "\(secret) was logged")
        }
    }

    @Test func debugRedactsFormFieldsAndJSONInStrings() async throws {
        let form = await debugLog(
            Call(
                endpoint: "/post", method: .post,
                parameters: CompositeParameters(
                    .form(key: "password", value: "form-secret"), .form(key: "client_secret", value: "form-secret-2"),
                    .form(key: "user", value: "visible-user"))))
        #expect(form.contains("visible-user"))
        #expect(!form.contains("form-secret"))

        let embedded = await debugLog(
            Call(
                endpoint: "/anything", method: .post,
                parameters: Parameter.data(
                    Data(#"{"refresh_token":"string-secret","n":1}"#.utf8), contentType: "text/plain")))
        #expect(!embedded.contains("string-secret"))
    }

    @Test func debugRedactsTokensInLocationHeaders() async throws {
        let text = await debugLog(
            Call(
                endpoint: "/redirect-to",
                parameters: Parameter.query(
                    key: "url", value: "/anything/callback?access_token=location-secret&state=ok")))
        // The first request's own URL carries the secret percent-encoded inside its `url` item,
        // whose name is not a secret's; the redirect's Location and the hop it leads to are redacted.
        #expect(text.contains("Location: /anything/callback?access_token=<redacted>&state=ok"))
        #expect(!text.contains("access_token=location-secret"))
        #expect(!text.contains(#""access_token" : "location-secret""#))
    }

    @Test func debugRedactsEchoesInJSONLines() async throws {
        let text = await debugLog(
            Call(
                endpoint: "/stream/{n}", parameters: Parameter.path(key: "n", value: "3"),
                authorizationToken: .bearer(token: "ndjson-secret")))
        #expect(text.contains("curl"))
        #expect(!text.contains("ndjson-secret"))
    }

    @Test func debugRedactsThroughThePipelineAndRetries() async throws {
        let logger = CapturingLogger()
        var configuration = ConnectConfiguration()
        configuration.logger = logger
        configuration.sleep = { _ in }
        let connect = Connect(
            middleware: ConnectMiddleware(
                adapters: [
                    ClosureAdapter { request in
                        var request = request
                        request.setValue("adapter-secret", forHTTPHeaderField: "X-Auth-Token")
                        return request
                    }
                ], retriers: [RetryPolicy(maximumAttempts: 2, baseDelay: 0.01)]),
            errorHandler: ErrorHandler(), configuration: configuration)
        _ = await outcome(
            connect.request(
                Call(endpoint: "/status/503", authorizationToken: .bearer(token: "pipe-secret")), debugResponse: true))
        let text = logger.text
        #expect(text.contains("503"))
        #expect(!text.contains("pipe-secret"))
        #expect(!text.contains("adapter-secret"))

        let quiet = CapturingLogger()
        var quietConfiguration = configuration
        quietConfiguration.logger = quiet
        let quietConnect = Connect(
            middleware: ConnectMiddleware(retriers: [RetryPolicy(maximumAttempts: 2, baseDelay: 0.01)]),
            errorHandler: ErrorHandler(), configuration: quietConfiguration)
        _ = await outcome(quietConnect.request(Call(endpoint: "/status/503")))
        _ = await outcome(quietConnect.request(Call(endpoint: "/redirect/2")))
        #expect(quiet.text.isEmpty)
    }

    // MARK: Uploads sent again

    @Test func uploadFromDiskFollowsA308AndIsRetriedWithItsBody() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("acceptance-\(UUID().uuidString).txt")
        try Data("from disk".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = File(key: "doc", fileURL: url)
        let redirected = UploadCall(
            endpoint: "/redirect-to",
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything/landed"), .query(key: "status_code", value: "308"),
                .form(key: "note", value: "kept")))
        let echo = try await connect.upload(files: [file], to: redirected).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/anything/landed"))
        #expect(echo.method == "POST")
        #expect(echo.files?["doc"] == .one("from disk"))
        #expect(echo.form?["note"] == .one("kept"))

        let target = HTTPBin.baseURL.appendingPathComponent("anything/mirror")
        let retrier = ClosureRetrier { attempt in
            attempt.number == 1 && attempt.statusCode == 503 ? .redirect(to: target) : .doNotRetry
        }
        let retrying = Connect(middleware: ConnectMiddleware(retriers: [retrier]), errorHandler: ErrorHandler())
        let stream = File(name: "s.txt", key: "s", mimeType: .txt, length: 6) { InputStream(data: Data("stream".utf8)) }
        let retried = try await retrying.upload(files: [file, stream], to: UploadCall(endpoint: "/status/503"))
            .decoded(toType: Echo.self).value
        #expect(retried.url.hasSuffix("/anything/mirror"))
        #expect(retried.files?["doc"] == .one("from disk"))
        #expect(retried.files?["s"] == .one("stream"))
    }

    @Test func uploadTaskCancelEndsProgressAndFailsWithCancelled() async throws {
        let task = connect.uploadTask(
            files: [File(name: "big", key: "f", mimeType: .binary, data: Data(count: 40_000_000))],
            to: UploadCall(endpoint: "/sink?slow=1"))
        task.cancel()  // at once: a sleep before it may outlast the upload in a loaded run
        for await _ in task.progress {}
        #expect(await connectError(task.response)?.isCancellation == true)
    }

    // MARK: Promise and Future values

    @Test func promiseFailureAndValueBeforeAndAfterCompletion() async throws {
        struct Boom: Error {}
        let promise = Promise<String>()
        let early = Task { try await promise.future.value }
        promise.fail(Boom())
        promise.succeed("late")
        do {
            _ = try await early.value
            Issue.record("expected Boom")
        } catch {
            #expect(error is Boom)
        }
        do {
            _ = try await promise.future.map { $0 + "!" }.value
            Issue.record("expected Boom")
        } catch {
            #expect(error is Boom)
        }
        let ready = SwiftConnect.Future(value: 3)
        #expect(try await ready.map { $0 * 2 }.value == 6)
    }

    @Test func decodingOnFutureOfResponse() async throws {
        let todo = Todo(userId: 1, id: 2, title: "r", completed: true)
        let call = Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: todo))
        let decoded = try await connect.response(call).decoded(toType: Todo.self, keyPath: "json").value
        #expect(decoded == todo)
        let error = await connectError(connect.response(call).decoded(toType: Todo.self, keyPath: "json.missing"))
        guard let failure = decodingFailure(error) else { return }
        #expect(failure.keyPath == "json.missing")
        #expect(error?.statusCode == 200)
    }
}

extension AcceptanceTests {

    // MARK: Exactly once under races

    @Test(arguments: [false, true])
    func cancellingWhileCompletingCallsEveryObserverExactlyOnce(throughThePipeline: Bool) async throws {
        let connect = throughThePipeline ? Self.pipelineConnect() : Self.connect()
        let calls = Counter()
        let outcomes = Recorder<Int>()
        let count = 60
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    let future = connect.request(TodoConnector.get(id: index))
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        future.observe { result in
                            calls.increment()
                            switch result {
                            case .success: outcomes.append(1)
                            case .failure(let error):
                                outcomes.append((error as? ConnectError)?.isCancellation == true ? 0 : -1)
                            }
                            continuation.resume()
                        }
                        if index % 3 == 0 {
                            future.cancel()
                        } else if index % 3 == 1 {
                            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(index % 7)) {
                                future.cancel()
                            }
                        }
                    }
                }
            }
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(calls.value == count)
        #expect(!outcomes.values.contains(-1))
    }

    // MARK: Released clients

    @Test func aReleasedClientCompletesFireAndForgetChainsRetriesAndUploads() async throws {
        let seen = Recorder<Int>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Counter()
            let done: @Sendable (Int) -> Void = { tag in
                seen.append(tag)
                if remaining.increment() == 3 { continuation.resume() }
            }
            do {
                // A chain whose future nobody keeps.
                Self.connect().request(TodoConnector.get(id: 1)).decoded(toType: Echo.self).map { $0.url }.observe {
                    result in
                    done((try? result.get()) != nil ? 1 : -1)
                }
                // A retry waiting while the client goes away.
                var configuration = ConnectConfiguration()
                configuration.sleep = { _ in try await Task.sleep(nanoseconds: 200_000_000) }
                Connect(
                    middleware: ConnectMiddleware(retriers: [RetryPolicy(maximumAttempts: 2, baseDelay: 0.2)]),
                    errorHandler: ErrorHandler(), configuration: configuration
                ).request(Call(endpoint: "/status/503")).observe { result in
                    done((try? result.get()) == nil ? 2 : -2)
                }
                // An upload.
                Self.connect().upload(
                    files: [File(name: "a", key: "a", mimeType: .txt, data: Data("a".utf8))], to: UploadCall()
                ).observe { result in
                    done((try? result.get()) != nil ? 3 : -3)
                }
            }
        }
        #expect(seen.values.sorted() == [1, 2, 3])
    }

    // MARK: Encoding leftovers

    @Test func percentSequencesInValuesAreData() async throws {
        let call = Call(
            endpoint: "/anything",
            parameters: CompositeParameters(
                .query(key: "encoded", value: "%20%2B"), .query(key: "empty", value: ""),
                .query(key: "plus", value: "+")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args["encoded"] == .one("%20%2B"))
        #expect(echo.args["empty"] == .one(""))
        #expect(echo.args["plus"] == .one("+"))
    }

    @Test func infiniteTimeoutIsAccepted() async throws {
        struct Patient: Connector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/get" }
            var timeoutInterval: TimeInterval? { .infinity }
        }
        _ = try await connect.request(Patient()).value
    }
}

extension AcceptanceTests {

    // MARK: Alamofire-style headers and existential connectors

    @Test func alamofireStyleHeaderHelpers() async throws {
        let basic = Call(
            endpoint: "/basic-auth/ann/pw", headers: [.authorization(username: "ann", password: "pw")])
        _ = try await connect.request(basic).value
        let call = Call(
            endpoint: "/anything", method: .post,
            headers: [
                .acceptLanguage("de-CH"), .userAgent("Acceptance/1.0"), .contentType("application/vnd.api+json"),
            ],
            parameters: Parameter.jsonObject(value: ["a": 1]))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.header("Accept-Language") == "de-CH")
        #expect(echo.header("User-Agent") == "Acceptance/1.0")
        #expect(echo.header("Content-Type") == "application/vnd.api+json")
        #expect(echo.data == #"{"a":1}"#)
    }

    @Test func authorizationHeaderFromHeadersIsDroppedOnACrossOriginRedirect() async throws {
        let other = HTTPBin.otherOriginURL.absoluteString + "/anything/away"
        let call = Call(
            endpoint: "/redirect-to", headers: [.authorization(bearerToken: "header-secret")],
            parameters: Parameter.query(key: "url", value: other))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == other)
        #expect(echo.header("Authorization") == nil)
    }

    @Test func existentialConnectorsWork() async throws {
        let connectors: [any Connector] = [TodoConnector.get(id: 1), Call(endpoint: "/anything/todos/2")]
        var urls: [String] = []
        for connector in connectors {
            urls.append(try await connect.request(connector).decoded(toType: Echo.self).value.url)
        }
        #expect(urls.map { $0.hasSuffix("/anything/todos/1") || $0.hasSuffix("/anything/todos/2") } == [true, true])
        let uploadTarget: any Connector = UploadCall()
        _ = try await connect.upload(files: nil, to: uploadTarget).value
    }
}

extension AcceptanceTests {

    // MARK: Debug output of large bodies, empty files

    @Test func debugOutputShowsAtMostTheFirst64KiBOfABody() async throws {
        let logger = CapturingLogger()
        let body = try await Self.connect(logger: logger).request(
            Call(endpoint: "/range/{n}", parameters: Parameter.path(key: "n", value: "100000")), debugResponse: true
        ).value
        #expect(body.count == 100_000)
        #expect(logger.text.utf8.count < 70_000)
        #expect(logger.text.contains("abcdefghij"))
    }

    @Test func emptyFileFromDiskUploads() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "acceptance-empty-\(UUID().uuidString).txt")
        try Data().write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        struct Seen: Decodable, Sendable {
            struct Part: Decodable, Sendable {
                let filename: String
                let size: Int
                let contentType: String
            }
            let files: [Part]
        }
        let seen = try await connect.upload(
            files: [File(key: "e", fileURL: url)], to: UploadCall(endpoint: "/multipart")
        )
        .decoded(toType: Seen.self, decoder: Self.snakeCase).value
        #expect(seen.files.map(\.size) == [0])
        #expect(seen.files.map(\.contentType) == ["text/plain"])
    }
}

extension MimeType {
    static let myAcceptanceType = MimeType(rawValue: "awesome/type")
}
