import Dispatch
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias Log = FutureFixtures.Log
private typealias TestError = FutureFixtures.TestError

@Suite("Promise: completes its future exactly once")
struct PromiseTests {
    @Test func firstSucceedWinsAndLaterCompletionsReturnFalse() {
        let promise = Promise<Int>()
        let seen = Log<Int>()
        promise.future.observe { seen.append($0.futureTestValue ?? -1) }

        #expect(promise.succeed(1))
        #expect(!promise.succeed(2))
        #expect(!promise.fail(TestError(id: 3)))
        #expect(!promise.complete(with: .success(4)))
        #expect(!promise.complete(with: .failure(TestError(id: 5))))

        #expect(promise.future.result?.futureTestValue == 1)
        #expect(seen.values == [1])
    }

    @Test func firstFailWinsAndLaterCompletionsReturnFalse() {
        let promise = Promise<Int>()
        let seen = Log<Int>()
        promise.future.whenFailure { seen.append(($0 as? TestError)?.id ?? -1) }
        promise.future.whenSuccess { _ in seen.append(-100) }

        #expect(promise.fail(TestError(id: 1)))
        #expect(!promise.succeed(2))
        #expect(!promise.fail(TestError(id: 3)))
        #expect(!promise.complete(with: .success(4)))

        #expect(promise.future.result?.futureTestError as? TestError == TestError(id: 1))
        #expect(seen.values == [1])
    }

    @Test func firstCompleteWithWinsAndLaterCompletionsReturnFalse() {
        let promise = Promise<String>()
        let seen = Log<String>()
        promise.future.observe { seen.append($0.futureTestValue ?? "failure") }

        #expect(promise.complete(with: .success("first")))
        #expect(!promise.complete(with: .success("second")))
        #expect(!promise.succeed("third"))
        #expect(!promise.fail(TestError(id: 1)))

        #expect(promise.future.result?.futureTestValue == "first")
        #expect(seen.values == ["first"])
    }

    @Test func aCancelledFuturesPromiseCannotCompleteIt() {
        let promise = Promise<Int>()
        promise.future.cancel()
        #expect(!promise.succeed(1))
        #expect(!promise.fail(TestError(id: 1)))
        #expect(promise.future.result?.isConnectCancellation == true)
    }

    @Test func promiseWithoutQueueMakesAFutureWithoutQueue() {
        #expect(Promise<Int>().future.callbackQueue == nil)
        let queue = DispatchQueue(label: "promise.queue")
        #expect(Promise<Int>(callbackQueue: queue).future.callbackQueue === queue)
    }

    // MARK: Released while pending

    @Test func promiseReleasedWhilePendingFailsItsFutureWithAbandoned() {
        let seen = Log<Result<Int, any Error>>()
        let future: Future<Int>
        do {
            let promise = Promise<Int>()
            future = promise.future
            future.observe { seen.append($0) }
            #expect(seen.count == 0)
        }
        #expect(future.result?.isConnectAbandoned == true)
        #expect(future.result?.isConnectCancellation == false, "abandoned is not a cancellation")
        #expect(seen.count == 1)
        #expect(seen.values.first?.isConnectAbandoned == true)
    }

    @Test func promiseReleasedWhilePendingFailsDerivedFuturesToo() {
        let derived: Future<String>
        do {
            let promise = Promise<Int>()
            derived = promise.future.map { $0 + 1 }.flatMap { Future(value: "\($0)") }
        }
        #expect(derived.result?.isConnectAbandoned == true)
    }

    @Test func awaitingTheFutureOfAReleasedPromiseThrowsAbandonedInsteadOfHanging() async {
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        let task = Task { await future.asyncResult }
        promise = nil
        let result = await Fixtures.outcome { await task.value }
        #expect(result?.isConnectAbandoned == true)
    }

    @Test func promiseReleasedAfterCompletingLeavesTheResultAlone() {
        let future: Future<Int>
        do {
            let promise = Promise<Int>()
            future = promise.future
            promise.succeed(5)
        }
        #expect(future.result?.futureTestValue == 5)
    }
}
