import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A reviewer's black-box acceptance tests: edge cases of what the seed, DESIGN.md's contracts and
/// Usage.md promise, against httpbin on loopback (public API only).
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct ReviewAcceptanceTests {

    /// A connector for one-off calls, every requirement settable.
    typealias Call = SeedCapabilityTests.Call

    let connect = HTTPBin.connect()

    func failure<Value>(_ future: SwiftConnect.Future<Value>) async -> ConnectError? {
        await expectConnectError(future)
    }

    // MARK: Path values

    @Test(arguments: [
        "👍🏽", "e\u{301}", "a;b=c", "user@host:8080", "[x]", "<>\"`^|\\", "{}", "%", "%2F", "+",
        "tab\there", " ", "~-._", "a//b", "?", "#",
    ])
    func anyPathValueArrivesAsExactlyOneSegment(value: String) async throws {
        let call = Call(endpoint: "/anything/a/{v}/z", parameters: Parameter.path(key: "v", value: value))
        let sent = try #require(connect.urlRequest(for: call).url)
        let segments = URLComponents(url: sent, resolvingAgainstBaseURL: false)!.percentEncodedPath
            .split(separator: "/", omittingEmptySubsequences: false)
        #expect(segments.count == 5)
        #expect(segments[3].removingPercentEncoding == value)
        #expect(sent.query == nil && sent.fragment == nil)
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args.isEmpty)
        #expect(echo.url.hasSuffix("/z"))
    }

    @Test func aLongPathValueFillsOneSegment() async throws {
        let value = String(repeating: "ab/c%", count: 300)
        let call = Call(endpoint: "/anything/{v}", parameters: Parameter.path(key: "v", value: value))
        let sent = try #require(connect.urlRequest(for: call).url)
        let last = try #require(sent.absoluteString.split(separator: "/").last)
        #expect(String(last).removingPercentEncoding == value)
        let response = try await connect.response(call).value
        #expect(response.statusCode == 200)
    }

    @Test func twoSlotsInOneSegmentAreBothFilledOnce() async throws {
        let call = Call(
            endpoint: "/anything/{a}-{b}.json",
            parameters: CompositeParameters(.path(key: "a", value: "1/2"), .path(key: "b", value: "%41")))
        let sent = try #require(connect.urlRequest(for: call).url)
        #expect(sent.absoluteString.hasSuffix("/anything/1%2F2-%2541.json"))
    }

    @Test func sameSlotNamesAreCaseSensitive() async throws {
        let call = Call(endpoint: "/anything/{ID}", parameters: Parameter.path(key: "id", value: "1"))
        guard case .invalidRequest? = await failure(connect.request(call)) else {
            Issue.record("a value for {id} must not fill {ID}")
            return
        }
    }

    // MARK: Query items

    @Test func queryEdgeValuesArriveExactly() async throws {
        let long = String(repeating: "x+&=", count: 200)
        let call = Call(
            endpoint: "/anything",
            parameters: CompositeParameters(
                .query(key: "", value: "emptykey"),
                .query(key: "emoji", value: "👍🏽 e\u{301}"),
                .query(key: "newline", value: "a\nb"),
                .query(key: "long", value: long),
                .query(key: "quote", value: "'\"<>`{}|\\^[]"),
                .query(key: "emoji", value: "second")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args[""] == .one("emptykey"))
        #expect(echo.args["emoji"] == .many(["👍🏽 e\u{301}", "second"]))
        #expect(echo.args["newline"] == .one("a\nb"))
        #expect(echo.args["long"] == .one(long))
        #expect(echo.args["quote"] == .one("'\"<>`{}|\\^[]"))
    }

    @Test func aQueryItemWithoutValueIsSentAsABareName() async throws {
        struct Flag: ParametersRepresentable {
            func apply(to parameters: inout RequestParameters) throws {
                parameters.appendQueryItem(name: "flag", value: nil)
                parameters.appendQueryItem(name: "a b", value: "c d")
            }
        }
        let call = Call(endpoint: "/anything", parameters: Flag())
        let sent = try #require(connect.urlRequest(for: call).url)
        #expect(sent.query == "flag&a%20b=c%20d")
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args["flag"] == .one(""))
        #expect(echo.args["a b"] == .one("c d"))
    }

    @Test func endpointQueryIsKeptAheadOfParameterQueryWithRepeatedKeys() async throws {
        let call = Call(
            endpoint: "/anything/{id}?k=1&k=2",
            parameters: CompositeParameters(.path(key: "id", value: "?k=9"), .query(key: "k", value: "3")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.args["k"] == .many(["1", "2", "3"]))
        #expect(echo.url.contains("/anything/%3Fk=9?") || echo.url.contains("/anything/%3Fk%3D9?"))
    }

    // MARK: Bodies

    @Test func formFieldsWithReservedAndUnicodeCharactersArriveExactly() async throws {
        let call = Call(
            endpoint: "/post", method: .post,
            parameters: CompositeParameters(
                .form(key: "a+b", value: "1+1=2 & more"),
                .form(key: "name", value: "Zoë 👍🏽"),
                .form(key: "empty", value: ""),
                .form(key: "name", value: "second"),
                .form(key: "nl", value: "x\r\ny")))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.form?["a+b"] == .one("1+1=2 & more"))
        #expect(echo.form?["name"] == .many(["Zoë 👍🏽", "second"]))
        #expect(echo.form?["empty"] == .one(""))
        #expect(echo.form?["nl"] == .one("x\r\ny"))
        #expect(echo.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true)
    }

    @Test func deleteAndPatchCarryTheirBodies() async throws {
        struct Payload: Encodable, Sendable { let id: Int }
        let delete = Call(
            endpoint: "/anything", method: .delete, parameters: Parameter.jsonObject(value: Payload(id: 7)))
        let echo = try await connect.request(delete).decoded(toType: Echo.self).value
        #expect(echo.method == "DELETE")
        #expect(echo.json == .object(["id": .number(7)]))
        let patch = Call(endpoint: "/anything", method: .patch, parameters: Parameter.form(key: "x", value: "y"))
        let patched = try await connect.request(patch).decoded(toType: Echo.self).value
        #expect(patched.method == "PATCH")
        #expect(patched.form?["x"] == .one("y"))
    }

    @Test func jsonBodiesThatAreNotObjectsArrive() async throws {
        let array = Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: [1, 2]))
        #expect(
            try await connect.request(array).decoded(toType: Echo.self).value.json == .array([.number(1), .number(2)]))
        let string = Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: "a/b"))
        #expect(try await connect.request(string).decoded(toType: Echo.self).value.json == .string("a/b"))
        let null = Call(
            endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: String?.none))
        let echo = try await connect.request(null).decoded(toType: Echo.self).value
        #expect(echo.data == "null")
    }

    @Test func anEmptyRawBodyIsSentWithItsContentType() async throws {
        let call = Call(
            endpoint: "/anything", method: .post, parameters: Parameter.data(Data(), contentType: "text/plain"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.data == "")
        #expect(echo.header("Content-Type") == "text/plain")
    }

    @Test func headGivesHeadersAndAnEmptyBody() async throws {
        let call = Call(endpoint: "/get", method: .head)
        let response = try await connect.response(call).value
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.headers["content-type"] == "application/json")
        _ = try await connect.request(call).decoded(toType: Empty.self).value
    }

    @Test(arguments: [HTTPMethod.head, HTTPMethod(rawValue: "head"), HTTPMethod(rawValue: "Get")])
    func aBodyOnHeadOrGetInAnyCaseIsRefused(method: HTTPMethod) async throws {
        let call = Call(endpoint: "/anything", method: method, parameters: Parameter.form(key: "a", value: "b"))
        guard case .invalidRequest? = await failure(connect.request(call)) else {
            Issue.record("a body on \(method.rawValue) must be refused")
            return
        }
    }

    // MARK: Error handling with odd bodies

    @Test func defaultHandlerWithOddMessageValuesStillFailsWithTheStatus() async throws {
        for body in [#"{"message": 42}"#, #"{"message": null}"#, #"{"error": true}"#, "[]", "null", "\"text\"", "{"] {
            let transport = StubTransport { _ in StubTransport.Reply(statusCode: 422, body: Data(body.utf8)) }
            let stubbed = Connect(transport: transport)
            let error = await failure(stubbed.request(Call(endpoint: "/x")))
            #expect(error?.statusCode == 422, "body \(body)")
            #expect(error?.responseBody == Data(body.utf8), "body \(body)")
            guard case .unacceptableStatus? = error else {
                Issue.record("expected unacceptableStatus for \(body), got \(String(describing: error))")
                continue
            }
        }
    }

    @Test func deeplyNestedErrorAndResponseBodiesFailCleanly() async throws {
        // As deep as the other suites' deepest body. 100,000 levels held one of the two
        // cooperative threads for 19 s under ThreadSanitizer, and tests racing a request's
        // cancellation against /delay/10 then saw the response first.
        let depth = 20_000
        let body = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        let objects = Data(
            (String(repeating: #"{"error":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8)
        for data in [body, objects] {
            let transport = StubTransport { request in
                StubTransport.Reply(statusCode: request.url?.path == "/ok" ? 200 : 500, body: data)
            }
            var configuration = ConnectConfiguration()
            configuration.logger = CapturingLogger()
            let stubbed = Connect(configuration: configuration, transport: transport)
            let error = await failure(stubbed.request(Call(endpoint: "/fail"), debugResponse: true))
            #expect(error?.statusCode == 500)
            let decoded = await stubbed.request(Call(endpoint: "/ok"), debugResponse: true)
                .decoded(toType: Int.self, keyPath: "0.0.0").asyncResult
            #expect((try? decoded.get()) == nil)
        }
    }

    @Test func aCustomHandlerReturningNilForAnEmptyErrorBodyDeliversEmptyData() async throws {
        struct Lenient: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { response.isEmpty ? nil : URLError(.badServerResponse) }
        }
        let lenient = HTTPBin.connect(errorHandler: Lenient())
        let data = try await lenient.request(Call(endpoint: "/status/500")).value
        #expect(data.isEmpty)
        let decoded = try await lenient.request(Call(endpoint: "/status/500")).decoded(toType: Empty.self).value
        _ = decoded
    }

    @Test func anErrorStatusWithAnEmptyBodyKeepsItsStatus() async throws {
        let error = await failure(connect.request(Call(endpoint: "/status/503")))
        #expect(error?.statusCode == 503)
        #expect(error?.responseBody?.isEmpty ?? true)
        #expect(error?.isCancellation == false)
    }

    // MARK: Futures

    @Test func observingACompletedFutureRunsOnTheCallbackQueueInOrder() async throws {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "review.callbacks")
        queue.setSpecific(key: key, value: 7)
        let queued = HTTPBin.connect { $0.callbackQueue = queue }
        let future = queued.request(Call(endpoint: "/get"))
        _ = try await future.value
        #expect(future.isCompleted)
        let order = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<5 {
                future.observe { _ in
                    order.append(index)
                    onQueue.append(DispatchQueue.getSpecific(key: key) == 7)
                    if index == 4 { continuation.resume() }
                }
            }
        }
        #expect(order.values == [0, 1, 2, 3, 4])
        #expect(onQueue.values.allSatisfy { $0 })
    }

    @Test func cancellingTwiceAndObservingAfterGivesOneCancellation() async throws {
        let calls = Counter()
        let future = connect.request(Call(endpoint: "/delay/3"))
        future.observe { _ in calls.increment() }
        future.cancel()
        future.cancel()
        connect.cancelAllRequests()
        let error = await failure(future)
        #expect(error?.isCancellation == true)
        let later = await failure(future.map { $0.count })
        #expect(later?.isCancellation == true)
        #expect(calls.value == 1)
    }

    @Test func cancellingADerivedFutureCancelsTheRequestAndEveryStep() async throws {
        let mapped = Counter()
        let source = connect.request(Call(endpoint: "/delay/3"))
        let derived = source.decoded(toType: Echo.self).map { echo -> String in
            mapped.increment()
            return echo.url
        }
        derived.cancel()
        #expect(await failure(derived)?.isCancellation == true)
        #expect(await failure(source)?.isCancellation == true)
        #expect(mapped.value == 0)
    }

    @Test func aThrownErrorFromMapReachesTheObserverUnchanged() async throws {
        struct Marker: Error, Equatable { let id: Int }
        let result = await connect.request(Call(endpoint: "/get")).map { _ -> Int in throw Marker(id: 3) }.asyncResult
        #expect(throws: Marker(id: 3)) { try result.get() }
    }

    @Test func aFutureReleasedConnectMidFlightStillCompletesWhenAwaited() async throws {
        weak var weakConnect: Connect?
        let future: SwiftConnect.Future<Echo> = {
            let temporary = HTTPBin.connect(middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }]))
            weakConnect = temporary
            return temporary.request(Call(endpoint: "/delay/1")).decoded(toType: Echo.self)
        }()
        let echo = try await future.value
        #expect(echo.url.hasSuffix("/delay/1"))
        _ = weakConnect
    }

    @Test func aConnectIsReleasedAfterItsRequestsComplete() async throws {
        weak var weakConnect: Connect?
        do {
            let temporary = HTTPBin.connect(
                middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }], retriers: [RetryPolicy()]))
            weakConnect = temporary
            _ = try await temporary.request(Call(endpoint: "/get")).value
            _ = await temporary.request(Call(endpoint: "/status/404")).asyncResult
            let cancelled = temporary.request(Call(endpoint: "/delay/3"))
            cancelled.cancel()
            _ = await cancelled.asyncResult
        }
        var released = false
        // Up to 10 s: generous for a loaded machine (ThreadSanitizer); released, it stops at once.
        for _ in 0..<1_000 where !released {
            released = weakConnect == nil
            if !released { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        #expect(released, "a Connect must not be kept alive by its finished requests")
    }

    // MARK: Logging

    @Test func nothingIsLoggedWithoutDebugResponseEvenOnErrors() async throws {
        let logger = CapturingLogger()
        let quiet = HTTPBin.connect(
            middleware: ConnectMiddleware(retriers: [RetryPolicy(maximumAttempts: 2, baseDelay: 0)])
        ) {
            $0.logger = logger
        }
        _ = await quiet.request(Call(endpoint: "/status/500", authorizationToken: .bearer(token: "s3cret"))).asyncResult
        _ = await quiet.request(Call(endpoint: "/redirect/1")).asyncResult
        _ = await quiet.upload(
            files: [File(name: "a.txt", key: "f", mimeType: .txt, data: Data("x".utf8))],
            to: Call(endpoint: "/post", method: .post)
        ).asyncResult
        #expect(logger.messages.isEmpty)
    }

    @Test func debugOutputNeverShowsBasicCredentialsOrTheirBase64() async throws {
        let logger = CapturingLogger()
        let verbose = HTTPBin.connect { $0.logger = logger }
        let call = Call(
            endpoint: "/basic-auth/{user}/{password}",
            parameters: CompositeParameters(
                .path(key: "user", value: "alice"), .path(key: "password", value: "pw-Secr3t")),
            authorizationToken: .basic(username: "alice", password: "pw-Secr3t"))
        _ = try await verbose.request(call, debugResponse: true).value
        let base64 = Data("alice:pw-Secr3t".utf8).base64EncodedString()
        #expect(!logger.text.isEmpty)
        #expect(!logger.text.contains(base64))
    }

    // MARK: Redirects

    @Test func proxyAuthorizationAndCookieAreDroppedOnACrossOriginRedirectButOtherHeadersStay() async throws {
        let target = HTTPBin.otherOriginURL.appendingPathComponent("anything").absoluteString
        let call = Call(
            endpoint: "/redirect-to",
            headers: [
                HTTPHeader(name: "Proxy-Authorization", value: "Basic cHJveHk6cHc="),
                HTTPHeader(name: "Cookie", value: "session=abc"),
                HTTPHeader(name: "X-Trace", value: "keep-me"),
            ],
            parameters: CompositeParameters(
                .query(key: "url", value: target), .query(key: "status_code", value: "307")),
            authorizationToken: .custom(token: "Token t0k"))
        let plain = HTTPBin.connect { configuration in
            let session = URLSessionConfiguration.default
            session.httpCookieStorage = nil
            session.httpShouldSetCookies = false
            configuration.sessionConfiguration = session
        }
        let echo = try await plain.request(call).decoded(toType: Echo.self).value
        #expect(echo.url.contains("localhost") || echo.url.contains("127.0.0.1"))
        #expect(echo.header("Authorization") == nil)
        #expect(echo.header("Proxy-Authorization") == nil)
        #expect(echo.header("Cookie") == nil)
        #expect(echo.header("X-Trace") == "keep-me")
    }

    // MARK: Batch 2: futures without a network

    @Test func cancellingAPromisesFutureFailsItAtOnceAndTheLaterValueIsIgnored() async throws {
        let promise = Promise<Int>()
        let calls = Counter()
        promise.future.observe { _ in calls.increment() }
        promise.future.cancel()
        #expect(promise.succeed(1) == false)
        let error = await failure(promise.future)
        #expect(error?.isCancellation == true)
        #expect(calls.value == 1)
    }

    @Test func aDroppedPromiseFailsItsFutureInsteadOfHanging() async throws {
        let future: SwiftConnect.Future<Int> = Promise<Int>(callbackQueue: DispatchQueue(label: "dropped")).future
        let error = await failure(future)
        #expect(error != nil)
        #expect(error?.isCancellation == false)
    }

    @Test func awaitingAPendingFutureInACancelledTaskThrowsCancelled() async throws {
        let promise = Promise<Int>()
        let task = Task { try await promise.future.value }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("expected a cancellation")
        } catch {
            #expect((error as? ConnectError)?.isCancellation == true)
        }
        _ = promise
    }

    @Test func anObserverAddedFromInsideAnObserverRunsAfterIt() async throws {
        let queue = DispatchQueue(label: "nested.observers")
        let promise = Promise<Int>(callbackQueue: queue)
        let order = Recorder<String>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            promise.future.observe { _ in
                order.append("outer")
                promise.future.observe { _ in
                    order.append("inner")
                    continuation.resume()
                }
                order.append("outer end")
            }
            promise.succeed(1)
        }
        #expect(order.values == ["outer", "outer end", "inner"])
    }

    @Test func recoverAndMapErrorAreNotCalledOnSuccess() async throws {
        let touched = Counter()
        let value = try await Future(value: 5)
            .mapError { error in
                touched.increment()
                return error
            }
            .recover { _ in
                touched.increment()
                return 0
            }
            .flatRecover { _ in
                touched.increment()
                return Future(value: 0)
            }
            .value
        #expect(value == 5)
        #expect(touched.value == 0)
    }

    @Test func aCancelledRetryWaitEndsAtOnce() async throws {
        struct Forever: RequestRetrier {
            func retry(_ attempt: FailedAttempt) async -> RetryResult { .retryWithDelay(3_600) }
        }
        let sent = Counter()
        let transport = StubTransport { _ in
            sent.increment()
            return StubTransport.Reply(statusCode: 503, body: Data())
        }
        let waiting = Connect(
            middleware: ConnectMiddleware(retriers: [Forever()]), errorHandler: ErrorHandler(), transport: transport)
        let future = waiting.request(Call(endpoint: "/x"))
        try await waitUntil { sent.value == 1 }
        waiting.cancelAllRequests()
        #expect(await failure(future)?.isCancellation == true)
        #expect(sent.value == 1)
    }

    /// Polls `condition` for up to 30 seconds (a loaded machine under ThreadSanitizer).
    func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<3_000 where !condition() {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(condition())
    }

    // MARK: Batch 2: error handler bodies

    @Test func shortTextErrorBodiesInTheirCharsetAreTheMessage() async throws {
        let cases: [(Data, String, String?)] = [
            (Data([0x63, 0x61, 0x66, 0xE9]), "text/plain; charset=ISO-8859-1", "café"),
            (Data([0x80, 0x20, 0x35]), "text/plain; charset=windows-1252", "€ 5"),
            (Data("plain ü".utf8), "text/plain", "plain ü"),
            (Data(repeating: 0x61, count: 2_000), "text/plain", nil),
        ]
        for (body, contentType, expected) in cases {
            let transport = StubTransport { _ in
                StubTransport.Reply(statusCode: 400, headers: ["Content-Type": contentType], body: body)
            }
            let error = await failure(Connect(transport: transport).request(Call(endpoint: "/x")))
            guard case .unacceptableStatus(let response, let message)? = error else {
                Issue.record("expected unacceptableStatus, got \(String(describing: error))")
                continue
            }
            #expect(message == expected, "\(contentType)")
            #expect(response.data == body)
        }
    }

    @Test func aHandlerSeeingTheWholeResponseGetsHeadersAndNonJSONBodies() async throws {
        struct HeaderHandler: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { nil }
            func handle(_ response: Response) -> Error? {
                ErrorMessage(
                    message: (response.headers["x-reason"] ?? "none") + "|"
                        + String(decoding: response.data, as: UTF8.self))
            }
        }
        let transport = StubTransport { _ in
            StubTransport.Reply(statusCode: 409, headers: ["X-Reason": "busy"], body: Data("<html>".utf8))
        }
        let result = await Connect(errorHandler: HeaderHandler(), transport: transport).request(Call(endpoint: "/x"))
            .asyncResult
        #expect(throws: ErrorMessage(message: "busy|<html>")) { try result.get() }
    }

    // MARK: Batch 2: against httpbin

    @Test func theTokenWinsOverAnAuthorizationHeaderInHeaders() async throws {
        let call = Call(
            endpoint: "/headers", headers: [HTTPHeader(name: "authorization", value: "Bearer from-headers")],
            authorizationToken: .bearer(token: "from-token"))
        struct Headers: Decodable { let headers: [String: String] }
        let headers = try await connect.request(call).decoded(toType: Headers.self).value.headers
        #expect(headers["Authorization"] == "Bearer from-token")
    }

    @Test func theLastHeaderOfANameWinsWhateverItsCase() async throws {
        let call = Call(
            endpoint: "/anything",
            headers: [HTTPHeader(name: "X-Trace", value: "1"), HTTPHeader(name: "x-trace", value: "2")])
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.header("X-Trace") == "2")
    }

    @Test func nullAndMissingKeyPathsDecodeAsDocumented() async throws {
        let call = Call(endpoint: "/anything")  // a GET echoes "json": null
        #expect(try await connect.request(call).decoded(toType: Int?.self, keyPath: "json").value == nil)
        #expect(
            try await connect.request(call).decodedIfPresent(toType: Int.self, keyPath: "nothing.here").value == nil)
        let error = await failure(connect.request(call).decoded(toType: Int.self, keyPath: "json"))
        guard let failure = decodingFailure(error) else { return }
        #expect(failure.keyPath == "json")
        #expect(error?.statusCode == 200)
        let index = await self.failure(connect.request(call).decoded(toType: String.self, keyPath: "url.0"))
        guard case .decoding? = index else {
            Issue.record("a key path into a string must fail decoding, got \(String(describing: index))")
            return
        }
    }

    @Test func theResponseOfAFollowedRedirectNamesTheURLThatAnswered() async throws {
        let response = try await connect.response(Call(endpoint: "/redirect/2")).value
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
    }

    @Test func deleteAnsweredWith204DecodesToEmpty() async throws {
        let call = Call(endpoint: "/status/204", method: .delete)
        _ = try await connect.request(call).decoded(toType: Empty.self).value
        #expect(try await connect.request(call).decodedIfPresent(toType: Echo.self).value == nil)
    }

    @Test func anInterceptorAcceptingAnErrorStatusDeliversItsBody() async throws {
        let accepting = HTTPBin.connect(
            middleware: ConnectMiddleware(interceptors: [
                ClosureInterceptor { $0.statusCode == 418 ? .accept : .proceed }
            ]))
        let data = try await accepting.request(Call(endpoint: "/status/418")).value
        #expect(String(decoding: data, as: UTF8.self).contains("teapot"))
    }

    @Test func configurationBaseURLWithAPathKeepsItsPath() async throws {
        let staged = HTTPBin.connect {
            $0.baseURL = HTTPBin.baseURL.appendingPathComponent("anything").appendingPathComponent("v2")
        }
        let call = Call(
            baseURL: URL(string: "https://example.invalid/ignored")!, endpoint: "/items/{id}",
            parameters: Parameter.path(key: "id", value: "a b"))
        let echo = try await staged.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/v2/items/a%20b")
    }

    @Test func controlCharactersInAPathValueAreEncodedNotSentRaw() throws {
        let call = Call(endpoint: "/anything/{v}", parameters: Parameter.path(key: "v", value: "a\nb\u{0}c\u{7F}"))
        let sent = try #require(connect.urlRequest(for: call).url)
        #expect(sent.absoluteString.hasSuffix("/anything/a%0Ab%00c%7F"))
    }

    // MARK: Batch 3: endpoint templates written by hand

    @Test(
        arguments: [
            ("/files/a%20b/{id}", "/files/a%20b/1"),
            ("/search/{id}?q=a%2Bb&r=%26", "/search/1?q=a%2Bb&r=%26"),
            ("/café/{id}", "/caf%C3%A9/1"),
            ("/my docs/{id}", "/my%20docs/1"),
            ("/{id}/", "/1/"),
            ("/x/{id}{id2}", nil),
        ] as [(String, String?)])
    func handWrittenEndpointsAreNotEncodedTwice(endpoint: String, expected: String?) throws {
        let base = URL(string: "http://127.0.0.1:9")!
        var parameters = [Parameter.path(key: "id", value: "1")]
        if endpoint.contains("{id2}") { parameters.append(.path(key: "id2", value: "2")) }
        let call = Call(baseURL: base, endpoint: endpoint, parameters: CompositeParameters(parameters))
        let sent = try #require(connect.urlRequest(for: call).url).absoluteString
        if let expected {
            #expect(sent == "http://127.0.0.1:9" + expected)
        } else {
            #expect(sent == "http://127.0.0.1:9/x/12")
        }
    }

    @Test func anEndpointWithoutALeadingSlashJoinsTheBasePathOnce() throws {
        for base in ["http://127.0.0.1:9/api", "http://127.0.0.1:9/api/"] {
            let call = Call(
                baseURL: URL(string: base)!, endpoint: "todos/{id}", parameters: Parameter.path(key: "id", value: "1"))
            let sent = try connect.urlRequest(for: call).url?.absoluteString
            #expect(sent == "http://127.0.0.1:9/api/todos/1", "\(base)")
        }
    }

    @Test func anEmptyEndpointCallsTheBaseURL() async throws {
        let call = Call(
            baseURL: HTTPBin.baseURL.appendingPathComponent("anything").appendingPathComponent("root"), endpoint: "")
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.url == HTTPBin.baseURL.absoluteString + "/anything/root")
    }

    // MARK: Batch 3: redirects without a usable Location

    @Test(arguments: ["ftp://127.0.0.1/file", "http:///nohost", "http://127.0.0.1:0/x"])
    func aRedirectWithoutAUsableLocationIsTheResponse(location: String) async throws {
        let call = Call(
            endpoint: "/redirect-to",
            parameters: CompositeParameters(
                .query(key: "url", value: location), .query(key: "status_code", value: "302")))
        for client in [connect, HTTPBin.connect(middleware: ConnectMiddleware(adapters: [ClosureAdapter { $0 }]))] {
            let error = await failure(client.request(call))
            guard case .unacceptableStatus(let response, _)? = error else {
                Issue.record("expected unacceptableStatus(302) for \(location), got \(String(describing: error))")
                continue
            }
            #expect(response.statusCode == 302)
        }
        var accepting = call
        accepting.acceptableStatusCodes = 200..<400
        let response = try await connect.response(accepting).value
        #expect(response.statusCode == 302)
    }

    @Test func aSchemeRelativeRedirectToAnotherHostDropsTheToken() async throws {
        let other = HTTPBin.otherOriginURL
        let location = "//\(other.host!):\(other.port!)/anything"
        let call = Call(
            endpoint: "/redirect-to", parameters: Parameter.query(key: "url", value: location),
            authorizationToken: .bearer(token: "relative-secret"))
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        #expect(echo.header("Host")?.hasPrefix(other.host!) == true)
        #expect(echo.header("Authorization") == nil)
    }

    // MARK: Batch 3: uploads

    @Test func anUploadWithoutFilesSendsItsFieldsAsMultipart() async throws {
        let call = Call(
            endpoint: "/anything", method: .put,
            parameters: CompositeParameters(.form(key: "a", value: "1 + 1"), .form(key: "a", value: "ü")))
        let data = try await connect.upload(files: nil, to: call).value
        let echo = try JSONDecoder().decode(Echo.self, from: data)
        #expect(echo.method == "PUT")
        #expect(echo.form?["a"] == .many(["1 + 1", "ü"]))
        #expect(echo.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        let empty = try await connect.upload(files: [], to: Call(endpoint: "/anything", method: .post)).value
        #expect(try JSONDecoder().decode(Echo.self, from: empty).method == "POST")
    }

    @Test func anUploadToADeleteConnectorIsSent() async throws {
        let file = File(name: "a.txt", key: "f", mimeType: .txt, data: Data("hello".utf8))
        let echo = try JSONDecoder().decode(
            Echo.self,
            from: try await connect.upload(files: [file], to: Call(endpoint: "/anything", method: .delete)).value)
        #expect(echo.method == "DELETE")
        #expect(echo.files?["f"] == .one("hello"))
    }

    // MARK: Batch 4: files are closed, headers with non-ASCII values

    /// How many of this process's descriptors are open on `file`.
    static func openDescriptors(on file: URL) -> Int {
        let directory = "/proc/self/fd"
        let target = file.resolvingSymlinksInPath().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.filter { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + entry)) == target
        }.count
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func uploadedFilesAreClosedAfterSuccessErrorAndCancellation() async throws {
        let directory = try TemporaryDirectory()
        let small = try directory.file("small.bin", Data(repeating: 7, count: 100_000))
        let large = try directory.largeFile("large.bin", size: 40_000_000)
        let probe = try FileHandle(forReadingFrom: small)
        #expect(Self.openDescriptors(on: small) == 1)  // the probe itself sees open files
        try probe.close()
        _ = try await connect.upload(
            files: [File(key: "f", fileURL: small)], to: Call(endpoint: "/post", method: .post)
        ).value
        _ = await connect.upload(
            files: [File(key: "f", fileURL: small)], to: Call(endpoint: "/status/500", method: .post)
        ).asyncResult
        let started = Counter()
        let future = connect.upload(
            files: [File(key: "f", fileURL: large)], to: Call(endpoint: "/sink?slow=1", method: .post)
        ) { progress in
            if progress.bytesSent > 0 { started.increment() }
        }
        try await waitUntil { started.value > 0 || future.isCompleted }
        future.cancel()
        #expect(await failure(future)?.isCancellation == true)
        try await waitUntil { Self.openDescriptors(on: small) == 0 && Self.openDescriptors(on: large) == 0 }
    }

    @Test func aNonASCIIHeaderValueIsSentNotDropped() async throws {
        let call = Call(endpoint: "/anything", headers: [HTTPHeader(name: "X-Name", value: "Zoë")])
        let echo = try await connect.request(call).decoded(toType: Echo.self).value
        let received = try #require(echo.header("X-Name"))
        // werkzeug reads header bytes as ISO-8859-1: UTF-8 "ë" arrives as "Ã«".
        #expect(received == "Zoë" || received == "Zo\u{C3}\u{AB}")
    }

    // MARK: Batch 5: methods across redirects

    @Test func headStaysHeadAcrossA303() async throws {
        let call = Call(
            endpoint: "/redirect-to", method: .head,
            parameters: CompositeParameters(
                .query(key: "url", value: "/anything/after"), .query(key: "status_code", value: "303")))
        let response = try await connect.response(call).value
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.request.httpMethod == "HEAD" || response.url?.path == "/anything/after")
    }

    @Test(arguments: ["301", "302", "303"])
    func putAnswered303BecomesGetAndPostAnswered301Too(status: String) async throws {
        for method in [HTTPMethod.post, .put] {
            let call = Call(
                endpoint: "/redirect-to", method: method,
                parameters: CompositeParameters(
                    .query(key: "url", value: "/anything/after"), .query(key: "status_code", value: status)))
            // A body needs the query in the endpoint: `.form` makes the body, the URL keeps the query.
            var withBody = call
            withBody.endpoint = "/redirect-to?url=%2Fanything%2Fafter&status_code=\(status)"
            withBody.parameters = Parameter.form(key: "field", value: "v")
            let echo = try await connect.request(withBody).decoded(toType: Echo.self).value
            if status == "303" || method == .post {
                #expect(echo.method == "GET", "\(method.rawValue) answered \(status)")
                #expect(echo.form?.isEmpty ?? true)
            } else {
                #expect(echo.method == method.rawValue, "\(method.rawValue) answered \(status)")
                #expect(echo.form?["field"] == .one("v"), "\(method.rawValue) answered \(status) keeps its body")
            }
        }
    }

    // MARK: Batch 6: JSON members as upload fields

    @Test func jsonMembersBecomeFieldsWithNumbersAsWrittenAndBooleansAsWords() async throws {
        struct Info: Encodable {
            let one = 1
            let zero = 0
            let yes = true
            let no = false
            let tenth = 0.1
            let huge = UInt64.max
            let negative = -7
            let text = "1"
            let emptyText = ""
            let flags = [true, false]
            let numbers = [1, 0]
        }
        let call = Call(endpoint: "/post", method: .post, parameters: Parameter.jsonObject(value: Info()))
        let echo = try await connect.upload(files: nil, to: call).decoded(toType: Echo.self).value
        let form = try #require(echo.form)
        #expect(form["one"] == .one("1"))
        #expect(form["zero"] == .one("0"))
        #expect(form["yes"] == .one("true"))
        #expect(form["no"] == .one("false"))
        #expect(form["tenth"] == .one("0.1"))
        #expect(form["huge"] == .one("18446744073709551615"))
        #expect(form["negative"] == .one("-7"))
        #expect(form["text"] == .one("1"))
        #expect(form["emptyText"] == .one(""))
        #expect(form["flags"] == .one("[true,false]"))
        #expect(form["numbers"] == .one("[1,0]"))
    }

    // MARK: Batch 7: cancelling a chain mid-way

    final class Box<Value: Sendable>: @unchecked Sendable {
        // @unchecked Sendable: `stored` is only touched under `lock`.
        private let lock = NSLock()
        private var stored: Value?
        var value: Value? {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// A client whose requests to `/hang` answer only after a minute, unless cancelled: a request
    /// surely in flight when the test cancels it, however long a loaded machine (ThreadSanitizer)
    /// holds the test up. Other paths answer `200` at once.
    static func hangingClient() -> Connect {
        Connect(
            transport: RecordingTransport { request in
                if request.url?.path == "/hang" { try await Task.sleep(nanoseconds: 60_000_000_000) }
                return StubTransport.Reply(statusCode: 200, body: Data("{}".utf8))
            })
    }

    @Test func cancellingAChainWhileItsSecondRequestIsInFlightCancelsThatRequest() async throws {
        let inner = Box<SwiftConnect.Future<Data>>()
        let client = Self.hangingClient()
        let chain = client.request(Call(endpoint: "/get")).flatMap { _ -> SwiftConnect.Future<Data> in
            let second = client.request(Call(endpoint: "/hang"))
            inner.value = second
            return second
        }
        try await waitUntil { inner.value != nil }
        chain.cancel()
        #expect(await failure(chain)?.isCancellation == true)
        let second = try #require(inner.value)
        let started = Date()
        #expect(await failure(second)?.isCancellation == true)
        #expect(Date().timeIntervalSince(started) < 3)
    }

    @Test func twoTasksAwaitingOneFutureBothGetTheValue() async throws {
        let future = connect.request(Call(endpoint: "/delay/1")).decoded(toType: Echo.self)
        async let first = future.value
        async let second = future.value
        let (a, b) = try await (first, second)
        #expect(a.url == b.url)
        #expect(a.url.hasSuffix("/delay/1"))
    }

    @Test func cancellingOneAwaitingTaskCancelsTheSharedFutureForBoth() async throws {
        let future = Self.hangingClient().request(Call(endpoint: "/hang"))
        let waiter = Task { await future.asyncResult }
        let canceller = Task { try await future.value }
        canceller.cancel()
        let result = await waiter.value
        #expect(((try? result.get()) == nil))
        if case .failure(let error) = result {
            #expect((error as? ConnectError)?.isCancellation == true)
        }
    }

    // MARK: Batch 8: decoding edges

    @Test func emptyIgnoresANonJSONSuccessBody() async throws {
        _ = try await connect.request(Call(endpoint: "/html")).decoded(toType: Empty.self).value
    }

    @Test func arrayIndexesInKeyPathsAndPathsThatRunIntoScalars() async throws {
        struct Item: Encodable, Sendable { let id: Int }
        let call = Call(endpoint: "/anything", method: .post, parameters: Parameter.jsonObject(value: [Item(id: 5)]))
        #expect(try await connect.request(call).decoded(toType: Int.self, keyPath: "json.0.id").value == 5)
        #expect(try await connect.request(call).decodedIfPresent(toType: Int.self, keyPath: "json.1.id").value == nil)
        let scalar = await failure(connect.request(call).decodedIfPresent(toType: Int.self, keyPath: "url.length"))
        guard case .decoding? = scalar else {
            Issue.record("a key path running into a string must fail, got \(String(describing: scalar))")
            return
        }
    }

    @Test(arguments: ["/50%/{id}", "/a\\b/{id}", "/a b|c/{id}", "/x?q=a b&r=%zz&{id}", "/{id}?"])
    func oddHandWrittenEndpointsBuildOrFailWithATypedError(endpoint: String) async throws {
        let call = Call(endpoint: "/anything" + endpoint, parameters: Parameter.path(key: "id", value: "1"))
        do {
            let url = try #require(try connect.urlRequest(for: call).url)
            #expect(url.host == HTTPBin.baseURL.host)
            let response = try await connect.response(call).value
            #expect(response.statusCode == 200)
        } catch let error as ConnectError {
            guard case .invalidRequest = error else {
                Issue.record("\(endpoint): expected invalidRequest, got \(error)")
                return
            }
        }
    }
}
