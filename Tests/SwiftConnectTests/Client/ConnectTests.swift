import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

private func isCancelled(_ error: (any Error)?) -> Bool {
    (error as? ConnectError)?.isCancellation == true
}

@Suite("Connect: delivery")
struct ConnectDeliveryTests {
    @Test func requestDeliversTheBody() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"id":1,"title":"a"}"#) }
        let connect = makeConnect(transport: transport)
        let todo = try await connect.request(TestConnector(endpoint: "/todos/1")).decoded(toType: Fixtures.Todo.self)
            .value
        #expect(todo == Fixtures.Todo(id: 1, title: "a"))
        #expect(transport.requests.count == 1)
        #expect(transport.requests.first?.url?.absoluteString == "http://127.0.0.1:9/todos/1")
    }

    @Test func resultsArriveOnTheConfiguredCallbackQueue() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue")
        let connect = Fixtures.connect(transport: StubTransport { _ in Fixtures.json("{}") }) {
            $0.callbackQueue = marker.queue
        }
        let onQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            connect.request(TestConnector()).observe { _ in continuation.resume(returning: marker.isCurrent) }
        }
        #expect(onQueue)
    }

    /// Usage.md: without a queue of their own, every `Connect` observes on one serial queue for
    /// the whole process — the main queue on Apple platforms, the library's own on Linux.
    @Test func everyConnectWithoutAQueueOfItsOwnSharesTheDefaultCallbackQueue() {
        let first = Connect(transport: StubTransport { _ in Fixtures.json("{}") })
        let second = Connect(
            configuration: ConnectConfiguration(), transport: StubTransport { _ in Fixtures.json("{}") })
        #expect(first.configuration.callbackQueue === ConnectConfiguration.defaultCallbackQueue)
        #expect(second.configuration.callbackQueue === ConnectConfiguration.defaultCallbackQueue)
        #if canImport(Darwin)
            #expect(ConnectConfiguration.defaultCallbackQueue === DispatchQueue.main)
        #else
            #expect(ConnectConfiguration.defaultCallbackQueue !== DispatchQueue.main)
            #expect(ConnectConfiguration.defaultCallbackQueue.label == "SwiftConnect.callbacks")
        #endif
    }

    @Test func failuresArriveOnTheConfiguredCallbackQueue() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue.failures")
        let connect = Fixtures.connect(transport: StubTransport { _ in throw URLError(.timedOut) }) {
            $0.callbackQueue = marker.queue
        }
        let onQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            connect.request(TestConnector()).observe { _ in continuation.resume(returning: marker.isCurrent) }
        }
        #expect(onQueue)
    }

    @Test func invalidRequestFailureArrivesOnTheConfiguredCallbackQueue() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue.invalid")
        let transport = RecordingTransport()
        let connect = Fixtures.connect(transport: transport) { $0.callbackQueue = marker.queue }
        let (onQueue, error) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Bool, (any Error)?), Never>) in
            connect.request(TestConnector(endpoint: "/todos/{id}")).observe { result in
                continuation.resume(returning: (marker.isCurrent, Fixtures.error(of: result)))
            }
        }
        #expect(onQueue)
        #expect((error as? ConnectError).map { if case .invalidRequest = $0 { true } else { false } } == true)
        #expect(transport.requests.isEmpty)
    }

    @Test func decodedAndMappedResultsArriveOnTheConfiguredCallbackQueue() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue.derived")
        let connect = Fixtures.connect(transport: StubTransport { _ in Fixtures.json(#"{"id":2,"title":"b"}"#) }) {
            $0.callbackQueue = marker.queue
        }
        let (mapOnQueue, observeOnQueue) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Bool, Bool), Never>) in
            connect.request(TestConnector()).decoded(toType: Fixtures.Todo.self)
                .map { todo in (todo.id, marker.isCurrent) }
                .observe { result in
                    continuation.resume(returning: (Fixtures.value(of: result)?.1 == true, marker.isCurrent))
                }
        }
        #expect(mapOnQueue)
        #expect(observeOnQueue)
    }

    @Test func decodingRunsBeforeTheHopToTheCallbackQueueAndObserversRunOnIt() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue.decoding")
        let decodedOn = Recorder<Bool>()
        let decoder = DecodingProbe.decoder { decodedOn.append(marker.isCurrent) }
        let connect = Fixtures.connect(transport: StubTransport { _ in Fixtures.json("{}") }) {
            $0.callbackQueue = marker.queue
        }
        let observedOnQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            connect.request(TestConnector()).decoded(toType: DecodingProbe.self, decoder: decoder)
                .observe { _ in continuation.resume(returning: marker.isCurrent) }
        }
        #expect(decodedOn.values == [false])
        #expect(observedOnQueue)
    }

    /// As Usage.md says: decoding runs where the step before it completed, so after a step of the
    /// user's, which ran on the callback queue, it decodes there.
    @Test func decodingAfterAStepOfTheUsersRunsOnTheCallbackQueue() async throws {
        let marker = QueueMarker(label: "test.connect.callback-queue.decoding-after-step")
        let decodedOn = Recorder<Bool>()
        let decoder = DecodingProbe.decoder { decodedOn.append(marker.isCurrent) }
        let promise = Promise<Data>(callbackQueue: marker.queue)
        let decoded = promise.future.mapError { $0 }.decoded(toType: DecodingProbe.self, decoder: decoder)
        DispatchQueue.global().async { promise.succeed(Data("{}".utf8)) }
        _ = try await decoded.value
        #expect(decodedOn.values == [true])
    }

    #if canImport(FoundationNetworking)
        /// A body that arrives on URLSession's own thread (as a lone small response does on Linux)
        /// is decoded on the observers' queue, in the block that runs them, not before the hop.
        @Test func aBodyArrivingOnURLSessionsThreadIsDecodedOnTheObserversQueue() async throws {
            let marker = QueueMarker(label: "test.connect.decoding-after-hop")
            let decodedOn = Recorder<(onQueue: Bool, onSessionThread: Bool)>()
            let decoder = DecodingProbe.decoder { decodedOn.append((marker.isCurrent, SessionQueue.isCurrent)) }
            let promise = Promise<Data>(callbackQueue: marker.queue)
            let observedOnQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                promise.future.decoded(toType: DecodingProbe.self, decoder: decoder)
                    .observe { _ in continuation.resume(returning: marker.isCurrent) }
                SessionQueue.run { promise.succeed(Data("{}".utf8)) }
            }
            #expect(decodedOn.values.map(\.onQueue) == [true])
            #expect(decodedOn.values.map(\.onSessionThread) == [false])
            #expect(observedOnQueue)
        }

        /// A body handed to the observers' queue to be decoded there is not decoded once its
        /// future is cancelled while it waits for the queue: the value would be thrown away.
        @Test func aBodyWaitingForTheObserversQueueIsNotDecodedOnceCancelled() async throws {
            let marker = QueueMarker(label: "test.connect.decoding-cancelled")
            let decodings = Counter()
            let decoder = DecodingProbe.decoder { decodings.increment() }
            let promise = Promise<Data>(callbackQueue: marker.queue)
            let decoded = promise.future.decoded(toType: DecodingProbe.self, decoder: decoder)
            let gate = DispatchSemaphore(value: 0)
            marker.queue.async { gate.wait() }  // the queue is busy until the future is cancelled
            let cancelled = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                decoded.observe { result in
                    continuation.resume(
                        returning: (Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
                }
                SessionQueue.run { promise.succeed(Data("{}".utf8)) }
                decoded.cancel()
                gate.signal()
            }
            #expect(cancelled)
            #expect(decodings.value == 0)
            // Not cancelled, the same hand-over decodes (the test's setup does reach that path).
            let again = Promise<Data>(callbackQueue: marker.queue)
            let decodedAgain = again.future.decoded(toType: DecodingProbe.self, decoder: decoder)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                decodedAgain.observe { _ in continuation.resume() }
                SessionQueue.run { again.succeed(Data("{}".utf8)) }
            }
            #expect(decodings.value == 1)
        }

        /// Decoding never moves to the main queue, nor to a queue when the first observer is bound
        /// for none (an awaiting task's is not): there, it runs where the body arrives.
        @Test(arguments: [true, false])
        func aBodyArrivingOnURLSessionsThreadIsDecodedThereForTheMainQueueOrNoQueue(mainQueue: Bool) throws {
            let decodedOnSessionThread = Recorder<Bool>()
            let decoder = DecodingProbe.decoder { decodedOnSessionThread.append(SessionQueue.isCurrent) }
            let promise = Promise<Data>(callbackQueue: mainQueue ? DispatchQueue.main : nil)
            let decoded = promise.future.decoded(toType: DecodingProbe.self, decoder: decoder)
            decoded.observe { _ in }
            SessionQueue.run { promise.succeed(Data("{}".utf8)) }
            // Decoded during `succeed`, on this thread, marked as URLSession's.
            #expect(decodedOnSessionThread.values == [true])
            #expect(decoded.isCompleted)
        }

        /// A failure passes through on URLSession's thread: nothing to decode, nothing to hand over.
        @Test func aFailureArrivingOnURLSessionsThreadPassesThroughWithoutAHop() async throws {
            let marker = QueueMarker(label: "test.connect.decoding-failure")
            let promise = Promise<Data>(callbackQueue: marker.queue)
            let decoded = promise.future.decoded(toType: Fixtures.Todo.self)
            let observed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                decoded.observe { result in continuation.resume(returning: Fixtures.error(of: result) != nil) }
                SessionQueue.run {
                    promise.fail(ConnectError.invalidResponse)
                    // Completed before `fail` returned: the failure was not sent to the queue first.
                    #expect(decoded.isCompleted)
                }
            }
            #expect(observed)
        }
    #endif

    @Test func transportErrorBecomesTransportErrorKeepingTheURLError() async throws {
        let connect = makeConnect(transport: StubTransport { _ in throw URLError(.notConnectedToInternet) })
        let result = await connect.request(TestConnector()).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        guard case .transport(let underlying) = error else {
            Issue.record("expected .transport, got \(error)")
            return
        }
        #expect((underlying as? URLError)?.code == .notConnectedToInternet)
        #expect((error.underlyingError as? URLError)?.code == .notConnectedToInternet)
        #expect(!error.isCancellation)
    }

    @Test func nonURLTransportErrorIsWrappedToo() async throws {
        let connect = makeConnect(transport: StubTransport { _ in throw Fixtures.TestError(code: "socket") })
        let result = await connect.request(TestConnector()).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        #expect(error.underlyingError as? Fixtures.TestError == Fixtures.TestError(code: "socket"))
    }

    @Test func urlErrorCancelledFromTheTransportIsACancellation() async throws {
        let connect = makeConnect(transport: StubTransport { _ in throw URLError(.cancelled) })
        let result = await connect.request(TestConnector()).asyncResult
        #expect(isCancelled(Fixtures.error(of: result)))
    }

    @Test func invalidConnectorFailsBeforeSending() async throws {
        let transport = RecordingTransport()
        let result = await makeConnect(transport: transport)
            .request(TestConnector(endpoint: "/todos/{id}")).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        guard case .invalidRequest(.missingPathValue(let slot)) = error else {
            Issue.record("expected .invalidRequest(.missingPathValue), got \(error)")
            return
        }
        #expect(slot == "id")
        #expect(transport.requests.isEmpty)
    }

    @Test func configurationsDefaultHeadersAreSent() async throws {
        let transport = RecordingTransport()
        let connect = Fixtures.connect(transport: transport) {
            $0.defaultHeaders = [HTTPHeader(name: "X-Client", value: "tests")]
        }
        _ = try await connect.request(TestConnector()).value
        #expect(transport.requests.first?.value(forHTTPHeaderField: "X-Client") == "tests")
    }
}

