import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// A fixed instant the `Retry-After` date tests count from: Wed, 21 Oct 2015 07:28:00 GMT.
private let referenceDate = Date(timeIntervalSince1970: 1_445_412_480)

/// A policy whose delays are exact: no jitter unless asked for.
private func policy(
    maximumAttempts: Int = 3, baseDelay: TimeInterval = 1, multiplier: Double = 2, maximumDelay: TimeInterval = 30,
    jitter: Double = 0, maximumRetryAfter: TimeInterval = 120, random: Double = 0.5, now: Date = referenceDate
) -> RetryPolicy {
    RetryPolicy(
        maximumAttempts: maximumAttempts, baseDelay: baseDelay, multiplier: multiplier, maximumDelay: maximumDelay,
        jitter: jitter, maximumRetryAfter: maximumRetryAfter, random: { random }, now: { now })
}

// MARK: - Unit: RetryPolicy.retry(_:)

@Suite("RetryPolicy: decisions")
struct RetryPolicyDecisionTests {
    @Test func retriesUntilTheMaximumNumberOfAttempts() async {
        let policy = policy(maximumAttempts: 3)
        #expect(await policy.retry(Middleware.attempt(status: 503, number: 1)).retries)
        #expect(await policy.retry(Middleware.attempt(status: 503, number: 2)).retries)
        #expect(await !policy.retry(Middleware.attempt(status: 503, number: 3)).retries)
        #expect(await !policy.retry(Middleware.attempt(status: 503, number: 4)).retries)
    }

    @Test func maximumAttemptsOfOneNeverRetries() async {
        #expect(await !policy(maximumAttempts: 1).retry(Middleware.attempt(status: 503, number: 1)).retries)
    }

    @Test func delaysGrowByTheMultiplierAndAreCappedAtTheMaximumDelay() async {
        let policy = policy(maximumAttempts: 10, baseDelay: 0.5, multiplier: 3, maximumDelay: 10)
        var delays: [TimeInterval?] = []
        for number in 1...5 {
            delays.append(await policy.retry(Middleware.attempt(status: 500, number: number)).delay)
        }
        // 0.5, 1.5, 4.5, 13.5 → 10, 40.5 → 10
        #expect(delays == [0.5, 1.5, 4.5, 10, 10])
    }

    @Test func delayFormulaIsBaseTimesMultiplierToTheRetryMinusOne() {
        let policy = policy(baseDelay: 2, multiplier: 2, maximumDelay: 1000)
        #expect((1...6).map { policy.delay(beforeRetry: $0) } == [2, 4, 8, 16, 32, 64])
    }

    @Test(arguments: [0.0, 0.25, 0.5, 0.999_999])
    func jitterScalesTheDelayWithinOneMinusJitterToOne(random: Double) {
        let policy = policy(baseDelay: 4, multiplier: 2, maximumDelay: 100, jitter: 0.5, random: random)
        for retry in 1...4 {
            let full = 4 * pow(2, Double(retry - 1))
            let delay = policy.delay(beforeRetry: retry)
            #expect(delay >= full * 0.5 && delay <= full, "retry \(retry): \(delay) outside \(full * 0.5)...\(full)")
            #expect(abs(delay - full * (0.5 + 0.5 * random)) < 1e-9)
        }
    }

    /// A NaN or negative figure gives no delay, as a `sleep` of such a delay does, rather than the
    /// maximum: `min(30, .nan)` is 30, so a NaN base delay waited up to 30 s a retry. (The first
    /// retry's delay is the base delay whatever the multiplier: multiplier⁰ is 1, even for NaN.)
    @Test(arguments: [
        (Double.nan, 2.0, 30.0, [0.0, 0, 0]), (-1, 2, 30, [0, 0, 0]), (1, .nan, 30, [1, 0, 0]),
        (1, 2, .nan, [0, 0, 0]), (1, 2, -5, [0, 0, 0]), (1, -2, 30, [1, 0, 4]),
    ])
    func aNaNOrNegativeFigureRetriesAtOnce(
        baseDelay: Double, multiplier: Double, maximumDelay: Double, expected: [Double]
    ) {
        let policy = policy(baseDelay: baseDelay, multiplier: multiplier, maximumDelay: maximumDelay)
        #expect((1...3).map { policy.delay(beforeRetry: $0) } == expected)
    }

