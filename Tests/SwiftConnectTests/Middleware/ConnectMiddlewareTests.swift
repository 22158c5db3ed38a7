import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// Appends `value` to the `X-Order` header, so the header shows the order adapters ran in.
private struct OrderAdapter: RequestAdapter {
    let value: String

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        let previous = request.value(forHTTPHeaderField: "X-Order")
        request.setValue(previous.map { "\($0),\(value)" } ?? value, forHTTPHeaderField: "X-Order")
        return request
    }
}

/// Counts its runs and stamps the count on the request as `X-Attempt`, the way a token adapter
/// would put a fresh token on each attempt.
private struct CountingAdapter: RequestAdapter {
    let runs = Fixtures.Counter()

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("\(runs.increment())", forHTTPHeaderField: "X-Attempt")
        return request
    }
}

/// Throws `error`, and counts how often it was asked.
private struct ThrowingAdapter: RequestAdapter {
    let error: Fixtures.TestError
    let runs = Fixtures.Counter()

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        runs.increment()
        throw error
    }
}

/// Answers `answer` while `attempt <= limit`, then `.doNotRetry`; records its name in `log`.
private struct FixedRetrier: RequestRetrier {
    let name: String
    let answer: RetryResult
    var limit = Int.max
    let log: Fixtures.Recorder<String>

    func retry(_ attempt: FailedAttempt) async -> RetryResult {
        log.append("\(name)#\(attempt.number)")
        return attempt.number <= limit ? answer : .doNotRetry
    }
}

@Suite("ConnectMiddleware: adapters")
struct ConnectMiddlewareAdapterTests {
    @Test func withoutAdaptersTheRequestIsUnchanged() async throws {
        var request = URLRequest(url: URL(string: "http://example.test/a")!)
        request.setValue("v", forHTTPHeaderField: "X-Original")
        let adapted = try await ConnectMiddleware().adapt(request)
        #expect(adapted == request)
    }

    @Test func adaptersRunInOrder() async throws {
        let middleware = ConnectMiddleware(adapters: [
            OrderAdapter(value: "first"), OrderAdapter(value: "second"), OrderAdapter(value: "third"),
        ])
        let adapted = try await middleware.adapt(URLRequest(url: URL(string: "http://example.test/a")!))
        #expect(adapted.value(forHTTPHeaderField: "X-Order") == "first,second,third")
    }

    @Test func adaptedHeaderIsVisibleInTheSentRequest() async throws {
        let transport = RecordingTransport()
        let middleware = ConnectMiddleware(adapters: [OrderAdapter(value: "a"), OrderAdapter(value: "b")])
        _ = try await makeConnect(transport: transport, middleware: middleware).request(TestConnector()).value
        #expect(transport.requests.count == 1)
        #expect(transport.requests.first?.value(forHTTPHeaderField: "X-Order") == "a,b")
    }

    @Test func throwingAdapterFailsTheRequestWithItsErrorAndNothingIsSent() async throws {
        let transport = RecordingTransport()
        let thrower = ThrowingAdapter(error: Fixtures.TestError(code: "no token"))
        let after = CountingAdapter()
        let middleware = ConnectMiddleware(adapters: [OrderAdapter(value: "a"), thrower, after])
        let result = await makeConnect(transport: transport, middleware: middleware).request(TestConnector())
            .asyncResult
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == Fixtures.TestError(code: "no token"))
        #expect(transport.requests.isEmpty)
        #expect(thrower.runs.value == 1)
        #expect(after.runs.value == 0)
    }
}

@Suite("ConnectMiddleware: retriers")
struct ConnectMiddlewareRetrierTests {
    private let request = URLRequest(url: URL(string: "http://example.test/a")!)