@Suite("Connect: cancellation", timeLimit(minutes: 1))
struct ConnectCancellationTests {
    /// A transport that signals `started`, then waits for `release` (cancellably) and records
    /// whether its wait was cancelled.
    private struct SlowTransport {
        let started: Fixtures.Gate
        let release = Fixtures.Gate()
        let sawCancellation = Fixtures.Counter()
        let calls = Fixtures.Counter()

        init(expectedRequests: Int = 1) {
            started = Fixtures.Gate(count: expectedRequests)
        }

        var transport: StubTransport {
            StubTransport { [started, release, sawCancellation, calls] _ in
                calls.increment()
                started.arrive()
                do {
                    try await release.wait()
                } catch {
                    sawCancellation.increment()
                    throw error
                }
                return Fixtures.json(#"{"late":true}"#)
            }
        }
    }

    @Test func futureCancelWhileTransportWaitsGivesOneCancellation() async throws {
        let slow = SlowTransport()
        let future = makeConnect(transport: slow.transport).request(TestConnector())
        try await slow.started.wait()
        future.cancel()
        let (result, calls) = await Fixtures.observeOnce(future, settle: 0.1)
        #expect(calls == 1)
        #expect(isCancelled(Fixtures.error(of: result)))
    }

    @Test func futureCancelStopsTheTransportsWork() async throws {
        let slow = SlowTransport()
        let future = makeConnect(transport: slow.transport).request(TestConnector())
        try await slow.started.wait()
        future.cancel()
        _ = await future.asyncResult
        for _ in 0..<100 where slow.sawCancellation.value == 0 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(slow.sawCancellation.value == 1)
    }