    @Test func jitterIsAppliedAfterTheCap() {
        let policy = policy(baseDelay: 10, multiplier: 10, maximumDelay: 20, jitter: 1, random: 0.25)
        #expect(policy.delay(beforeRetry: 3) == 5)  // min(20, 1000) × (1 - 1 + 1 × 0.25)
    }

    @Test func outOfRangeJitterAndRandomAreClamped() {
        #expect(policy(baseDelay: 8, jitter: 3, random: 0).delay(beforeRetry: 1) == 0)
        #expect(policy(baseDelay: 8, jitter: -1, random: 0).delay(beforeRetry: 1) == 8)
        #expect(policy(baseDelay: 8, jitter: 0.5, random: 7).delay(beforeRetry: 1) == 8)
    }

    @Test func retryAfterSecondsReplaceTheComputedDelay() async {
        let answer = await policy(baseDelay: 9).retry(Middleware.attempt(status: 503, headers: ["Retry-After": "2"]))
        #expect(answer.delay == 2)
    }

    @Test func retryAfterIsReadWhateverTheHeaderCaseAndSurroundingSpaces() async {
        let answer = await policy().retry(Middleware.attempt(status: 429, headers: ["retry-after": " 7 "]))
        #expect(answer.delay == 7)
    }

    @Test func retryAfterHTTPDateGivesTheTimeUntilThatDate() async {
        let answer = await policy(now: referenceDate)
            .retry(Middleware.attempt(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"]))
        #expect(answer.delay == 30)
    }

    @Test(arguments: [
        "Wed, 21 Oct 2015 07:28:45 GMT",  // IMF-fixdate
        "Wednesday, 21-Oct-15 07:28:45 GMT",  // obsolete RFC 850
        "Wed Oct 21 07:28:45 2015",  // obsolete asctime
    ])
    func retryAfterAcceptsEveryHTTPDateForm(value: String) {
        #expect(RetryPolicy.retryAfter(value, now: referenceDate) == 45)
    }

    @Test func asctimeDateWithASingleDigitDayIsAccepted() {
        // asctime pads a one-digit day with a space: "Sun Nov  6 08:49:37 1994".
        let now = Date(timeIntervalSince1970: 784_111_777 - 10)  // 10 s before Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryPolicy.retryAfter("Sun Nov  6 08:49:37 1994", now: now) == 10)
    }

    @Test func retryAfterDateInThePastMeansRetryNow() async {
        let answer = await policy(now: referenceDate)
            .retry(Middleware.attempt(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:00:00 GMT"]))
        #expect(answer.delay == 0)
    }

    @Test func retryAfterBeyondTheMaximumStopsRetrying() async {
        let policy = policy(maximumRetryAfter: 60)
        let tooLong = await policy.retry(Middleware.attempt(status: 503, headers: ["Retry-After": "61"]))
        #expect(!tooLong.retries)
        let dateTooLong = await policy.retry(
            Middleware.attempt(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:30:00 GMT"]))
        #expect(!dateTooLong.retries)
        let justRight = await policy.retry(Middleware.attempt(status: 503, headers: ["Retry-After": "60"]))
        #expect(justRight.delay == 60)
    }

    /// A delay-seconds value too large for an `Int` is still a number of seconds, and far beyond
    /// `maximumRetryAfter`: the retries stop instead of coming back after the computed delay.
    @Test func retryAfterTooLargeForAnIntegerStopsRetrying() async {
        let answer = await policy(maximumRetryAfter: 120)
            .retry(Middleware.attempt(status: 503, headers: ["Retry-After": "99999999999999999999"]))
        #expect(!answer.retries, "got \(answer)")
    }

    @Test func unreadableRetryAfterFallsBackToTheComputedDelay() async {
        let answer = await policy(baseDelay: 3).retry(Middleware.attempt(status: 503, headers: ["Retry-After": "soon"]))
        #expect(answer.delay == 3)
    }

    @Test func retryAfterDoesNotMakeANonRetryableStatusRetryable() async {
        let answer = await policy().retry(Middleware.attempt(status: 400, headers: ["Retry-After": "1"]))
        #expect(!answer.retries)
    }

    @Test func nonIdempotentRequestsAreNotRetried() async {
        #expect(await !policy().retry(Middleware.attempt(status: 503, isIdempotent: false)).retries)
        #expect(await !policy().retry(Middleware.attempt(urlError: .timedOut, isIdempotent: false)).retries)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatusesAreRetried(status: Int) async {
        #expect(await policy().retry(Middleware.attempt(status: status)).retries)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func otherStatusesAreNotRetried(status: Int) async {
        #expect(await !policy().retry(Middleware.attempt(status: status)).retries)
    }

    @Test(arguments: [URLError.Code.timedOut, .cannotConnectToHost, .networkConnectionLost, .cannotFindHost])
    func retryableTransportErrorsAreRetried(code: URLError.Code) async {
        #expect(await policy().retry(Middleware.attempt(urlError: code)).retries)
    }

    @Test(arguments: [URLError.Code.badURL, .userAuthenticationRequired, .unsupportedURL])
    func otherTransportErrorsAreNotRetried(code: URLError.Code) async {
        #expect(await !policy().retry(Middleware.attempt(urlError: code)).retries)
    }

    @Test func errorsWithoutAStatusOrURLErrorAreNotRetried() async {
        let attempt = FailedAttempt(
            request: URLRequest(url: URL(string: "http://api.test/items")!),
            error: Fixtures.TestError(code: "adapter"), response: nil, number: 1, isIdempotent: true)
        #expect(await !policy().retry(attempt).retries)
    }

    @Test func customRetryableStatusesReplaceTheDefaults() async {
        let policy = RetryPolicy(retryableStatusCodes: [418], jitter: 0)
        #expect(await policy.retry(Middleware.attempt(status: 418)).retries)
        #expect(await !policy.retry(Middleware.attempt(status: 503)).retries)
    }
}

// MARK: - End to end through Connect

@Suite("RetryPolicy: through Connect", timeLimit(minutes: 1))
struct RetryPolicyPipelineTests {
    private func connect(
        _ transport: RecordingTransport, policy: RetryPolicy, sleep: Middleware.RecordingSleep,
        adapters: [any RequestAdapter] = []
    ) -> Connect {
        Middleware.connect(
            transport: transport, middleware: ConnectMiddleware(adapters: adapters, retriers: [policy]), sleep: sleep)
    }

    @Test func threeAttemptsMeanThreeSendsAndTheLastErrorIsDelivered() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"down"}"#, status: 503) }
        let sleep = Middleware.RecordingSleep()
        let result = await connect(transport, policy: policy(maximumAttempts: 3), sleep: sleep)
            .request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 3)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 503)
        #expect(sleep.delays == [1, 2])
    }

    @Test func delaysAreSleptThroughTheConfigurationsSleepAndCapped() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let sleep = Middleware.RecordingSleep()
        _ = await connect(
            transport, policy: policy(maximumAttempts: 6, baseDelay: 1, multiplier: 2, maximumDelay: 5), sleep: sleep
        ).request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 6)
        #expect(sleep.delays == [1, 2, 4, 5, 5])
    }

