import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias Log = FutureFixtures.Log
private typealias TestError = FutureFixtures.TestError
private typealias Tracked = FutureFixtures.Tracked
private typealias MarkedQueue = FutureFixtures.MarkedQueue

@Suite("Future: results and observers")
struct FutureTests {
    // MARK: Results

    @Test func futureMadeWithValueHasSucceeded() {
        let future = Future(value: 42)
        #expect(future.isCompleted)
        #expect(future.result?.futureTestValue == 42)
    }

    @Test func futureMadeWithErrorHasFailed() {
        let future = Future<Int>(error: TestError(id: 7))
        #expect(future.isCompleted)
        #expect(future.result?.futureTestError as? TestError == TestError(id: 7))
    }

    @Test func pendingFutureHasNoResult() {
        let promise = Promise<Int>()
        #expect(!promise.future.isCompleted)
        #expect(promise.future.result == nil)
    }

    // MARK: Observers: once each, in order

    @Test func everyObserverRunsExactlyOnceInRegistrationOrder() {
        let promise = Promise<Int>()
        let log = Log<Int>()
        for index in 0..<100 {
            promise.future.observe { _ in log.append(index) }
        }
        #expect(log.count == 0, "no observer runs before the future completes")

        promise.succeed(1)
        promise.succeed(2)
        promise.fail(TestError(id: 3))

        #expect(log.values == Array(0..<100))
    }

    @Test func observersOnACallbackQueueRunOnceInRegistrationOrder() async {
        let target = MarkedQueue("future.order")
        let promise = Promise<Int>(callbackQueue: target.queue)
        let log = Log<Int>()
        let inTime = await Fixtures.signalled { done in
            for index in 0..<100 {
                promise.future.observe { _ in
                    log.append(index)
                    if index == 99 { done() }
                }
            }
            DispatchQueue.global().async { promise.succeed(1) }
        }
        #expect(inTime)
        target.queue.sync {}
        #expect(log.values == Array(0..<100))
    }

    /// A chain on a callback queue runs in the block of that queue it started in: the `map`'s
    /// future hands its observer to the same block, not to the back of the queue, behind a block
    /// the `map` queued meanwhile (one dispatch a chain, not one a link).
    @Test func aChainOnACallbackQueueRunsInOneBlockOfIt() async {
        let target = MarkedQueue("future.chain")
        let promise = Promise<Int>(callbackQueue: target.queue)
        let log = Log<String>()
        let inTime = await Fixtures.signalled { done in
            promise.future
                .map { value in
                    target.queue.async {
                        log.append("queued by map")
                        done()
                    }
                    return value
                }
                .observe { _ in log.append("observer") }
            promise.succeed(1)
        }
        #expect(inTime)
        #expect(log.values == ["observer", "queued by map"])
    }

    @Test func observingACompletedFutureStillRunsTheObserver() {
        let future = Future(value: 5)
        let log = Log<Int>()
        future.observe { log.append($0.futureTestValue ?? -1) }
        #expect(log.values == [5], "without a queue it runs at once, on the observing thread")
    }

    @Test func observersRegisteredAfterCompletionRunInRegistrationOrder() {
        let promise = Promise<Int>()
        promise.succeed(1)
        let log = Log<Int>()
        for index in 0..<100 {
            promise.future.observe { _ in log.append(index) }
        }
        #expect(log.values == Array(0..<100))
    }

    /// With no queue, the completing thread runs the observers registered before completion; one
    /// registered from another thread meanwhile waits behind them instead of running at once on
    /// its own thread, ahead of those not yet run.
    @Test func anObserverRegisteredWhileEarlierOnesRunWaitsBehindThem() async {
        let promise = Promise<Int>()
        await Self.registerWhileTheFirstObserverRuns(on: promise.future) { promise.succeed(1) }
    }

    @Test func anObserverRegisteredWhileADerivedFuturesObserversRunWaitsBehindThem() async {
        let promise = Promise<Int>()
        let derived = promise.future.map { $0 + 1 }.flatMap { Future(value: $0 * 2) }
        await Self.registerWhileTheFirstObserverRuns(on: derived) { promise.succeed(1) }
    }

    @Test func anObserverRegisteredWhileACancelledFuturesObserversRunWaitsBehindThem() async {
        let promise = Promise<Int>()
        let future = promise.future
        await Self.registerWhileTheFirstObserverRuns(on: future.map { $0 }) { future.cancel() }
    }

