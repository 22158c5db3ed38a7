import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests sent to a real HTTP server (httpbin) and checked from its side of the wire.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct HTTPBinIntegrationTests {
    let connect = HTTPBin.connect()

    struct Call: Connector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var parameters: ParametersRepresentable? = nil
    }

    @Test func pathValuesArriveAsOneSegmentEach() async throws {
        let call = Call(
            endpoint: "/anything/users/{user}/files/{name}",
            parameters: CompositeParameters(
                .path(key: "user", value: "ann marie/ö"),
                .path(key: "name", value: "a?b#c;d=e+f.txt")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        // The server decodes the path (WSGI), so "/" inside a value shows as "/" there; what
        // matters is that every character arrives in the path, none cut off into a query or fragment.
        let path = try #require(echo.url.removingPercentEncoding)
        #expect(path == HTTPBin.baseURL.absoluteString + "/anything/users/ann marie/ö/files/a?b#c;d=e+f.txt")
        #expect(echo.args.isEmpty)
    }

    /// Spaces around a value are not part of it: `"  a b \t"` arrives as `a b`, and a value of spaces
    /// alone arrives as an empty header (as `" "`, libcurl would drop the header, and with it its own
    /// `Accept`).
    @Test func headerValuesArriveWithoutTheSpacesAroundThem() async throws {
        let call = Call(
            endpoint: "/anything",
            headers: [
                HTTPHeader(name: "X-Padded", value: "  a b \t"), HTTPHeader(name: "X-Space", value: " "), .accept(" "),
            ])
        let request = try connect.urlRequest(for: call)
        #expect(request.value(forHTTPHeaderField: "X-Padded") == "a b")
        #expect(request.value(forHTTPHeaderField: "X-Space") == "")
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.header("X-Padded") == "a b")
        #expect(echo.header("X-Space") == "")
        #expect(echo.header("Accept") == "")
    }

    /// Headers an adapter sets go out as the build's do: without the spaces around them, and a
    /// value of spaces alone as an empty header rather than none at all.
    @Test func anAdaptersHeaderValuesArriveWithoutTheSpacesAroundThem() async throws {
        let adapter = ClosureAdapter { request in
            var request = request
            request.setValue("  ", forHTTPHeaderField: "X-Blank")
            request.setValue(" v \t", forHTTPHeaderField: "X-Padded")
            return request
        }
        let adapting = HTTPBin.connect(middleware: ConnectMiddleware(adapters: [adapter]))
        let echo = try await adapting.request(Call(endpoint: "/anything")).decoded(toType: Echo.self).value
        #expect(echo.header("X-Blank") == "")
        #expect(echo.header("X-Padded") == "v")
    }

    /// An empty `Content-Type` never reaches the server: the build refuses it, and nothing is sent.
    @Test(arguments: ["", " "])
    func aBodyWithAnEmptyContentTypeIsRefused(contentType: String) async throws {
        let call = Call(
            endpoint: "/post", method: .post, parameters: Parameter.data(Data("x".utf8), contentType: contentType))
        let result = await connect.request(call).asyncResult
        guard case .failure(ConnectError.invalidRequest(let reason)) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(reason == .invalidHeader(name: "Content-Type"))
    }

    @Test func queryNamesAndValuesArriveExactlyInOrder() async throws {
        let call = Call(
            endpoint: "/get?fixed=1",
            parameters: CompositeParameters(
                .query(key: "plus", value: "1+1=2"),
                .query(key: "amp&", value: "a&b"),
                .query(key: "tag", value: "x"),
                .query(key: "tag", value: "y z"),
                .query(key: "unicode", value: "日本")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args["fixed"] == .one("1"))
        #expect(echo.args["plus"] == .one("1+1=2"))
        #expect(echo.args["amp&"] == .one("a&b"))
        #expect(echo.args["tag"] == .many(["x", "y z"]))
        #expect(echo.args["unicode"] == .one("日本"))
    }

    @Test func jsonBodyArrivesWithMethodAndContentType() async throws {
        struct Payload: Encodable {
            let name: String
            let count: Int
            let done: Bool
        }
        let call = Call(
            endpoint: "/anything", method: .patch,
            parameters: Parameter.jsonObject(value: Payload(name: "é & \"q\"", count: 3, done: true)))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "PATCH")
        #expect(echo.header("Content-Type") == "application/json")
        #expect(echo.json == .object(["name": .string("é & \"q\""), "count": .number(3), "done": .bool(true)]))
    }

    @Test func formFieldsArriveParsedByTheServer() async throws {
        let call = Call(
            endpoint: "/post", method: .post,
            parameters: CompositeParameters(
                .form(key: "greeting", value: "hello world & more"),
                .form(key: "sum", value: "1+1=2"),
                .form(key: "name", value: "Zoë")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.form?["greeting"] == .one("hello world & more"))
        #expect(echo.form?["sum"] == .one("1+1=2"))
        #expect(echo.form?["name"] == .one("Zoë"))
    }

    @Test func rawBodyArrivesWithItsContentType() async throws {
        let call = Call(
            endpoint: "/anything", method: .put,
            parameters: Parameter.data(Data("<a>1</a>".utf8), contentType: "application/xml"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.data == "<a>1</a>")
        #expect(echo.header("Content-Type") == "application/xml")
    }

    @Test func basePathIsKeptWithAndWithoutTrailingSlash() async throws {
        for base in ["anything/api/v1", "anything/api/v1/"] {
            let call = Call(baseURL: HTTPBin.baseURL.appendingPathComponent(base), endpoint: "/todos")
            let echo = try await connect.request(call).decoded(toType: Echo.self).value
            #expect(echo.url.hasSuffix("/anything/api/v1/todos"), "base \(base)")
        }
    }

    @Test func headersAndAuthorizationTokenArrive() async throws {
        struct Authorized: Connector, AuthorizedConnector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/headers" }
            var headers: [HTTPHeader] { [HTTPHeader(name: "X-Client", value: "tests")] }
            var authorizationToken: AuthorizationToken? { .bearer(token: "abc123") }
        }
        struct Headers: Decodable { let headers: [String: String] }
        let received = try await connect.request(Authorized()).decoded(toType: Headers.self).value
        #expect(received.headers["Authorization"] == "Bearer abc123")
        #expect(received.headers["X-Client"] == "tests")
    }

    @Test func basicAuthorizationIsAccepted() async throws {
        struct Login: Connector, AuthorizedConnector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/basic-auth/{user}/{password}" }
            var parameters: ParametersRepresentable? {
                CompositeParameters(.path(key: "user", value: "ann"), .path(key: "password", value: "s3cret"))
            }
            var authorizationToken: AuthorizationToken? { .basic(username: "ann", password: "s3cret") }
        }
        struct Authenticated: Decodable {
            let authenticated: Bool
            let user: String
        }
        let result = try await connect.request(Login()).decoded(toType: Authenticated.self).value
        #expect(result.authenticated)
        #expect(result.user == "ann")
    }

    @Test func statusAndHeadersAreReachable() async throws {
        let call = Call(
            endpoint: "/response-headers",
            parameters: CompositeParameters(.query(key: "X-Total-Count", value: "42")))
        let response = try await connect.response(call).value
        #expect(response.statusCode == 200)
        #expect(response.headers["x-total-count"] == "42")

        let created = try await connect.response(Call(endpoint: "/status/201", method: .post)).value
        #expect(created.statusCode == 201)
    }

    @Test func errorStatusFailsWithStatusAndBody() async throws {
        let result = await connect.request(Call(endpoint: "/status/418")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        guard case .unacceptableStatus(let response, _) = error else {
            Issue.record("expected unacceptableStatus, got \(error)")
            return
        }
        #expect(response.statusCode == 418)
        #expect(String(decoding: response.data, as: UTF8.self).contains("teapot"))
    }

    /// httpbin's `/status/N` answers most codes with an empty body, and `418` with text: a custom
    /// handler still decides, on both request paths (an adapter forces the pipeline's).
    @Test(arguments: [false, true])
    func aCustomErrorHandlerDecidesForBodiesThatAreNotJSON(throughThePipeline: Bool) async throws {
        struct StatusError: Error, Equatable { let status: Int }
        struct Handler: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { nil }
            func handle(response: [String: Any], statusCode: Int) -> Error? {
                statusCode == 404 ? nil : StatusError(status: statusCode)
            }
        }
        let middleware = ConnectMiddleware(adapters: throughThePipeline ? [ClosureAdapter { $0 }] : [])
        let connect = HTTPBin.connect(middleware: middleware, errorHandler: Handler())
        for status in [400, 418, 503] {
            let result = await connect.request(Call(endpoint: "/status/\(status)")).asyncResult
            #expect(result.failureValue as? StatusError == StatusError(status: status))
        }
        // `nil`: the response is a success after all.
        #expect(try await connect.request(Call(endpoint: "/status/404")).value.isEmpty)
    }

    @Test func unauthorizedWithBasicChallengeComesBackInsteadOfHanging() async throws {
        // FoundationNetworking waits forever on an unanswered Basic challenge; the library answers it.
        let result = await connect.request(Call(endpoint: "/basic-auth/user/pass")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        #expect(error.statusCode == 401)
        #expect(error.response?.headers["WWW-Authenticate"]?.hasPrefix("Basic") == true)
        // A hang would end at the request timeout with a timeout error, not this 401: the status
        // says it did not hang. (Not the time taken: on a loaded machine, under ThreadSanitizer, the
        // 401 itself has taken 11 s and once 19 s.)
    }

    @Test func digestChallengeComesBackInsteadOfHanging() async throws {
        let result = await connect.request(Call(endpoint: "/digest-auth/auth/user/pass")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        #expect(error.statusCode == 401)
    }

    @Test func emptyBodiesDecodeToEmptyAndFailClearlyForAModel() async throws {
        let empty = try await connect.request(Call(endpoint: "/status/204")).decoded(toType: Empty.self).value
        #expect(empty == Empty())

        let data = try await connect.request(Call(endpoint: "/status/204")).value
        #expect(data.isEmpty)

        struct Model: Decodable, Sendable { let id: Int }
        let result = await connect.request(Call(endpoint: "/status/204")).decoded(toType: Model.self).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        guard case .decoding(let failure) = error else {
            Issue.record("expected a decoding failure, got \(error)")
            return
        }
        #expect(failure.reason.contains("empty"))
    }

    @Test func keyPathDecodingReadsNestedValues() async throws {
        let call = Call(
            endpoint: "/anything", method: .post,
            parameters: Parameter.jsonObject(value: ["data": ["item": ["id": 7]]]))
        struct Item: Decodable, Sendable { let id: Int }
        let item = try await connect.request(call).decoded(toType: Item.self, keyPath: "json.data.item").value
        #expect(item.id == 7)
    }

    @Test func crossOriginRedirectDropsCredentials() async throws {
        let target = HTTPBin.otherOriginURL.appendingPathComponent("headers").absoluteString
        let call = Call(
            endpoint: "/redirect-to",
            headers: [
                .authorization(bearerToken: "secret-token"), HTTPHeader(name: "Cookie", value: "session=1"),
                HTTPHeader(name: "X-Trace", value: "kept"),
            ],
            parameters: CompositeParameters(.query(key: "url", value: target)))
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await connect.request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Host"]?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.headers["Authorization"] == nil)
        #expect(received.headers["Cookie"] == nil)
        #expect(received.headers["X-Trace"] == "kept")
    }

    /// libcurl sends a hand-set `Host` in place of the URL's: the hop to another origin carried
    /// the first origin's, and asked that server for the first one's site.
    @Test func aHandSetHostHeaderStaysWithItsOrigin() async throws {
        let base = HTTPBin.baseURL
        let host = try #require(base.host) + (base.port.map { ":\($0)" } ?? "")
        let target = HTTPBin.otherOriginURL.appendingPathComponent("headers").absoluteString
        let call = Call(
            endpoint: "/redirect-to", headers: [HTTPHeader(name: "Host", value: host)],
            parameters: CompositeParameters(.query(key: "url", value: target)))
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await connect.request(call).decoded(toType: Headers.self).value
        let otherHost = try #require(HTTPBin.otherOriginURL.host)
        #expect(received.headers["Host"] == otherHost + (base.port.map { ":\($0)" } ?? ""))
    }

    /// libcurl sends a URL's user and password as `Authorization: Basic`: they reach the origin
    /// they were given for, and not the one a retrier sends the request on to.
    @Test func aUserAndPasswordInTheBaseURLStayWithTheirOrigin() async throws {
        var components = try #require(URLComponents(url: HTTPBin.baseURL, resolvingAgainstBaseURL: false))
        components.user = "user"
        components.password = "passwd"
        let base = try #require(components.url)
        _ = try await connect.request(Call(baseURL: base, endpoint: "/basic-auth/user/passwd")).value
        let other = HTTPBin.otherOriginURL
        let mirror = ClosureRetrier { attempt in
            guard attempt.number == 1, let url = attempt.request.url,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return .doNotRetry }
            components.host = other.host
            components.path = "/headers"
            return components.url.map { .redirect(to: $0) } ?? .doNotRetry
        }
        let mirroring = HTTPBin.connect(middleware: ConnectMiddleware(retriers: [mirror]))
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await mirroring.request(Call(baseURL: base, endpoint: "/status/503"))
            .decoded(toType: Headers.self).value
        #expect(received.headers["Host"]?.hasPrefix(other.host!) == true)
        #expect(received.headers["Authorization"] == nil)
    }

    /// 127.0.0.1 → localhost → localhost/headers, with a policy that copies the first request's
    /// `Authorization` into every hop: it reached the second origin on the hop within it.
    @Test func aPolicysCopiedCredentialsNeverReachAnotherOrigin() async throws {
        let second = HTTPBin.otherOriginURL.appendingPathComponent("redirect-to").absoluteString + "?url=/headers"
        let call = Call(
            endpoint: "/redirect-to", headers: [.authorization(bearerToken: "secret-token")],
            parameters: CompositeParameters(.query(key: "url", value: second)))
        let copied = HTTPHeader.authorization(bearerToken: "secret-token")
        let connect = HTTPBin.connect {
            $0.redirectPolicy = .decide { redirect in
                var next = redirect.proposedRequest
                next.setValue(copied.value, forHTTPHeaderField: copied.name)
                return .followWith(next)
            }
        }
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await connect.request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Host"]?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.headers["Authorization"] == nil)
    }

    /// URLSession adds a configuration's `httpAdditionalHeaders` to every hop; its credentials
    /// must go no further than the origin the request was built for.
    @Test(arguments: [true, false])
    func credentialsSetInTheSessionConfigurationStayWithTheirOrigin(crossOrigin: Bool) async throws {
        let session = URLSessionConfiguration.ephemeral
        session.httpAdditionalHeaders = ["Authorization": "Bearer session-secret", "X-Trace": "kept"]
        let connect = HTTPBin.connect { $0.sessionConfiguration = session }
        let target = crossOrigin ? HTTPBin.otherOriginURL.appendingPathComponent("headers").absoluteString : "/headers"
        let call = Call(endpoint: "/redirect-to", parameters: CompositeParameters(.query(key: "url", value: target)))
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await connect.request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Authorization"] == (crossOrigin ? nil : "Bearer session-secret"))
        #expect(received.headers["X-Trace"] == "kept")
    }

    @Test func sameOriginRedirectKeepsCredentials() async throws {
        let call = Call(
            endpoint: "/redirect-to",
            headers: [.authorization(bearerToken: "secret-token")],
            parameters: CompositeParameters(.query(key: "url", value: "/headers")))
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let received = try await connect.request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Authorization"] == "Bearer secret-token")
    }

    @Test(arguments: [307, 308])
    func temporaryAndPermanentRedirectsKeepMethodAndBody(status: Int) async throws {
        let call = Call(
            endpoint: "/redirect-to", method: .post,
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything"), .query(key: "status_code", value: "\(status)"),
                .jsonObject(value: ["kept": true])))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "POST")
        #expect(echo.json == .object(["kept": .bool(true)]))
    }

    @Test func seeOtherRedirectTurnsPostIntoGet() async throws {
        let call = Call(
            endpoint: "/redirect-to", method: .post,
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything"), .query(key: "status_code", value: "303"),
                .jsonObject(value: ["dropped": true])))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.method == "GET")
        #expect(echo.json == nil)
    }

    @Test func relativeRedirectChainsAreFollowed() async throws {
        let response = try await connect.response(Call(endpoint: "/redirect/3")).value
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
    }

    @Test func redirectLoopEndsWithTooManyRedirects() async throws {
        let result = await connect.request(Call(endpoint: "/redirect/15")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        guard case .tooManyRedirects(let last) = error else {
            Issue.record("expected tooManyRedirects, got \(error)")
            return
        }
        #expect(last.statusCode == 302)
    }

    // These tests wait for the requests to reach the server with `usleep`, which keeps the test's
    // thread: an awaited sleep can end seconds late when the concurrency pool's two threads are busy
    // (the ThreadSanitizer run), and the server's answer after 10 s could then come first. A request
    // that answers first fails the test — its result is the body, not a cancellation.

    @Test func cancellingARequestInFlightFailsItWithCancelled() async throws {
        let future = connect.request(Call(endpoint: "/delay/10"))
        usleep(200_000)
        future.cancel()
        // At once, without waiting for anything.
        #expect((future.result?.failureValue as? ConnectError)?.isCancellation == true)
        let result = await future.asyncResult
        #expect((result.failureValue as? ConnectError)?.isCancellation == true)
    }

    @Test func cancellingTheAwaitingTaskCancelsTheRequest() async throws {
        let connect = self.connect
        let task = Task { try await connect.request(Call(endpoint: "/delay/10")).value }
        usleep(200_000)
        task.cancel()
        let result = await task.result
        #expect((result.failureValue as? ConnectError)?.isCancellation == true)
    }

    @Test func cancelAllRequestsCancelsEveryRequestInFlight() async throws {
        let futures = (0..<4).map { _ in connect.request(Call(endpoint: "/delay/10")) }
        let responses = (0..<2).map { _ in connect.response(Call(endpoint: "/delay/10")) }
        usleep(200_000)
        connect.cancelAllRequests()
        #expect(futures.allSatisfy { ($0.result?.failureValue as? ConnectError)?.isCancellation == true })
        #expect(responses.allSatisfy { ($0.result?.failureValue as? ConnectError)?.isCancellation == true })
        for future in futures {
            let result = await future.asyncResult
            #expect((result.failureValue as? ConnectError)?.isCancellation == true)
        }
    }

    /// Sent without a task (`DirectExchange`), a request leaves the client's registry as it
    /// completes: the client holds none of its futures afterwards.
    @Test func aClientHoldsNoFutureOfACompletedDirectRequest() async throws {
        weak var body: Future<Data>?
        weak var response: Future<Response>?
        do {
            let bodyFuture = connect.request(Call(endpoint: "/get"))
            body = bodyFuture
            let responseFuture = connect.response(Call(endpoint: "/get"))
            response = responseFuture
            _ = try await bodyFuture.value
            #expect(try await responseFuture.value.statusCode == 200)
        }
        for _ in 0..<100 where body != nil || response != nil {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(body == nil)
        #expect(response == nil)
    }

    /// Cancelled futures leave the registry too, though their transfers end later.
    @Test func aClientHoldsNoFutureOfACancelledDirectRequest() async throws {
        weak var body: Future<Data>?
        do {
            let bodyFuture = connect.request(Call(endpoint: "/delay/10"))
            body = bodyFuture
            usleep(100_000)
            connect.cancelAllRequests()
            let result = await bodyFuture.asyncResult
            #expect((result.failureValue as? ConnectError)?.isCancellation == true)
        }
        for _ in 0..<200 where body != nil {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(body == nil)
    }

    @Test func cancellingAChainEndingInFlatRecoverSendsNoFallbackRequest() async throws {
        let logger = CapturingLogger()
        let connect = HTTPBin.connect { $0.logger = logger }
        let chain = connect.request(Call(endpoint: "/delay/10")).flatRecover { _ in
            // Sent at once (no middleware): its cURL line is logged before the request goes out.
            connect.request(Call(endpoint: "/anything/fallback"), debugResponse: true)
        }
        usleep(200_000)
        chain.cancel()
        connect.configuration.callbackQueue.sync {}  // where flatRecover's step runs

        #expect((chain.result?.failureValue as? ConnectError)?.isCancellation == true)
        #expect(!logger.messages.contains { $0.contains("/anything/fallback") }, "the fallback was sent")
    }

    /// URLSession on Linux refused `HTTP://` ("unsupported URL"), from a base URL or a `Location`.
    @Test func anUppercaseSchemeReachesTheServer() async throws {
        let upper = try #require(URL(string: "HTTP" + HTTPBin.baseURL.absoluteString.dropFirst(4)))
        let echo = try await connect.request(Call(baseURL: upper, endpoint: "/get")).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/get"))

        let target = "HTTP" + HTTPBin.baseURL.absoluteString.dropFirst(4) + "/anything/landed"
        let redirected = try await connect.request(
            Call(endpoint: "/redirect-to", parameters: Parameter.query(key: "url", value: target))
        ).decoded(toType: Echo.self).value
        #expect(redirected.url.hasSuffix("/anything/landed"))
    }

    @Test func anEndlessTimeoutWaitsInsteadOfCrashing() async throws {
        // FoundationNetworking traps converting an infinite timeout to milliseconds.
        let endless = HTTPBin.connect { $0.timeoutInterval = .infinity }
        let echo = try await endless.request(Call(endpoint: "/get")).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/get"))

        let session = URLSessionConfiguration.ephemeral
        session.timeoutIntervalForRequest = .infinity
        let endlessSession = HTTPBin.connect {
            $0.sessionConfiguration = session
            $0.timeoutInterval = nil
        }
        #expect(!(try await endlessSession.request(Call(endpoint: "/get")).value).isEmpty)
    }

    @Test func aTimeoutUnderASecondLeavesTimeForTheAnswer() async throws {
        // On Linux, FoundationNetworking's whole-second timer made 0.5 s time out at once.
        let halfASecond = HTTPBin.connect { $0.timeoutInterval = 0.5 }
        let echo = try await halfASecond.request(Call(endpoint: "/get")).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/get"))
    }

    /// A timeout is a transport error whose description says so (FoundationNetworking's own says
    /// only "NSURLErrorDomain error -1001").
    @Test func aTimeoutSaysItTimedOut() async throws {
        let impatient = HTTPBin.connect { $0.timeoutInterval = 1 }
        let result = await impatient.request(Call(endpoint: "/delay/3")).asyncResult
        guard case .failure(let error as ConnectError) = result, case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(result)")
            return
        }
        #expect((underlying as? URLError)?.code == .timedOut)
        #expect(error.description.contains("timed out"), "\(error)")
    }

    @Test func releasedConnectStillCompletesItsRequests() async throws {
        var client: Connect? = HTTPBin.connect()
        weak let weakClient = client
        let future = client!.request(Call(endpoint: "/delay/1"))
        client = nil
        #expect(weakClient == nil)
        let data = try await future.value
        #expect(!data.isEmpty)
    }

    @Test func connectionRefusedIsATransportError() async throws {
        // Port 9 (discard) on loopback: nothing listens there.
        let call = Call(baseURL: URL(string: "http://127.0.0.1:9")!, endpoint: "/get")
        let result = await connect.request(call).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        guard case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(error)")
            return
        }
        #expect(underlying is URLError)
    }

    @Test func manyConcurrentRequestsAllComplete() async throws {
        let connect = self.connect
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let call = Call(endpoint: "/anything/{n}", parameters: Parameter.path(key: "n", value: "\(index)"))
                    return try await connect.request(call).decoded(toType: Echo.self).value.url
                }
            }
            var urls: Set<String> = []
            for try await url in group { urls.insert(url) }
            #expect(urls.count == 50)
        }
    }
}

extension Result {
    /// The error, if this is a failure.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