    @Test func cancellationWinsOverALateResponse() async throws {
        let slow = SlowTransport()
        let connect = makeConnect(transport: slow.transport)
        let future = connect.response(TestConnector())
        try await slow.started.wait()
        future.cancel()
        slow.release.open()
        let (result, calls) = await Fixtures.observeOnce(future, settle: 0.1)
        #expect(calls == 1)
        #expect(isCancelled(Fixtures.error(of: result)))
        #expect(isCancelled(Fixtures.error(of: try #require(future.result))))
    }

    @Test func cancellingTheAwaitingTaskGivesCancellation() async throws {
        let slow = SlowTransport()
        let connect = makeConnect(transport: slow.transport)
        let waiter = Task { await connect.request(TestConnector()).asyncResult }
        try await slow.started.wait()
        waiter.cancel()
        let result = await waiter.value
        #expect(isCancelled(Fixtures.error(of: result)))
    }

    @Test func cancellingTheAwaitingTaskThrowsCancelledFromValue() async throws {
        let slow = SlowTransport()
        let connect = makeConnect(transport: slow.transport)
        let waiter = Task { try await connect.request(TestConnector()).decoded(toType: Fixtures.Todo.self).value }
        try await slow.started.wait()
        waiter.cancel()
        await #expect(throws: ConnectError.self) { _ = try await waiter.value }
        let error = await Fixtures.error(of: waiter.result)
        #expect(isCancelled(error))
    }