    /// Registers two observers on `future`, runs `complete` on another thread, and registers a
    /// third while the first one runs there: the third must run last.
    private static func registerWhileTheFirstObserverRuns(
        on future: SwiftConnect.Future<Int>, completingWith complete: @escaping @Sendable () -> Void
    ) async {
        let log = Log<String>()
        let firstRuns = DispatchSemaphore(value: 0)
        let registered = DispatchSemaphore(value: 0)
        future.observe { _ in
            firstRuns.signal()
            registered.wait()
            log.append("first")
        }
        future.observe { _ in log.append("second") }
        let inTime = await Fixtures.signalled { done in
            DispatchQueue.global().async(execute: complete)
            firstRuns.wait()
            future.observe { _ in
                log.append("late")
                done()
            }
            registered.signal()
        }
        #expect(inTime)
        #expect(log.values == ["first", "second", "late"])
    }

    /// Only a future's own earlier observers hold a new one back: observing a future of the chain
    /// whose observers have all run is not held up by another future still delivering.
    @Test func anObserverOfAFutureWhoseObserversHaveRunIsNotHeldUpByTheChain() async {
        let promise = Promise<Int>()
        let mapped = promise.future.map { $0 + 1 }
        let blocking = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        mapped.observe { _ in
            blocking.signal()
            release.wait()
        }
        DispatchQueue.global().async { promise.succeed(1) }
        blocking.wait()  // `mapped`'s observer runs, on the completing thread
        let log = Log<Int>()
        promise.future.observe { log.append($0.futureTestValue ?? -1) }
        #expect(log.values == [1], "ran at once: the source's own observers had all run")
        release.signal()
    }

    @Test func anObserverRegisteredByAnEarlierObserverRunsAfterTheRest() {
        let promise = Promise<Int>()
        let log = Log<String>()
        promise.future.observe { _ in
            log.append("first")
            promise.future.observe { _ in log.append("registered by the first") }
        }
        promise.future.observe { _ in log.append("second") }
        promise.succeed(1)
        #expect(log.values == ["first", "second", "registered by the first"])
        promise.future.observe { _ in log.append("after") }
        #expect(log.values.last == "after", "once the observers have run, a new one runs at once")
    }

    @Test func observersSeeTheSameSingleResult() {
        let promise = Promise<Int>()
        let log = Log<Int>()
        promise.future.observe { log.append($0.futureTestValue ?? -1) }
        promise.succeed(8)
        promise.future.observe { log.append($0.futureTestValue ?? -1) }
        promise.fail(TestError(id: 1))
        #expect(log.values == [8, 8])
    }

    @Test func observeReturnsTheSameFutureForChaining() {
        let future = Future(value: 1)
        let log = Log<String>()
        let returned =
            future
            .observe { _ in log.append("observe") }
            .whenSuccess { _ in log.append("success") }
            .whenFailure { _ in log.append("failure") }
        #expect(returned === future)
        #expect(log.values == ["observe", "success"])
    }

    @Test func whenSuccessRunsWithTheValueOnlyOnSuccess() {
        let succeeding = Promise<Int>()
        let failing = Promise<Int>()
        let log = Log<Int>()
        succeeding.future.whenSuccess { log.append($0) }
        failing.future.whenSuccess { log.append($0) }
        succeeding.succeed(3)
        failing.fail(TestError(id: 4))
        #expect(log.values == [3])
    }

    @Test func whenFailureRunsWithTheErrorOnlyOnFailure() {
        let succeeding = Promise<Int>()
        let failing = Promise<Int>()
        let log = Log<Int>()
        succeeding.future.whenFailure { log.append(($0 as? TestError)?.id ?? -1) }
        failing.future.whenFailure { log.append(($0 as? TestError)?.id ?? -1) }
        succeeding.succeed(3)
        failing.fail(TestError(id: 4))
        #expect(log.values == [4])
    }

    // MARK: Where observers run

    @Test func observersRunOnThePromisesQueueWhenCompletedFromAnotherThread() async {
        let target = MarkedQueue("future.target")
        let completer = MarkedQueue("future.completer")
        let promise = Promise<Int>(callbackQueue: target.queue)
        let onTarget = Log<Bool>()
        let inTime = await Fixtures.signalled { done in
            promise.future.observe { _ in
                onTarget.append(target.isCurrent && !completer.isCurrent)
                done()
            }
            completer.queue.async { promise.succeed(1) }
        }
        #expect(inTime)
        #expect(onTarget.values == [true])
    }