    @Test func withoutRetriersNothingIsRetried() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let result = await makeConnect(transport: transport).request(TestConnector()).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 500)
        #expect(transport.requests.count == 1)
        let answer = await ConnectMiddleware().retry(
            FailedAttempt(request: request, error: URLError(.timedOut), response: nil, number: 1, isIdempotent: true))
        guard case .doNotRetry = answer else {
            Issue.record("expected .doNotRetry, got \(answer)")
            return
        }
    }

    @Test func retryResendsTheRequestThroughTheAdaptersAgain() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() < 3 ? Fixtures.json(#"{"msg":"busy"}"#, status: 503) : Fixtures.json(#"{"ok":true}"#)
        }
        let counter = CountingAdapter()
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(
            adapters: [counter], retriers: [FixedRetrier(name: "r", answer: .retry, limit: 5, log: log)])
        let data = try await makeConnect(transport: transport, middleware: middleware).request(TestConnector()).value
        #expect(data == Data(#"{"ok":true}"#.utf8))
        #expect(transport.requests.count == 3)
        #expect(counter.runs.value == 3)
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-Attempt") } == ["1", "2", "3"])
        #expect(log.values == ["r#1", "r#2"])
    }

    @Test func retriedRequestIsAdaptedFromTheOriginalNotFromTheLastAttempt() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(
            adapters: [OrderAdapter(value: "x")],
            retriers: [FixedRetrier(name: "r", answer: .retry, limit: 2, log: log)])
        _ = await makeConnect(transport: transport, middleware: middleware).request(TestConnector()).asyncResult
        #expect(transport.requests.count == 3)
        #expect(transport.requests.allSatisfy { $0.value(forHTTPHeaderField: "X-Order") == "x" })
    }

    @Test func retryingStopsWhenTheRetrierSaysSoAndTheLastErrorIsDelivered() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"still down"}"#, status: 503) }
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(retriers: [FixedRetrier(name: "r", answer: .retry, limit: 2, log: log)])
        let result = await makeConnect(transport: transport, middleware: middleware).request(TestConnector())
            .asyncResult
        guard case .unacceptableStatus(let response, let message)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(result)")
            return
        }
        #expect(response.statusCode == 503)
        #expect(message == "still down")
        #expect(transport.requests.count == 3)
        #expect(log.values == ["r#1", "r#2", "r#3"])
    }

    @Test func doNotRetryWithErrorReplacesTheError() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 401) }
        let log = Fixtures.Recorder<String>()
        let replacement = Fixtures.TestError(code: "session expired")
        let middleware = ConnectMiddleware(
            retriers: [FixedRetrier(name: "r", answer: .doNotRetryWithError(replacement), log: log)])
        let result = await makeConnect(transport: transport, middleware: middleware).request(TestConnector())
            .asyncResult
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == replacement)
        #expect(transport.requests.count == 1)
    }

    /// `URLRequest` keeps what `allHTTPHeaderFields` is given, CR/LF and bad names included: the
    /// build never saw an adapter's headers, so they are checked before sending.
    @Test(arguments: [
        ("X-Signature", "a\r\nX-Injected: 1", "X-Signature"), ("X-Signature", "a\nb", "X-Signature"),
        ("Bad Name", "1", "Bad Name"),
    ])
    func anAdaptersInvalidHeaderFailsTheRequestAndNothingIsSent(name: String, value: String, reported: String)
        async throws
    {
        let transport = RecordingTransport { _ in Fixtures.json("[]") }
        let adapter = ClosureAdapter { request in
            var request = request
            request.allHTTPHeaderFields = (request.allHTTPHeaderFields ?? [:]).merging([name: value]) { $1 }
            return request
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [adapter]))
        let result = await connect.request(TestConnector()).asyncResult
        #expect(invalidRequestReason(of: result) == .invalidHeader(name: reported))
        #expect(transport.requests.isEmpty)
    }

    /// The outcome of a request whose one adapter applies `adapt`, and the transport it went to.
    private func sent(adapting adapt: @escaping @Sendable (inout URLRequest) -> Void) async
        -> (Result<Data, any Error>, RecordingTransport)
    {
        let transport = RecordingTransport { _ in Fixtures.json("[]") }
        let adapter = ClosureAdapter { request in
            var request = request
            adapt(&request)
            return request
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [adapter]))
        return (await connect.request(TestConnector()).asyncResult, transport)
    }

    /// An adapter's request is held to the build's other rules too: no header framing the body, an
    /// http(s) URL, and a timeout URLSession can take (FoundationNetworking traps on NaN and infinity).
    @Test func anAdaptersFramingHeaderURLOrTimeoutTheBuildWouldRefuseFailsTheRequestAndNothingIsSent() async throws {
        let (framed, framedTransport) = await sent { $0.setValue("5", forHTTPHeaderField: "Content-Length") }
        #expect(invalidRequestReason(of: framed) == .reservedHeader(name: "Content-Length"))
        #expect(framedTransport.requests.isEmpty)
        let (chunked, chunkedTransport) = await sent { $0.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding") }
        #expect(invalidRequestReason(of: chunked) == .reservedHeader(name: "Transfer-Encoding"))
        #expect(chunkedTransport.requests.isEmpty)
        let (file, fileTransport) = await sent { $0.url = URL(string: "file:///etc/hostname") }
        #expect(invalidRequestReason(of: file) == .unsupportedURL("file:///etc/hostname"))
        #expect(fileTransport.requests.isEmpty)
        let (nan, nanTransport) = await sent { $0.timeoutInterval = .nan }
        #expect(invalidRequestReason(of: nan)?.description == InvalidRequestReason.invalidTimeout(.nan).description)
        #expect(nanTransport.requests.isEmpty)
        let (endless, endlessTransport) = await sent { $0.timeoutInterval = .infinity }
        #expect((try? endless.get()) != nil)
        #expect(endlessTransport.requests.first?.timeoutInterval == RequestTimeout.longest)
    }

    /// A method an adapter sets is held to the build's rules: a token (a line break in it would
    /// rewrite the request line — another path, another header) and not CONNECT, and no body on
    /// GET, HEAD or TRACE.
    @Test func anAdaptersMethodOrBodyTheBuildWouldRefuseFailsTheRequestAndNothingIsSent() async throws {
        let injected = "GET /headers HTTP/1.1\r\nX-Injected: 1\r\nX-Pad:"
        func withBody(method: String) -> @Sendable (inout URLRequest) -> Void {
            { request in
                request.httpMethod = method
                request.httpBody = Data("{}".utf8)
            }
        }
        let refused: [(InvalidRequestReason, @Sendable (inout URLRequest) -> Void)] = [
            (.invalidMethod(injected), { $0.httpMethod = injected }),
            (.invalidMethod("GET X"), { $0.httpMethod = "GET X" }),
            (.bodyNotAllowed(method: "GET"), withBody(method: "get")),
            (.bodyNotAllowed(method: "GET"), { $0.httpBodyStream = InputStream(data: Data("x".utf8)) }),
            (.bodyNotAllowed(method: "TRACE"), withBody(method: "TRACE")),
            (.invalidMethod("CONNECT"), { $0.httpMethod = "connect" }),
        ]
        for (reason, adapt) in refused {
            let (result, transport) = await sent(adapting: adapt)
            #expect(invalidRequestReason(of: result) == reason)
            #expect(transport.requests.isEmpty, "\(reason)")
        }
        let (post, postTransport) = await sent(adapting: withBody(method: "POST"))
        #expect((try? post.get()) != nil)
        #expect(postTransport.requests.first?.httpBody == Data("{}".utf8))
    }

    /// An adapter's header values are trimmed as a build trims them: libcurl drops a header
    /// whose value is only spaces, and the spaces around a value are not part of it (RFC 9110 §5.5).
    @Test func anAdaptersHeaderValuesAreSentWithoutTheSpacesAroundThem() async throws {
        let (result, transport) = await sent {
            $0.setValue("  ", forHTTPHeaderField: "X-Blank")
            $0.setValue("\t v w ", forHTTPHeaderField: "X-Padded")
            $0.setValue("kept", forHTTPHeaderField: "X-Kept")
        }
        #expect((try? result.get()) != nil)
        let request = try #require(transport.requests.first)
        #expect(request.value(forHTTPHeaderField: "X-Blank") == "")
        #expect(request.value(forHTTPHeaderField: "X-Padded") == "v w")
        #expect(request.value(forHTTPHeaderField: "X-Kept") == "kept")
    }

    /// An adapter that ignores cancellation finishes its work, but the request it adapted for a
    /// cancelled caller is not sent.
    @Test func aRequestCancelledWhileAnAdapterRunsIsNotSent() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("[]") }
        let gate = HeldGate()
        let adapter = ClosureAdapter { request in
            await gate.wait()  // a continuation: deaf to cancellation, and no thread blocked
            return request
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [adapter]))
        let future = connect.request(TestConnector())
        for _ in 0..<500 where !gate.isHeld { try await Task.sleep(nanoseconds: 10_000_000) }
        try #require(gate.isHeld)
        future.cancel()
        gate.open()
        let result = await future.asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        // The pipeline's task ends after the future: give it time to send, if it would.
        for _ in 0..<20 where transport.requests.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(transport.requests.isEmpty)
    }

    /// An adapter that does not suspend (it signs or looks up synchronously) runs at once, in
    /// the request's task: `cancelAllRequests()` from another thread meanwhile still keeps the
    /// request it adapted from being sent.
    @Test func aRequestCancelledWhileAnAdapterRunsWithoutSuspendingIsNotSent() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("[]") }
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let adapter = ClosureAdapter { request in
            entered.signal()
            proceed.wait()  // synchronous work: no suspension point
            return request
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [adapter]))
        let sent = Fixtures.Recorder<Future<Data>>()
        DispatchQueue.global().async { sent.append(connect.request(TestConnector())) }
        entered.wait()
        connect.cancelAllRequests()
        proceed.signal()
        for _ in 0..<500 where sent.values.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        let future = try #require(sent.values.first)
        let result = await future.asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        // The pipeline's task ends after the future: give it time to send, if it would.
        for _ in 0..<20 where transport.requests.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(transport.requests.isEmpty)
    }

    /// Holds whoever waits until `open()`.
    private final class HeldGate: @unchecked Sendable {
        // @unchecked Sendable: `waiter` is only touched under `lock`.
        private let lock = NSLock()
        private var waiter: CheckedContinuation<Void, Never>?

        var isHeld: Bool { lock.withLock { waiter != nil } }

        func wait() async {
            await withCheckedContinuation { continuation in lock.withLock { waiter = continuation } }
        }

        func open() {
            lock.withLock {
                waiter?.resume()
                waiter = nil
            }
        }
    }

    @Test func retryWithDelayWaitsThenRetries() async throws {
        let sentAt = Fixtures.Recorder<Date>()
        let transport = RecordingTransport { _ in
            sentAt.append(Date())
            return sentAt.values.count < 2 ? Fixtures.json("{}", status: 500) : Fixtures.json("[]")
        }
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(
            retriers: [FixedRetrier(name: "r", answer: .retryWithDelay(0.15), limit: 1, log: log)])
        let data = try await makeConnect(transport: transport, middleware: middleware).request(TestConnector()).value
        #expect(data == Data("[]".utf8))
        let times = sentAt.values
        try #require(times.count == 2)
        #expect(times[1].timeIntervalSince(times[0]) >= 0.14)
    }

    @Test func retriersAreAskedInOrderUntilOneAnswers() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(retriers: [
            FixedRetrier(name: "passes", answer: .doNotRetry, log: log),
            FixedRetrier(name: "retries", answer: .retry, limit: 1, log: log),
            FixedRetrier(
                name: "never", answer: .doNotRetryWithError(Fixtures.TestError(code: "never")), limit: 1, log: log),
        ])
        let result = await makeConnect(transport: transport, middleware: middleware).request(TestConnector())
            .asyncResult
        // Attempt 1: passes → retries (.retry). Attempt 2: passes → retries (done) → never (limit reached).
        #expect(log.values == ["passes#1", "retries#1", "passes#2", "retries#2", "never#2"])
        #expect(transport.requests.count == 2)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 500)
    }

    @Test func firstAnsweringRetrierWinsAndLaterOnesAreNotAsked() async throws {
        let log = Fixtures.Recorder<String>()
        let first = FixedRetrier(
            name: "first", answer: .doNotRetryWithError(Fixtures.TestError(code: "first")), log: log)
        let second = FixedRetrier(name: "second", answer: .retry, log: log)
        let answer = await ConnectMiddleware(retriers: [first, second])
            .retry(
                FailedAttempt(
                    request: request, error: URLError(.timedOut), response: nil, number: 1, isIdempotent: true))
        guard case .doNotRetryWithError(let error) = answer else {
            Issue.record("expected .doNotRetryWithError, got \(answer)")
            return
        }
        #expect(error as? Fixtures.TestError == Fixtures.TestError(code: "first"))
        #expect(log.values == ["first#1"])
    }

    @Test func retrierCanRetryATransportError() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            if calls.increment() == 1 { throw URLError(.networkConnectionLost) }
            return Fixtures.json(#"{"id":1,"title":"second time"}"#)
        }
        let log = Fixtures.Recorder<String>()
        let middleware = ConnectMiddleware(retriers: [FixedRetrier(name: "r", answer: .retry, limit: 1, log: log)])
        let todo = try await makeConnect(transport: transport, middleware: middleware).request(TestConnector())
            .decoded(toType: Fixtures.Todo.self).value
        #expect(todo.title == "second time")
        #expect(transport.requests.count == 2)
    }

    @Test func adapterErrorReachesTheRetrierAndCanBeRetried() async throws {
        let log = Fixtures.Recorder<String>()
        let failingOnce = FlakyAdapter()
        let transport = RecordingTransport()
        let middleware = ConnectMiddleware(
            adapters: [failingOnce], retriers: [FixedRetrier(name: "r", answer: .retry, limit: 1, log: log)])
        _ = try await makeConnect(transport: transport, middleware: middleware).request(TestConnector()).value
        #expect(log.values == ["r#1"])
        #expect(transport.requests.count == 1)
    }
}

/// Fails its first adaptation only (a token that could not be fetched the first time).
private struct FlakyAdapter: RequestAdapter {
    let runs = Fixtures.Counter()

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        if runs.increment() == 1 { throw Fixtures.TestError(code: "token fetch failed") }
        return request
    }
}