    @Test func jitteredDelaysStayWithinBounds() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let sleep = Middleware.RecordingSleep()
        let random = Fixtures.Counter()
        let policy = RetryPolicy(
            maximumAttempts: 5, baseDelay: 1, multiplier: 2, maximumDelay: 100, jitter: 0.5,
            random: { [0.0, 0.3, 0.7, 0.99][(random.increment() - 1) % 4] })
        _ = await connect(transport, policy: policy, sleep: sleep).request(Middleware.Call()).asyncResult
        let expected: [TimeInterval] = [1 * 0.5, 2 * 0.65, 4 * 0.85, 8 * 0.995]
        try #require(sleep.delays.count == 4)
        for (delay, want) in zip(sleep.delays, expected) { #expect(abs(delay - want) < 1e-9) }
    }

    @Test func retryThenSuccessDeliversTheSuccess() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() < 3 ? Fixtures.json("{}", status: 502) : Fixtures.json(#"{"id":1,"title":"t"}"#)
        }
        let todo = try await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).decoded(toType: Fixtures.Todo.self).value
        #expect(todo == Fixtures.Todo(id: 1, title: "t"))
        #expect(transport.requests.count == 3)
    }

    @Test func retryAfterSecondsGiveThatDelay() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() == 1
                ? Fixtures.json("{}", status: 503, headers: ["Retry-After": "2"]) : Fixtures.json("{}")
        }
        let sleep = Middleware.RecordingSleep()
        _ = try await connect(transport, policy: policy(baseDelay: 0.1), sleep: sleep).request(Middleware.Call()).value
        #expect(sleep.delays == [2])
        #expect(transport.requests.count == 2)
    }

    @Test func retryAfterHTTPDateGivesTheDifferenceFromNow() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() == 1
                ? Fixtures.json("{}", status: 429, headers: ["Retry-After": "Wed, 21 Oct 2015 07:28:12 GMT"])
                : Fixtures.json("{}")
        }
        let sleep = Middleware.RecordingSleep()
        _ = try await connect(transport, policy: policy(now: referenceDate), sleep: sleep)
            .request(Middleware.Call()).value
        #expect(sleep.delays == [12])
    }

    @Test func retryAfterBeyondTheMaximumIsNotRetried() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503, headers: ["Retry-After": "3600"]) }
        let sleep = Middleware.RecordingSleep()
        let result = await connect(transport, policy: policy(maximumRetryAfter: 120), sleep: sleep)
            .request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 1)
        #expect(sleep.delays.isEmpty)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 503)
    }

    @Test func postIsNotRetried() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        let result = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call(method: .post)).asyncResult
        #expect(transport.requests.count == 1)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 503)
    }

    @Test func postMarkedIdempotentIsRetriedWithItsBody() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        let call = Middleware.Call(
            method: .post, parameters: Parameter.jsonObject(value: ["key": "idem-1"]), idempotent: true)
        _ = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep()).request(call).asyncResult
        #expect(transport.requests.count == 3)
        #expect(transport.requests.allSatisfy { $0.httpMethod == "POST" })
        #expect(transport.requests.allSatisfy { $0.httpBody == Data(#"{"key":"idem-1"}"#.utf8) })
    }

    /// Usage.md lists the methods retried without a connector's say-so; `QUERY` (a safe,
    /// idempotent method that carries a body) is one of them.
    @Test(arguments: [HTTPMethod.get, .head, .put, .delete, .options, .trace, .query])
    func idempotentMethodsAreRetried(method: HTTPMethod) async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        _ = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call(method: method)).asyncResult
        #expect(transport.requests.count == 3)
    }

    @Test func getMarkedNotIdempotentIsNotRetried() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        _ = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call(idempotent: false)).asyncResult
        #expect(transport.requests.count == 1)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatusIsSentAgain(status: Int) async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: status) }
        let result = await connect(transport, policy: policy(maximumAttempts: 2), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 2)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == status)
    }

    @Test(arguments: [400, 401, 404, 422])
    func nonRetryableStatusIsSentOnce(status: Int) async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: status) }
        let sleep = Middleware.RecordingSleep()
        let result = await connect(transport, policy: policy(), sleep: sleep).request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 1)
        #expect(sleep.delays.isEmpty)
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == status)
    }

    @Test(arguments: [URLError.Code.timedOut, .cannotConnectToHost])
    func transportErrorsAreRetriedAndTheLastOneDelivered(code: URLError.Code) async throws {
        let transport = RecordingTransport { _ in throw URLError(code) }
        let result = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 3)
        guard case .transport(let underlying)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected a transport error, got \(result)")
            return
        }
        #expect((underlying as? URLError)?.code == code)
    }

    /// A transport of your own may throw Foundation's `NSError` in `NSURLErrorDomain`, which on
    /// Linux is no `URLError` to `as?`: it is retried by its code all the same.
    @Test func anNSErrorOfTheURLErrorDomainIsRetriedByItsCode() async throws {
        let transport = RecordingTransport { _ in throw NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut) }
        _ = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).asyncResult
        #expect(transport.requests.count == 3)
        let attempt = FailedAttempt(
            request: URLRequest(url: URL(string: "http://127.0.0.1:9")!),
            error: ConnectError.transport(
                underlying: NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost)),
            response: nil, number: 1, isIdempotent: true)
        #expect(attempt.urlErrorCode == .cannotConnectToHost)
        let other = FailedAttempt(
            request: URLRequest(url: URL(string: "http://127.0.0.1:9")!),
            error: NSError(domain: NSPOSIXErrorDomain, code: NSURLErrorCannotConnectToHost), response: nil, number: 1,
            isIdempotent: true)
        #expect(other.urlErrorCode == nil, "the code of another domain means something else")
    }

    @Test func transportErrorThenSuccessSucceeds() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            if calls.increment() == 1 { throw URLError(.timedOut) }
            return Fixtures.json("{}")
        }
        _ = try await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).value
        #expect(transport.requests.count == 2)
    }

    @Test func decodingFailureIsNeverRetried() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"unexpected":true}"#) }
        let result = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep())
            .request(Middleware.Call()).decoded(toType: Fixtures.Todo.self).asyncResult
        guard case .decoding? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected a decoding failure, got \(result)")
            return
        }
        #expect(transport.requests.count == 1)
    }

    @Test func adapterErrorIsNotRetried() async throws {
        let transport = RecordingTransport()
        let runs = Fixtures.Counter()
        let failing = ClosureAdapter { _ in
            runs.increment()
            throw Fixtures.TestError(code: "signing")
        }
        let result = await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep(), adapters: [failing])
            .request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == Fixtures.TestError(code: "signing"))
        #expect(runs.value == 1)
        #expect(transport.requests.isEmpty)
    }

    @Test func everyRetryIsRebuiltThroughTheAdaptersWithAFreshStamp() async throws {
        let transport = RecordingTransport { request in
            request.value(forHTTPHeaderField: "X-Stamp") == "stamp-3"
                ? Fixtures.json("{}") : Fixtures.json("{}", status: 503)
        }
        let stamps = Fixtures.Counter()
        let stamping = ClosureAdapter { request in
            var request = request
            #expect(request.value(forHTTPHeaderField: "X-Stamp") == nil, "adapters must start from the built request")
            request.setValue("stamp-\(stamps.increment())", forHTTPHeaderField: "X-Stamp")
            return request
        }
        _ = try await connect(transport, policy: policy(), sleep: Middleware.RecordingSleep(), adapters: [stamping])
            .request(Middleware.Call()).value
        #expect(
            transport.requests.map { $0.value(forHTTPHeaderField: "X-Stamp") } == ["stamp-1", "stamp-2", "stamp-3"])
    }

    /// A client whose retries wait in the real `Task.sleep` (60 s), reporting when a sleep starts and
    /// when it ends by throwing.
    private func backoffClient(_ transport: RecordingTransport) -> (
        Connect, sleeping: Fixtures.Gate, interrupted: Fixtures.Gate
    ) {
        let sleeping = Fixtures.Gate()
        let interrupted = Fixtures.Gate()
        let realSleep = ConnectConfiguration().sleep
        let connect = Middleware.connect(
            transport: transport,
            middleware: ConnectMiddleware(retriers: [RetryPolicy(baseDelay: 60, jitter: 0)])
        ) { configuration in
            configuration.sleep = { seconds in
                sleeping.open()
                do {
                    try await realSleep(seconds)
                } catch {
                    interrupted.open()
                    throw error
                }
            }
        }
        return (connect, sleeping, interrupted)
    }

    /// Waits up to `seconds` for `gate` to open; whether it did.
    private func opens(_ gate: Fixtures.Gate, within seconds: TimeInterval) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !gate.isOpen, Date() < deadline { try? await Task.sleep(nanoseconds: 5_000_000) }
        return gate.isOpen
    }

    @Test func cancellingDuringTheBackoffDelayCancelsAtOnceWithoutASecondSend() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        let (connect, sleeping, interrupted) = backoffClient(transport)
        let future = connect.request(Middleware.Call())
        try await sleeping.wait()
        let start = Date()
        future.cancel()
        let result = await future.asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        #expect(Date().timeIntervalSince(start) < 30)
        // The pipeline itself wakes from the 60 s sleep at once, and stops instead of sending again.
        #expect(await opens(interrupted, within: 30), "the backoff sleep was not interrupted")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(transport.requests.count == 1)
    }

    @Test func cancellingTheAwaitingTaskDuringTheBackoffDelayCancelsAtOnce() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        let (connect, sleeping, interrupted) = backoffClient(transport)
        let task = Task { try await connect.request(Middleware.Call()).value }
        try await sleeping.wait()
        let start = Date()
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect((error as? ConnectError)?.isCancellation == true)
        #expect(Date().timeIntervalSince(start) < 30)
        #expect(await opens(interrupted, within: 30), "the backoff sleep was not interrupted")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(transport.requests.count == 1)
    }

    /// Any retry number, however odd, gives the first retry's delay at least: `Int.min` trapped.
    @Test func aRetryNumberBelowOneGivesTheFirstDelay() {
        let policy = RetryPolicy(baseDelay: 0.5, jitter: 0)
        #expect(policy.delay(beforeRetry: Int.min) == 0.5)
        #expect(policy.delay(beforeRetry: 0) == 0.5)
        #expect(policy.delay(beforeRetry: 1) == 0.5)
    }
}