    @Test func observerOfACompletedFutureWithAQueueRunsOnThatQueueNotTheCaller() async {
        let target = MarkedQueue("future.target")
        let caller = MarkedQueue("future.caller")
        let future = Future(value: 1, callbackQueue: target.queue)
        let onTarget = Log<Bool>()
        let inTime = await Fixtures.signalled { done in
            caller.queue.sync {
                future.observe { _ in
                    onTarget.append(target.isCurrent && !caller.isCurrent)
                    done()
                }
            }
        }
        #expect(inTime)
        #expect(onTarget.values == [true])
    }

    @Test func withoutAQueueObserversRunOnTheCompletingThread() {
        let completer = MarkedQueue("future.completer")
        let promise = Promise<Int>()
        let onCompleter = Log<Bool>()
        promise.future.observe { _ in onCompleter.append(completer.isCurrent) }
        _ = completer.queue.sync { promise.succeed(1) }
        #expect(onCompleter.values == [true], "ran synchronously, on the completing queue")
    }

    @Test func withoutAQueueObserversOfACompletedFutureRunOnTheObservingThread() {
        let completer = MarkedQueue("future.completer")
        let observer = MarkedQueue("future.observer")
        let promise = Promise<Int>()
        _ = completer.queue.sync { promise.succeed(1) }
        let log = Log<String>()
        observer.queue.sync {
            promise.future.observe { _ in log.append(observer.isCurrent ? "on observer" : "elsewhere") }
            log.append("observe returned")
        }
        #expect(log.values == ["on observer", "observe returned"])
    }

    // MARK: Never under a lock

    @Test func observerCanObserveItsOwnFutureAgain() async {
        let promise = Promise<Int>()
        let future = promise.future
        let log = Log<String>()
        future.observe { _ in
            log.append("outer")
            future.observe { _ in log.append("inner") }
        }
        let finished = await Fixtures.finishes { promise.succeed(1) }
        #expect(finished, "re-entering the future from its observer deadlocked")
        #expect(log.values == ["outer", "inner"])
    }

    @Test func observerCanReadItsOwnFuturesResultAndCancelIt() async {
        let promise = Promise<Int>()
        let future = promise.future
        let log = Log<Int>()
        future.observe { _ in
            log.append(future.result?.futureTestValue ?? -1)
            log.append(future.isCompleted ? 1 : 0)
            future.cancel()
            future.setCancelAction {}
        }
        let finished = await Fixtures.finishes { promise.succeed(9) }
        #expect(finished, "re-entering the future from its observer deadlocked")
        #expect(log.values == [9, 1])
        #expect(future.result?.futureTestValue == 9)
    }

    @Test func observerCanCompleteAnotherPromiseThatTheSameChainObserves() async {
        let first = Promise<Int>()
        let second = Promise<Int>()
        let chain = first.future.flatMap { value in second.future.map { $0 + value } }
        first.future.observe { _ in second.succeed(10) }
        let finished = await Fixtures.finishes { first.succeed(1) }
        #expect(finished, "completing a promise from an observer deadlocked")
        #expect(chain.result?.futureTestValue == 11)
    }

    @Test func observerCanCompleteItsOwnPromiseAgain() async {
        let promise = Promise<Int>()
        let log = Log<Bool>()
        promise.future.observe { _ in log.append(promise.succeed(2)) }
        let finished = await Fixtures.finishes { promise.succeed(1) }
        #expect(finished)
        #expect(log.values == [false])
        #expect(promise.future.result?.futureTestValue == 1)
    }

    @Test func cancelActionCanReenterItsFuture() async {
        let holder = Log<Future<Int>>()
        let log = Log<String>()
        let future = Future<Int>(callbackQueue: nil) {
            guard let future = holder.values.first else { return }
            log.append(future.result?.isConnectCancellation == true ? "cancelled" : "not cancelled")
            future.observe { _ in log.append("observed") }
        }
        holder.append(future)
        let finished = await Fixtures.finishes { future.cancel() }
        #expect(finished, "re-entering the future from its cancel action deadlocked")
        #expect(log.values == ["cancelled", "observed"])
    }

    // MARK: Callbacks are released after they run

    @Test func observerIsReleasedOnceItHasRun() {
        let promise = Promise<Int>()
        weak var captured: Tracked?
        do {
            let object = Tracked()
            captured = object
            promise.future.observe { _ in withExtendedLifetime(object) {} }
        }
        #expect(captured != nil, "a pending future keeps its observers")
        promise.succeed(1)
        #expect(captured == nil, "the observer was kept after it ran")
    }

