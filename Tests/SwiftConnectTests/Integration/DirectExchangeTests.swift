import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests a client without middleware sends without a Swift task (``DirectExchange``): the
/// pipeline's steps run in URLSession's callback, and what must not run there leaves it.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct DirectExchangeTests {
    struct Call: Connector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var redirectPolicy: RedirectPolicy? = nil
        var middleware: ConnectorMiddleware = .inherited
    }

    /// A `Connect` that a validator reaches once it is made.
    private final class ConnectSlot: @unchecked Sendable {
        // @unchecked Sendable: `stored` is only touched under `lock`.
        private let lock = NSLock()
        private var stored: Connect?
        var connect: Connect? {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// Whether each validator call ran inside a Swift task.
    private static func recordingTasks(_ record: Recorder<Bool>) -> ResponseValidator {
        ResponseValidator { _ in record.append(withUnsafeCurrentTask { $0 != nil }) }
    }

    @Test func aClientWithoutMiddlewareValidatesOutsideAnyTaskAndOneWithMiddlewareInIt() async throws {
        let direct = Recorder<Bool>()
        _ = try await HTTPBin.connect { $0.validators = [Self.recordingTasks(direct)] }
            .request(Call(endpoint: "/get")).value
        #expect(direct.values == [false])

        let piped = Recorder<Bool>()
        let adapter = ConnectMiddleware(adapters: [ClosureAdapter { $0 }])
        _ = try await HTTPBin.connect(middleware: adapter) { $0.validators = [Self.recordingTasks(piped)] }
            .request(Call(endpoint: "/get")).value
        #expect(piped.values == [true])
    }

    /// Middleware with something to run, on the client or on the connector.
    enum Running: String, CaseIterable, Sendable {
        case retrier, interceptor, tokenAuthenticator, customMiddleware, connectorRetrier, connectorInterceptor

        /// Middleware of the user's own, all of whose requirements have their defaults.
        private struct Custom: ConnectMiddlewareProtocol {}

        private static let retrying = ConnectMiddleware(retriers: [ClosureRetrier { _ in .doNotRetry }])
        private static let intercepting = ConnectMiddleware(interceptors: [ClosureInterceptor { _ in .proceed }])

        var client: any ConnectMiddlewareProtocol {
            switch self {
            case .retrier: return Self.retrying
            case .interceptor: return Self.intercepting
            case .tokenAuthenticator: return TokenAuthenticator(token: AccessToken("t")) { _ in AccessToken("u") }
            case .customMiddleware: return Custom()
            case .connectorRetrier, .connectorInterceptor: return ConnectMiddleware()
            }
        }

        var connector: ConnectorMiddleware {
            switch self {
            case .connectorRetrier: return .only([Self.retrying])
            case .connectorInterceptor: return .adding([Self.intercepting])
            default: return .inherited
            }
        }
    }

    /// Only a request with nothing to run but its transfer goes without a task: a retrier, an
    /// interceptor, a token authenticator or middleware of the user's own each keeps it in the
    /// pipeline's, whichever of `request` and `response` sends it.
    @Test(arguments: Running.allCases)
    func middlewareWithAnythingToRunKeepsTheRequestInATask(middleware: Running) async throws {
        let inTask = Recorder<Bool>()
        let connect = HTTPBin.connect(middleware: middleware.client) {
            $0.validators = [Self.recordingTasks(inTask)]
        }
        var call = Call(endpoint: "/get")
        call.middleware = middleware.connector
        _ = try await connect.request(call).value
        _ = try await connect.response(call).value
        #expect(inTask.values == [true, true])
    }

    /// Without anything to run — a connector that drops the client's middleware or adds none, a
    /// transport made by the user, `response` as well as `request` — a request goes without a task.
    @Test func requestsWithNothingToRunGoWithoutATask() async throws {
        let inTask = Recorder<Bool>()
        for transport in [nil, URLSessionTransport()] {
            let connect = HTTPBin.connect(transport: transport) { $0.validators = [Self.recordingTasks(inTask)] }
            for middleware in [ConnectorMiddleware.inherited, .none, .only([]), .adding([])] {
                var call = Call(endpoint: "/get")
                call.middleware = middleware
                _ = try await connect.request(call).value
                _ = try await connect.response(call).value
            }
        }
        #expect(inTask.values == Array(repeating: false, count: 16))
    }

    /// An upload streams its body in the pipeline's task, even with no middleware at all.
    @Test func anUploadWithoutMiddlewareGoesThroughThePipelinesTask() async throws {
        let inTask = Recorder<Bool>()
        let connect = HTTPBin.connect { $0.validators = [Self.recordingTasks(inTask)] }
        let file = File(name: "notes.txt", key: "notes", mimeType: .txt, data: Data("hello".utf8))
        let echo = try await connect.upload(files: [file], to: Call(endpoint: "/anything", method: .post)).value
        #expect(String(decoding: echo, as: UTF8.self).contains("hello"))
        #expect(inTask.values == [true])
    }

    /// A request sent without a task leaves the client's registry as it ends, answered or
    /// cancelled while its transfer runs, and lets go of its futures.
    @Test func aDirectRequestLetsGoOfItsFuturesOnceItEnds() async throws {
        let connect = HTTPBin.connect()
        weak var answered: Future<Data>?
        weak var answeredResponse: Future<Response>?
        weak var cancelled: Future<Data>?
        do {
            let body = connect.request(Call(endpoint: "/get"))
            answered = body
            let response = connect.response(Call(endpoint: "/get"))
            answeredResponse = response
            _ = try await body.value
            _ = try await response.value
            let slow = connect.request(Call(endpoint: "/delay/10"))
            cancelled = slow
            try await Task.sleep(nanoseconds: 200_000_000)
            slow.cancel()
            let result = await slow.asyncResult
            #expect((result.failureValue as? ConnectError)?.isCancellation == true)
        }
        #expect(await Self.eventually { answered == nil && answeredResponse == nil && cancelled == nil })
    }

    @Test func aSlowValidatorOnALargeBodyDoesNotHoldUpOtherResponses() async throws {
        let validating = PipelineFixtures.Gate()
        let release = DispatchSemaphore(value: 0)
        let connect = HTTPBin.connect { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    guard response.data.count >= DirectExchange.inlineBodyLimit else { return }
                    validating.open()
                    _ = release.wait(timeout: .now() + 30)
                }
            ]
        }
        let large = connect.request(Call(endpoint: "/bytes/102400"))
        try await validating.wait()
        // The large body's validator now holds its thread. Were that URLSession's own queue, the
        // small request could neither start nor finish until the validator gave up (30 s).
        let small = try await connect.request(Call(endpoint: "/get")).value
        #expect(!small.isEmpty)
        #expect(!large.isCompleted)
        release.signal()
        #expect(try await large.value.count == 102_400)
    }

    /// A response that arrives while others of the session are in flight is handled off
    /// URLSession's queue, which serves all of them; one that arrives alone is handled on it.
    @Test func aSlowValidatorDoesNotHoldUpTheSessionsOtherResponses() async throws {
        let validating = PipelineFixtures.Gate()
        let release = DispatchSemaphore(value: 0)
        let onSessionQueue = Recorder<Bool>()
        let connect = HTTPBin.connect { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    onSessionQueue.append(SessionQueue.isCurrent)
                    guard response.url?.path == "/anything/held" else { return }
                    validating.open()
                    _ = release.wait(timeout: .now() + 30)
                }
            ]
        }
        _ = try await connect.request(Call(endpoint: "/get")).value  // alone

        let slow = connect.request(Call(endpoint: "/delay/1"))
        let held = connect.request(Call(endpoint: "/anything/held"))
        try await validating.wait()
        // The held response's validator now blocks its thread. Were that URLSession's queue, the
        // slow response (a second later) would wait behind it until the validator gave up (30 s).
        #expect(try await !slow.value.isEmpty)
        #expect(!held.isCompleted)
        release.signal()
        #expect(try await !held.value.isEmpty)
        #if canImport(FoundationNetworking)
            // Alone: on the session's queue. Held: off it, as `slow` was still in flight. Slow:
            // either way, depending on whether the held response was still being validated.
            #expect(onSessionQueue.values.prefix(2) == [true, false])
        #endif
    }

    /// A lone small response observed on the callback queue is decoded there, just before the
    /// observers: URLSession's queue, with the transfer's bookkeeping still to do, is let go first.
    /// Awaited, it is decoded where it arrives.
    @Test func aLoneResponseIsDecodedOnTheCallbackQueueWhenObservedAndWhereItArrivesWhenAwaited() async throws {
        let callbacks = QueueMarker(label: "test.direct-exchange.callbacks")
        let decodedOn = Recorder<(callbackQueue: Bool, sessionQueue: Bool)>()
        let decoder = DecodingProbe.decoder {
            decodedOn.append((callbacks.isCurrent, SessionQueue.isCurrent))
        }
        let connect = HTTPBin.connect { $0.callbackQueue = callbacks.queue }
        // Answered after 0.3 s: the chain is complete before the response arrives, however slow the
        // machine. (A response that beats `decoded` or `observe` is decoded where they are called:
        // this test failed once in CI under load.)
        let observed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            connect.request(Call(endpoint: "/delay/0.3")).decoded(toType: DecodingProbe.self, decoder: decoder)
                .observe { result in continuation.resume(returning: (try? result.get()) != nil) }
        }
        _ = try await connect.request(Call(endpoint: "/delay/0.3"))
            .decoded(toType: DecodingProbe.self, decoder: decoder).value
        #expect(observed)
        #if canImport(FoundationNetworking)
            #expect(decodedOn.values.map(\.callbackQueue) == [true, false])
            #expect(decodedOn.values.map(\.sessionQueue) == [false, true])
        #else
            // Apple's URLSession calls the delegate on a queue of its own: decoded before the hop.
            #expect(decodedOn.values.map(\.callbackQueue) == [false, false])
        #endif
    }

    /// A lone response headed for the callback queue — observed, or through a step such as `map`
    /// — is handled there, from validation on: URLSession's queue hands it over at once. Only
    /// awaited, it is handled where it arrives.
    @Test func aLoneResponseHeadedForTheCallbackQueueIsHandledThere() async throws {
        let callbacks = QueueMarker(label: "test.direct-exchange.handled-on-callbacks")
        let validatedOn = Recorder<(callbackQueue: Bool, sessionQueue: Bool)>()
        let connect = HTTPBin.connect { configuration in
            configuration.callbackQueue = callbacks.queue
            configuration.validators = [
                ResponseValidator { _ in validatedOn.append((callbacks.isCurrent, SessionQueue.isCurrent)) }
            ]
        }
        // Answered after 0.3 s, so that the chain is complete before the response arrives.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            connect.request(Call(endpoint: "/delay/0.3")).observe { _ in continuation.resume() }
        }
        _ = try await connect.request(Call(endpoint: "/delay/0.3")).map { $0.count }.value
        _ = try await connect.request(Call(endpoint: "/delay/0.3")).value
        #if canImport(FoundationNetworking)
            #expect(validatedOn.values.map(\.callbackQueue) == [true, true, false])
            #expect(validatedOn.values.map(\.sessionQueue) == [false, false, true])
        #else
            // Apple's URLSession calls the delegate on a queue of its own, and nothing moves.
            #expect(validatedOn.values.map(\.callbackQueue) == [false, false, false])
        #endif
    }

    /// A validator of a lone response runs on URLSession's own queue, where cancelling a task
    /// waits on itself: cancelling a request it has just sent must leave that queue first.
    @Test(arguments: [false, true])
    func aValidatorMaySendAndCancelARequestOnTheSessionQueue(throughMiddleware: Bool) async throws {
        let slot = ConnectSlot()
        let sent = Recorder<Future<Data>>()
        let onSessionQueue = Recorder<Bool>()
        let connect = HTTPBin.connect { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    guard response.url?.path == "/get", let connect = slot.connect else { return }
                    onSessionQueue.append(SessionQueue.isCurrent)
                    var next = Call(endpoint: "/delay/10")
                    if throughMiddleware {
                        next.middleware = .adding([ConnectMiddleware(adapters: [ClosureAdapter { $0 }])])
                    }
                    let future = connect.request(next)
                    sent.append(future)
                    future.cancel()
                }
            ]
        }
        slot.connect = connect
        _ = try await connect.request(Call(endpoint: "/get")).value
        #if canImport(FoundationNetworking)
            #expect(onSessionQueue.values == [true])  // the case this test is about
        #endif
        let cancelled = try #require(sent.values.first)
        // Cancelled at once, not answered after the server's 10 s (a deadlock would never answer).
        #expect((cancelled.result?.failureValue as? ConnectError)?.isCancellation == true)
        // The client still works: its session's queue is not stuck.
        #expect(try await !connect.request(Call(endpoint: "/get")).value.isEmpty)
    }

    /// The request cancelled goes without a task, or through middleware in one. The validator runs
    /// on URLSession's queue although the slow request is in flight, as it would if that request
    /// had started just after the check that hands busy responses off (a race otherwise).
    @Test(arguments: [false, true])
    func aValidatorMayCancelAnotherRequestWithoutDeadlock(throughMiddleware: Bool) async throws {
        let pending = Recorder<Future<Data>>()
        let transport = URLSessionTransport(configuration: .default, handsOffBusyResponses: false)
        let connect = HTTPBin.connect(transport: transport) { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    if response.url?.path == "/get" { for future in pending.values { future.cancel() } }
                }
            ]
        }
        var call = Call(endpoint: "/delay/10")
        if throughMiddleware { call.middleware = .adding([ConnectMiddleware(adapters: [ClosureAdapter { $0 }])]) }
        let slow = connect.request(call)
        pending.append(slow)
        _ = try await connect.request(Call(endpoint: "/get")).value
        // Cancelled, not answered after the server's 10 s (a deadlock would hold the session for good).
        let result = await slow.asyncResult
        #expect((result.failureValue as? ConnectError)?.isCancellation == true)
    }

    /// A validator of a small response runs on URLSession's own queue, where creating or starting
    /// a task waits on itself: a request it sends must start elsewhere, whichever way it goes.
    @Test(arguments: [false, true])
    func aValidatorMaySendAnotherRequestThroughTheSameClient(throughMiddleware: Bool) async throws {
        let slot = ConnectSlot()
        let sent = Recorder<Future<Data>>()
        let connect = HTTPBin.connect { configuration in
            configuration.validators = [
                ResponseValidator { response in
                    guard response.url?.path == "/get", let connect = slot.connect else { return }
                    var next = Call(endpoint: "/anything/second")
                    if throughMiddleware {
                        next.middleware = .adding([ConnectMiddleware(adapters: [ClosureAdapter { $0 }])])
                    }
                    sent.append(connect.request(next))
                }
            ]
        }
        slot.connect = connect
        _ = try await connect.request(Call(endpoint: "/get")).value
        let second = try #require(sent.values.first)
        let echo = try await second.decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/anything/second"))
    }

    @Test func cancellingWhileTheRedirectPolicyDecidesCancelsTheDecision() async throws {
        let deciding = PipelineFixtures.Gate()
        let interrupted = PipelineFixtures.Gate()
        var call = Call(endpoint: "/redirect-to?url=/get")
        call.redirectPolicy = .decide { _ in
            deciding.open()
            do {
                try await Task.sleep(nanoseconds: 30_000_000_000)
            } catch {
                interrupted.open()
            }
            return .stop
        }
        let future = HTTPBin.connect().request(call)
        try await deciding.wait()
        future.cancel()
        #expect((future.result?.failureValue as? ConnectError)?.isCancellation == true)
        #expect(await Self.eventually(within: 20) { interrupted.isOpen }, "the decision was not cancelled")
    }

    @Test func aDecidingRedirectPolicyIsAskedAndObeyed() async throws {
        let connect = HTTPBin.connect()
        let asked = Recorder<String>()
        var stop = Call(endpoint: "/redirect-to?url=/get&status_code=302")
        stop.redirectPolicy = .decide { redirect in
            asked.append(redirect.proposedRequest.url?.path ?? "")
            return .stop
        }
        // Not followed: the 302 itself comes back, and fails the status check as any 302 would.
        let stopped = await connect.response(stop).asyncResult
        #expect((stopped.failureValue as? ConnectError)?.statusCode == 302)
        #expect(asked.values == ["/get"])

        var elsewhere = Call(endpoint: "/redirect-to?url=/get&status_code=307")
        elsewhere.redirectPolicy = .decide { redirect in
            var request = redirect.proposedRequest
            request.url = HTTPBin.baseURL.appendingPathComponent("anything/chosen")
            return .followWith(request)
        }
        let echo = try await connect.request(elsewhere).decoded(toType: Echo.self).value
        #expect(echo.url.hasSuffix("/anything/chosen"))
    }

    @Test func aFollowWithRequestToAnotherOriginLosesTheCredentialsItCopied() async throws {
        let target = HTTPBin.otherOriginURL.appendingPathComponent("headers")
        var call = Call(endpoint: "/redirect-to?url=/get&status_code=302")
        call.headers = [.authorization(bearerToken: "secret-token"), HTTPHeader(name: "X-Trace", value: "kept")]
        call.redirectPolicy = .decide { redirect in
            // Starts from the redirected request, credentials and all, and sends it elsewhere.
            var request = redirect.response.request
            request.url = target
            return .followWith(request)
        }
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        // No middleware: the request runs as a DirectExchange.
        let received = try await HTTPBin.connect().request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Host"]?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.headers["Authorization"] == nil)
        #expect(received.headers["X-Trace"] == "kept")
    }

    /// The counterpart on the same origin: the credentials the request was sent with go on.
    @Test func aFollowWithRequestToTheSameOriginKeepsItsCredentials() async throws {
        var call = Call(endpoint: "/redirect-to?url=/get&status_code=302")
        call.headers = [.authorization(bearerToken: "secret-token")]
        call.redirectPolicy = .decide { redirect in
            var request = redirect.response.request
            request.url = HTTPBin.baseURL.appendingPathComponent("headers")
            return .followWith(request)
        }
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        // No middleware: the request runs as a DirectExchange.
        let received = try await HTTPBin.connect().request(call).decoded(toType: Headers.self).value
        #expect(received.headers["Authorization"] == "Bearer secret-token")
    }

    @Test func aFollowWithRequestWithAnInvalidHeaderFailsTheRequest() async throws {
        var call = Call(endpoint: "/redirect-to?url=/get&status_code=302")
        call.redirectPolicy = .decide { redirect in
            var request = redirect.proposedRequest
            request.allHTTPHeaderFields = ["Bad Name": "1"]
            return .followWith(request)
        }
        // No middleware: the request runs as a DirectExchange.
        let result = await HTTPBin.connect().request(call).asyncResult
        #expect(invalidRequestReason(of: result) == .invalidHeader(name: "Bad Name"))
    }

    /// Collects debug output.
    private struct LinesLogger: ConnectLogger {
        let lines = Recorder<String>()
        func log(_ message: String) { lines.append(message) }
    }

    @Test func cancellingAfterARedirectCancelsTheTransferItLedTo() async throws {
        let logger = LinesLogger()
        let validated = Recorder<String>()
        let connect = HTTPBin.connect { configuration in
            configuration.logger = logger
            configuration.validators = [ResponseValidator { validated.append($0.url?.path ?? "") }]
        }
        let future = connect.request(Call(endpoint: "/redirect-to?url=/delay/10"), debugResponse: true)
        // Wait until the redirect's request to /delay/10 is logged (as a cURL command), then a little
        // longer, so that it has gone out.
        // `usleep` keeps this thread: an awaited sleep can end seconds late on a busy concurrency
        // pool, and the server's answer after 10 s could then come first.
        let next = "\"" + HTTPBin.baseURL.absoluteString + "/delay/10\""
        let deadline = Date().addingTimeInterval(8)
        while !logger.lines.values.contains(where: { $0.contains(next) }), Date() < deadline { usleep(5_000) }
        #expect(logger.lines.values.contains { $0.contains(next) })
        usleep(200_000)
        future.cancel()
        let linesAtCancel = logger.lines.count
        let result = await future.asyncResult
        #expect((result.failureValue as? ConnectError)?.isCancellation == true)
        // The transfer itself ends, cancelled, long before the server would answer; had only the
        // future been cancelled, it would run on for the 10 s and then be validated.
        if !(await Self.eventually(within: 8) { logger.lines.values.contains { $0.contains("cancelled") } }) {
            // Or it never started: its start leaves URLSession's queue for a global one, which a busy
            // machine can hold up past the wait above, and a transfer cancelled before it starts is
            // not started. Then nothing more comes, even once the server would have answered.
            try await Task.sleep(nanoseconds: 3_000_000_000)
            #expect(logger.lines.count == linesAtCancel)
        }
        #expect(validated.values.isEmpty)
    }

    /// Holds the thread that logs the first message until `proceed` is signalled (or a minute has
    /// passed, so that a failing test cannot hang the run: a shorter bound let a starved test task
    /// under ThreadSanitizer cancel too late, after the request had been sent).
    private struct HoldingLogger: ConnectLogger {
        let lines = Recorder<String>()
        let entered = Recorder<Bool>()
        let proceed = DispatchSemaphore(value: 0)
        func log(_ message: String) {
            lines.append(message)
            guard entered.count == 0 else { return }
            entered.append(true)
            _ = proceed.wait(timeout: .now() + 60)
        }
    }

    /// `cancelAllRequests()` from another thread while a request is on its way to URLSession (here
    /// held in the logger, which logs its cURL command just before the transfer starts) stops it
    /// before it starts: nothing goes out, so nothing comes back to log.
    @Test func aRequestCancelledBeforeItsTransferStartsIsNotSent() async throws {
        let logger = HoldingLogger()
        let connect = HTTPBin.connect { $0.logger = logger }
        let futures = Recorder<Future<Data>>()
        DispatchQueue.global().async {
            futures.append(connect.request(Call(endpoint: "/get"), debugResponse: true))
        }
        #expect(await Self.eventually { logger.entered.count == 1 })
        connect.cancelAllRequests()
        logger.proceed.signal()
        #expect(await Self.eventually { futures.count == 1 })
        let result = try await #require(futures.values.first).asyncResult
        #expect((result.failureValue as? ConnectError)?.isCancellation == true)
        // A transfer started would be logged as it ends, cancelled or answered.
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(logger.lines.count == 1)
    }

    /// Usage.md: a `Connect` made for one request and dropped works, and its session (with its
    /// connections) is let go once its request has completed.
    @Test func aConnectDroppedAfterItsRequestLetsItsSessionGo() async throws {
        weak var session: URLSession?
        weak var transport: URLSessionTransport?
        do {
            let connect = HTTPBin.connect()
            transport = connect.transport as? URLSessionTransport
            session = transport?.session
            #expect(session != nil)
            let data = try await connect.request(Call(endpoint: "/get")).value
            #expect(!data.isEmpty)
        }
        #expect(await Self.eventually { transport == nil && session == nil })
    }

    /// Whether `condition` holds within `seconds`.
    private static func eventually(within seconds: TimeInterval = 5, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(), Date() < deadline { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }
}