    @Test func cancelAllRequestsCancelsEveryRequestInFlightExactlyOnce() async throws {
        let slow = SlowTransport(expectedRequests: 4)
        let connect = makeConnect(transport: slow.transport)
        let futures = (0..<4).map { connect.request(TestConnector(endpoint: "/items/\($0)")) }
        try await slow.started.wait()
        connect.cancelAllRequests()
        var outcomes: [(Result<Data, any Error>, Int)] = []
        for future in futures {
            outcomes.append(await Fixtures.observeOnce(future, settle: 0.02))
        }
        #expect(outcomes.count == 4)
        for (result, calls) in outcomes {
            #expect(calls == 1)
            #expect(isCancelled(Fixtures.error(of: result)))
        }
        for _ in 0..<100 where slow.sawCancellation.value < 4 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(slow.sawCancellation.value == 4)
    }

    @Test func cancelAllRequestsLeavesCompletedAndLaterRequestsAlone() async throws {
        let connect = makeConnect(transport: StubTransport { _ in Fixtures.json(#"{"n":1}"#) })
        let done = connect.request(TestConnector())
        _ = try await done.value
        connect.cancelAllRequests()
        #expect(try done.result?.get() == Data(#"{"n":1}"#.utf8))
        let later = try await connect.request(TestConnector()).value
        #expect(later == Data(#"{"n":1}"#.utf8))
    }

    /// Cancelling every request reaches what the caller holds — a body's future fails at once,
    /// not when the response's has passed its cancellation on — and each request once.
    @Test func cancelAllRequestsFailsBodiesAndResponsesAtOnce() async throws {
        let slow = SlowTransport(expectedRequests: 2)
        let connect = makeConnect(transport: slow.transport)
        let body = connect.request(TestConnector(endpoint: "/body"))
        let response = connect.response(TestConnector(endpoint: "/response"))
        try await slow.started.wait()
        connect.cancelAllRequests()
        #expect(body.result.map { isCancelled(Fixtures.error(of: $0)) } == true)
        #expect(response.result.map { isCancelled(Fixtures.error(of: $0)) } == true)
        for _ in 0..<100 where slow.sawCancellation.value < 2 {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(slow.sawCancellation.value == 2)
    }

    @Test func cancellationIsDistinguishableFromFailures() async throws {
        let failing = makeConnect(transport: StubTransport { _ in throw URLError(.timedOut) })
        let failure = await failing.request(TestConnector()).asyncResult
        let slow = SlowTransport()
        let cancelled = makeConnect(transport: slow.transport).request(TestConnector())
        try await slow.started.wait()
        cancelled.cancel()
        let cancellation = await cancelled.asyncResult
        #expect(!isCancelled(Fixtures.error(of: failure)))
        #expect(isCancelled(Fixtures.error(of: cancellation)))
    }

    @Test func cancelAfterCompletionChangesNothing() async throws {
        let future = makeConnect(transport: StubTransport { _ in Fixtures.json("[]") }).request(TestConnector())
        _ = try await future.value
        future.cancel()
        #expect(try future.result?.get() == Data("[]".utf8))
    }

    @Test func cancelBeforeTheTransportRunsSendsNothingOrStopsIt() async throws {
        let slow = SlowTransport()
        let future = makeConnect(transport: slow.transport).request(TestConnector())
        future.cancel()
        let (result, calls) = await Fixtures.observeOnce(future, settle: 0.1)
        #expect(calls == 1)
        #expect(isCancelled(Fixtures.error(of: result)))
        #expect(slow.calls.value == slow.sawCancellation.value)
    }
}

@Suite("Connect: lifetime", timeLimit(minutes: 1))
struct ConnectLifetimeTests {
    @Test func futureCompletesAfterTheConnectIsReleased() async throws {
        let started = Fixtures.Gate()
        let release = Fixtures.Gate()
        let transport = StubTransport { _ in
            started.arrive()
            try await release.wait()
            return Fixtures.json(#"{"id":1,"title":"outlived"}"#)
        }
        weak var weakConnect: Connect?
        let future: Future<Fixtures.Todo>
        do {
            let connect = makeConnect(transport: transport)
            weakConnect = connect
            future = connect.request(TestConnector()).decoded(toType: Fixtures.Todo.self)
        }
        try await started.wait()
        #expect(weakConnect == nil)
        release.open()
        let todo = try await future.value
        #expect(todo == Fixtures.Todo(id: 1, title: "outlived"))
    }

    @Test func observerRunsAfterTheConnectIsReleased() async throws {
        let release = Fixtures.Gate()
        let transport = StubTransport { _ in
            try await release.wait()
            return Fixtures.json("{}")
        }
        weak var weakConnect: Connect?
        let future: Future<Data>
        do {
            let connect = makeConnect(transport: transport)
            weakConnect = connect
            future = connect.request(TestConnector())
        }
        #expect(weakConnect == nil)
        release.open()
        let (result, calls) = await Fixtures.observeOnce(future)
        #expect(calls == 1)
        #expect(Fixtures.value(of: result) == Data("{}".utf8))
    }
}

/// Waits up to a second for `isReleased` to hold: the thread that completed a future lets go of
/// it just after the awaiting task resumes.
private func released(_ isReleased: () -> Bool) async throws -> Bool {
    for _ in 0..<100 where !isReleased() {
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    return isReleased()
}

@Suite("Connect: in-flight registry", timeLimit(minutes: 1))
struct ConnectRegistryTests {
    /// `cancelAllRequests()` needs each future only while its request is in flight: the client
    /// holds none of a completed request's, whether `request` or `response` made it.
    @Test func aClientHoldsNoFutureOfACompletedRequest() async throws {
        let connect = makeConnect(transport: StubTransport { _ in Fixtures.json("{}") })
        weak var body: Future<Data>?
        weak var response: Future<Response>?
        do {
            let bodyFuture = connect.request(TestConnector())
            body = bodyFuture
            let responseFuture = connect.response(TestConnector())
            response = responseFuture
            #expect(try await bodyFuture.value == Data("{}".utf8))
            #expect(try await responseFuture.value.statusCode == 200)
        }
        #expect(try await released { body == nil && response == nil })
    }

    /// A request's promise let go uncompleted fails both futures, so that no caller waits
    /// forever, as a `Promise` does.
    @Test func aRequestPromiseReleasedUncompletedFailsBothFutures() {
        let response = Future<Response>(callbackQueue: nil)
        let body = response.derived(Data.self)
        do { _ = RequestPromise(response: response, body: body) }
        for result in [response.result?.map(\.data), body.result] {
            guard case .failure(ConnectError.abandoned) = result else {
                Issue.record("not failed as abandoned: \(String(describing: result))")
                continue
            }
        }
    }

    /// A slot freed and given to another request stays that request's: a second removal by the
    /// request that left it (a cancelled transfer completing after the cancellation, say) does not
    /// take the new one out of `cancelAllRequests()`'s reach.
    @Test func aSlotGivenToAnotherRequestStaysItsOwn() {
        let registry = RequestRegistry()
        let first = Future<Int>(callbackQueue: nil)
        let slot = registry.insert(first)
        registry.remove(slot, holding: first)
        let second = Future<Int>(callbackQueue: nil)
        #expect(registry.insert(second) == slot)
        registry.remove(slot, holding: first)
        registry.cancelAll()
        #expect(second.result.map { isCancelled(Fixtures.error(of: $0)) } == true)
        #expect(first.result == nil)
    }

    /// A burst of requests grew the registry for good. Its slots are let go once every request has
    /// left; a few are kept for the next ones, and a late second removal of a slot let go is
    /// harmless.
    @Test func aBurstsSlotsAreLetGoWhenItEnds() {
        let registry = RequestRegistry()
        let futures = (0..<1_000).map { _ in Future<Int>(callbackQueue: nil) }
        let slots = futures.map { registry.insert($0) }
        #expect(registry.slotCount == 1_000)
        for (slot, future) in zip(slots, futures).dropLast() { registry.remove(slot, holding: future) }
        #expect(registry.slotCount == 1_000, "one request still in flight")
        registry.remove(slots[999], holding: futures[999])
        #expect(registry.slotCount == 0)
        registry.remove(slots[999], holding: futures[999])
        registry.remove(slots[0], holding: futures[0])

        let next = Future<Int>(callbackQueue: nil)
        let slot = registry.insert(next)
        #expect(registry.slotCount == 1)
        registry.remove(slot, holding: futures[0])  // the slot's former owner: not this request
        registry.cancelAll()
        #expect(next.result.map { isCancelled(Fixtures.error(of: $0)) } == true)

        // Up to `keptSlots` slots are kept when all are free: `next` and these.
        let few = (1..<RequestRegistry.keptSlots).map { _ in Future<Int>(callbackQueue: nil) }
        let fewSlots = few.map { registry.insert($0) }
        registry.remove(slot, holding: next)
        for (slot, future) in zip(fewSlots, few) { registry.remove(slot, holding: future) }
        #expect(registry.slotCount == RequestRegistry.keptSlots)
    }
}

@Suite("Connect: debugResponse")
struct ConnectDebugTests {
    private static let secret = "s3cr3t-T0KEN-value"

    private func connect(logger: CapturingLogger, reply: StubTransport.Reply) -> Connect {
        makeConnect(transport: StubTransport { _ in reply }, logger: logger)
    }

    private var authorized: TestConnector {
        TestConnector(endpoint: "/todos", headers: [.authorization(bearerToken: Self.secret)])
    }

    @Test func debugResponseOffLogsNothing() async throws {
        let logger = CapturingLogger()
        let connect = connect(logger: logger, reply: Fixtures.json(#"{"id":1}"#))
        _ = try await connect.request(authorized).value
        _ = await connect.request(TestConnector(endpoint: "/{missing}")).asyncResult
        #expect(logger.messages.isEmpty)
    }

    @Test func debugResponseOffIsTheDefault() async throws {
        let logger = CapturingLogger()
        _ = await connect(logger: logger, reply: Fixtures.json("{}", status: 500)).request(authorized).asyncResult
        #expect(logger.messages.isEmpty)
    }

    /// The client-wide debug mode (Endpoints' `debug`): every request and upload is logged, the
    /// ones that fail to build too, with credentials redacted as for `debugResponse: true`.
    @Test func debugResponsesInTheConfigurationLogsEveryRequest() async throws {
        let logger = CapturingLogger()
        var configuration = ConnectConfiguration(logger: logger, debugResponses: true)
        configuration.callbackQueue = DispatchQueue(label: "test.callbacks")
        let connect = Connect(
            configuration: configuration, transport: StubTransport { _ in Fixtures.json(#"{"id":1}"#) })
        _ = try await connect.request(authorized).value
        #expect(logger.messages.contains { $0.contains("curl") && $0.contains("http://127.0.0.1:9/todos") })
        #expect(logger.messages.contains { $0.contains("200") })
        let logged = logger.messages.count
        _ = try await connect.response(TestConnector(endpoint: "/items")).value
        #expect(logger.messages.dropFirst(logged).contains { $0.contains("http://127.0.0.1:9/items") })
        _ = try await connect.upload(
            files: [File(name: "a.txt", key: "file", mimeType: .txt, data: Data("x".utf8))],
            to: TestConnector(endpoint: "/upload", method: .post, headers: authorized.headers)
        )
        .value
        #expect(logger.messages.contains { $0.contains("multipart/form-data upload") })
        _ = await connect.request(TestConnector(endpoint: "/{missing}")).asyncResult
        #expect(logger.messages.last?.contains("missing") == true)
        #expect(!logger.messages.joined().contains(Self.secret))
    }

    @Test func debugResponseLogsACurlLineWithAuthorizationRedacted() async throws {
        let logger = CapturingLogger()
        _ = try await connect(logger: logger, reply: Fixtures.json(#"{"id":1}"#))
            .request(authorized, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        #expect(log.contains("curl"))
        #expect(log.contains("http://127.0.0.1:9/todos"))
        #expect(log.contains("Authorization: <redacted>"))
        #expect(!log.contains(Self.secret))
    }

    @Test func debugResponseLogsStatusElapsedTimeAndPrettyBody() async throws {
        let logger = CapturingLogger()
        _ = try await connect(logger: logger, reply: Fixtures.json(#"{"id":1,"title":"pretty"}"#, status: 201))
            .request(authorized, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        #expect(log.contains("201"))
        #expect(log.range(of: #"\d+ ms"#, options: .regularExpression) != nil)
        #expect(log.contains("\n"))
        #expect(log.contains(#""title" : "pretty""#))
        #expect(log.contains("\n  \"id\" : 1"))
    }

    @Test func debugResponseLogsErrorResponsesToo() async throws {
        let logger = CapturingLogger()
        _ = await connect(logger: logger, reply: Fixtures.json(#"{"message":"denied"}"#, status: 403))
            .request(authorized, debugResponse: true).asyncResult
        let log = logger.messages.joined(separator: "\n")
        #expect(log.contains("403"))
        #expect(log.contains("denied"))
        #expect(!log.contains(Self.secret))
    }

    @Test func debugResponseLogsTransportFailures() async throws {
        let logger = CapturingLogger()
        let connect = makeConnect(transport: StubTransport { _ in throw URLError(.timedOut) }, logger: logger)
        _ = await connect.request(authorized, debugResponse: true).asyncResult
        let log = logger.messages.joined(separator: "\n")
        #expect(log.contains("curl"))
        #expect(log.contains("failed"))
        #expect(!log.contains(Self.secret))
    }

    @Test func debugResponseRedactsBasicCredentials() async throws {
        let logger = CapturingLogger()
        let connector = TestConnector(headers: [.authorization(username: "ada", password: "hunter2-pass")])
        _ = try await connect(logger: logger, reply: Fixtures.json("{}")).request(connector, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        let encoded = Data("ada:hunter2-pass".utf8).base64EncodedString()
        #expect(!log.contains(encoded))
        #expect(!log.contains("hunter2-pass"))
    }

    /// A server that echoes the request's headers (httpbin's `/headers`, `/anything`) must not
    /// leak the token into the debug log through the pretty-printed body.
    @Test func debugResponseRedactsAnAuthorizationHeaderEchoedInTheBody() async throws {
        let logger = CapturingLogger()
        let echo = StubTransport { request in
            let headers = request.allHTTPHeaderFields ?? [:]
            return try StubTransport.Reply.json(["headers": headers])
        }
        let connect = makeConnect(transport: echo, logger: logger)
        _ = try await connect.request(authorized, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        #expect(!log.contains(Self.secret), "the secret leaked into:\n\(log)")
    }

    /// A token header named by the connector (`AuthorizationToken.header(name:value:)`) looks like
    /// any header; echoed in the body or sent back as a header, it is redacted all the same.
    @Test(arguments: [true, false])
    func debugResponseRedactsACustomTokenHeaderEchoedInTheBodyOrTheHeaders(throughThePipeline: Bool) async throws {
        let logger = CapturingLogger()
        let echo = StubTransport { request in
            let headers = request.allHTTPHeaderFields ?? [:]
            var reply = try StubTransport.Reply.json(["headers": headers])
            reply.headers["X-Custom"] = headers["X-Custom"]
            return reply
        }
        let middleware: any ConnectMiddlewareProtocol =
            throughThePipeline ? ConnectMiddleware(adapters: [ClosureAdapter { $0 }]) : ConnectMiddleware()
        let connect = Connect(
            middleware: middleware,
            configuration: {
                var configuration = ConnectConfiguration()
                configuration.logger = logger
                return configuration
            }(), transport: echo)
        var connector = MiddlewareFixtures.Call()
        connector.authorizationToken = .header(name: "X-Custom", value: Self.secret)
        _ = try await connect.request(connector, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        #expect(log.contains("X-Custom"))
        #expect(!log.contains(Self.secret), "the secret leaked into:\n\(log)")
    }
}

@Suite("Connect: base URL override")
struct ConnectBaseURLOverrideTests {
    struct Item: Connector {
        var baseURL: URL { URL(string: "https://production.example/api")! }
        var endpoint: String { "/items/{id}" }
        var method: HTTPMethod { .post }
        var parameters: ParametersRepresentable? {
            CompositeParameters(
                .path(key: "id", value: "a b"), .query(key: "q", value: "1+1"), .form(key: "f", value: "v"))
        }
    }

    private func connect(baseURL: URL?, transport: RecordingTransport) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.baseURL = baseURL
        configuration.callbackQueue = DispatchQueue(label: "override.callbacks")
        return Connect(configuration: configuration, transport: transport)
    }

    @Test func configuredBaseURLReplacesTheConnectorsKeepingItsPath() async throws {
        let transport = RecordingTransport()
        let connect = connect(baseURL: URL(string: "http://127.0.0.1:8080/v2")!, transport: transport)
        _ = try await connect.request(Item()).value
        #expect(transport.requests.first?.url?.absoluteString == "http://127.0.0.1:8080/v2/items/a%20b?q=1%2B1")
        #expect(try connect.urlRequest(for: Item()).url?.host == "127.0.0.1")
    }

    @Test func withoutAnOverrideTheConnectorsBaseURLIsUsed() throws {
        let connect = connect(baseURL: nil, transport: RecordingTransport())
        #expect(
            try connect.urlRequest(for: Item()).url?.absoluteString
                == "https://production.example/api/items/a%20b?q=1%2B1")
    }

    @Test func anOverrideThatIsNotHTTPFailsBeforeSending() async throws {
        let transport = RecordingTransport()
        let result = await connect(baseURL: URL(string: "file:///tmp")!, transport: transport).request(Item())
            .asyncResult
        guard case .failure(ConnectError.invalidRequest(.invalidBaseURL)) = result else {
            Issue.record("expected invalidBaseURL, got \(result)")
            return
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func uploadsUseTheOverrideToo() async throws {
        let transport = RecordingTransport()
        let connect = connect(baseURL: URL(string: "http://127.0.0.1:8080")!, transport: transport)
        _ = try await connect.upload(
            files: [File(name: "a.txt", key: "file", mimeType: .txt, data: Data("x".utf8))], to: Item()
        ).value
        #expect(transport.requests.first?.url?.host == "127.0.0.1")
    }
}