    @Test func observerOnAQueueIsReleasedOnceItHasRun() async {
        let target = MarkedQueue("future.release")
        let promise = Promise<Int>(callbackQueue: target.queue)
        weak var captured: Tracked?
        let ran = await Fixtures.signalled { done in
            let object = Tracked()
            captured = object
            promise.future.observe { _ in
                withExtendedLifetime(object) {}
                done()
            }
            promise.succeed(1)
        }
        #expect(ran)
        target.queue.sync {}
        #expect(captured == nil, "the observer was kept after it ran on its queue")
    }

    @Test func observerOfACompletedFutureIsReleasedOnceItHasRun() {
        let future = Future(value: 1)
        weak var captured: Tracked?
        do {
            let object = Tracked()
            captured = object
            future.observe { _ in withExtendedLifetime(object) {} }
        }
        #expect(captured == nil)
    }

    @Test func transformIsReleasedOnceItHasRun() {
        let promise = Promise<Int>()
        weak var captured: Tracked?
        let mapped: Future<Int>
        do {
            let object = Tracked()
            captured = object
            mapped = promise.future.map { value in withExtendedLifetime(object) { value + 1 } }
        }
        #expect(captured != nil)
        promise.succeed(1)
        #expect(mapped.result?.futureTestValue == 2)
        #expect(captured == nil, "the transform was kept after it ran")
    }

    @Test func cancelActionIsReleasedWhenTheFutureCompletes() {
        weak var captured: Tracked?
        let future: Future<Int>
        do {
            let object = Tracked()
            captured = object
            future = Future<Int>(callbackQueue: nil) { withExtendedLifetime(object) {} }
        }
        #expect(captured != nil, "a pending future keeps its cancel action")
        future.complete(with: .success(1))
        #expect(captured == nil, "the cancel action was kept after the future completed")
    }

    // MARK: Cancelling

    @Test func cancelFailsAPendingFutureWithCancelled() {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let seen = Log<Result<Int, any Error>>()
        future.observe { seen.append($0) }

        future.cancel()

        #expect(future.result?.isConnectCancellation == true)
        #expect(seen.count == 1)
        #expect(seen.values.first?.isConnectCancellation == true)
        #expect(actions.value == 1)
    }

    @Test func cancelRunsTheCancelActionExactlyOnce() {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        future.cancel()
        future.cancel()
        future.cancel()
        #expect(actions.value == 1)
    }

    @Test func cancelOnACompletedFutureDoesNothing() {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        let seen = Log<Int>()
        future.observe { seen.append($0.futureTestValue ?? -1) }
        future.complete(with: .success(3))

        future.cancel()

        #expect(future.result?.futureTestValue == 3)
        #expect(seen.values == [3])
        #expect(actions.value == 0)
    }

    @Test func cancelOnAPromisesFutureFailsItAndLaterCompletionsLose() {
        let promise = Promise<Int>()
        promise.future.cancel()
        #expect(promise.future.result?.isConnectCancellation == true)
        #expect(promise.succeed(1) == false)
    }

    @Test func cancellationCanBeToldApartFromFailures() {
        #expect(ConnectError.cancelled.isCancellation)
        #expect(!ConnectError.abandoned.isCancellation)
        #expect(!ConnectError.invalidResponse.isCancellation)
        #expect(!ConnectError.transport(underlying: TestError(id: 1)).isCancellation)
    }

    @Test func cancelActionDoesNotRunWhenTheFutureCompletesNormally() {
        let actions = Counter()
        let future = Future<Int>(callbackQueue: nil) { actions.increment() }
        future.complete(with: .failure(TestError(id: 1)))
        future.cancel()
        #expect(actions.value == 0)
    }

    @Test func setCancelActionReplacesThePreviousAction() {
        let log = Log<String>()
        let future = Future<Int>(callbackQueue: nil) { log.append("first") }
        future.setCancelAction { log.append("second") }
        future.cancel()
        #expect(log.values == ["second"])
    }

    @Test func setCancelActionOnACancelledFutureRunsItAtOnce() {
        let future = Future<Int>(callbackQueue: nil)
        future.cancel()
        let actions = Counter()
        future.setCancelAction { actions.increment() }
        #expect(actions.value == 1, "work started after its future was cancelled must still be stopped")
    }

    @Test func setCancelActionOnAFutureThatCompletedOtherwiseDoesNotRunIt() {
        let succeeded = Future<Int>(callbackQueue: nil)
        succeeded.complete(with: .success(1))
        let failed = Future<Int>(callbackQueue: nil)
        failed.complete(with: .failure(TestError(id: 1)))
        let actions = Counter()
        succeeded.setCancelAction { actions.increment() }
        failed.setCancelAction { actions.increment() }
        #expect(actions.value == 0)
    }
}
