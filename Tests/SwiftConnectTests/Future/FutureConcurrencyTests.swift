import Dispatch
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias TestError = FutureFixtures.TestError

@Suite("Future: async/await bridge")
struct FutureConcurrencyTests {
    @Test func valueReturnsTheValueOfASucceededFuture() async throws {
        let value = try await Future(value: 42).value
        #expect(value == 42)
    }

    @Test func valueThrowsTheErrorOfAFailedFuture() async {
        await #expect(throws: TestError(id: 3)) {
            try await Future<Int>(error: TestError(id: 3)).value
        }
    }

    @Test func asyncResultReturnsSuccessAndFailureWithoutThrowing() async {
        let success = await Future(value: "ok").asyncResult
        let failure = await Future<String>(error: TestError(id: 1)).asyncResult
        #expect(success.futureTestValue == "ok")
        #expect(failure.futureTestError as? TestError == TestError(id: 1))
    }

    @Test func valueWaitsForAFutureCompletedLaterOnAnotherThread() async {
        let promise = Promise<Int>()
        let awaited = Task { try await promise.future.value }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { promise.succeed(7) }
        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.futureTestValue == 7)
    }

    @Test func valueThrowsAnErrorDeliveredLaterOnAnotherThread() async {
        let promise = Promise<Int>()
        let awaited = Task { try await promise.future.value }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { promise.fail(TestError(id: 8)) }
        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.futureTestError as? TestError == TestError(id: 8))
    }

    @Test func manyTasksAwaitingOneFutureAllGetItsValue() async {
        let promise = Promise<Int>()
        let sum = await Fixtures.outcome {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { (try? await promise.future.value) ?? 0 }
                }
                DispatchQueue.global().async { promise.succeed(1) }
                return await group.reduce(0, +)
            }
        }
        #expect(sum == 100)
    }

    // MARK: Cancelling the awaiting task

    @Test func cancellingTheAwaitingTaskThrowsCancelledAndCancelsTheFuture() async {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let awaited = Task { try await future.value }

        awaited.cancel()

        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.isConnectCancellation == true, "the await must end with ConnectError.cancelled")
        #expect(future.result?.isConnectCancellation == true)
        #expect(actions.value == 1)
    }

    @Test func cancellingATaskSuspendedOnTheFutureThrowsCancelledAndCancelsTheFuture() async {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let awaited = Task { try await future.value }
        // Not an assertion: gives the task time to suspend on the future before it is cancelled
        // (the previous test covers cancelling it before it starts).
        try? await Task.sleep(nanoseconds: 100_000_000)

        awaited.cancel()

        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.isConnectCancellation == true)
        #expect(future.result?.isConnectCancellation == true)
        #expect(actions.value == 1)
    }

    /// Usage.md: a future is one request, whoever awaits it; cancelling one awaiter cancels it for all.
    @Test func cancellingOneOfTwoTasksAwaitingAFutureCancelsItForBoth() async {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let first = Task { try await future.value }
        let second = Task { try await future.value }
        try? await Task.sleep(nanoseconds: 50_000_000)  // not an assertion: both suspend on the future

        first.cancel()

        let results = await Fixtures.outcome { (await first.result, await second.result) }
        #expect(results?.0.isConnectCancellation == true)
        #expect(results?.1.isConnectCancellation == true, "the other awaiter gets the cancellation too")
        #expect(actions.value == 1)
    }

    @Test func cancellingTheTaskAwaitingAsyncResultDeliversCancelled() async {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let awaited = Task { await future.asyncResult }
        awaited.cancel()
        let result = await Fixtures.outcome { await awaited.value }
        #expect(result?.isConnectCancellation == true)
        #expect(actions.value == 1)
    }

    @Test func cancellingTheTaskAwaitingADerivedFutureCancelsTheSource() async {
        let sourceActions = Counter()
        let source = Future<Int>(callbackQueue: nil) { sourceActions.increment() }
        let derived = source.map { $0 + 1 }.flatMap { Future(value: $0) }
        let awaited = Task { try await derived.value }
        awaited.cancel()
        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.isConnectCancellation == true)
        #expect(source.result?.isConnectCancellation == true)
        #expect(sourceActions.value == 1)
    }

    @Test func cancellingTheTaskAfterTheFutureCompletedKeepsTheValue() async {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        future.complete(with: .success(5))
        let awaited = Task { try await future.value }
        let result = await Fixtures.outcome { await awaited.result }
        awaited.cancel()
        #expect(result?.futureTestValue == 5)
        #expect(future.result?.futureTestValue == 5)
        #expect(actions.value == 0)
    }

    // MARK: No callback queue involved

    @Test func awaitingACompletedFutureReturnsEvenWhileItsQueueIsBlocked() async {
        let blocked = DispatchQueue(label: "concurrency.blocked")
        let gate = DispatchSemaphore(value: 0)
        blocked.async { _ = gate.wait(timeout: .now() + Fixtures.timeout) }
        defer { gate.signal() }

        let future = Future(value: 3, callbackQueue: blocked)
        let value = await Fixtures.outcome { try? await future.value }
        #expect(value == 3)
    }

    @Test func awaitingAPendingFutureReturnsEvenWhileItsQueueIsBlocked() async {
        let blocked = DispatchQueue(label: "concurrency.blocked")
        let gate = DispatchSemaphore(value: 0)
        blocked.async { _ = gate.wait(timeout: .now() + Fixtures.timeout) }
        defer { gate.signal() }

        let promise = Promise<Int>(callbackQueue: blocked)
        let awaited = Task { try await promise.future.value }
        DispatchQueue.global().async { promise.succeed(4) }
        let result = await Fixtures.outcome { await awaited.result }
        #expect(result?.futureTestValue == 4)
    }
}
