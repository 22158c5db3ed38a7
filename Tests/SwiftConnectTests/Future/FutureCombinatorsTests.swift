import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias Log = FutureFixtures.Log
private typealias TestError = FutureFixtures.TestError
private typealias ReferenceError = FutureFixtures.ReferenceError
private typealias MarkedQueue = FutureFixtures.MarkedQueue

@Suite("Future combinators")
struct FutureCombinatorsTests {
    // MARK: map

    @Test func mapTransformsTheValue() {
        let promise = Promise<Int>()
        let mapped = promise.future.map { "value \($0)" }
        promise.succeed(2)
        #expect(mapped.result?.futureTestValue == "value 2")
    }

    @Test func mapThatThrowsFailsTheDerivedFuture() {
        let mapped = Future(value: 1).map { _ -> Int in throw TestError(id: 9) }
        #expect(mapped.result?.futureTestError as? TestError == TestError(id: 9))
    }

    @Test func mapPassesAFailureThroughUntouchedWithoutCallingTheTransform() {
        let error = ReferenceError()
        let calls = Counter()
        let mapped = Future<Int>(error: error).map { value -> Int in
            calls.increment()
            return value
        }
        #expect(mapped.result?.futureTestError as? ReferenceError === error)
        #expect(calls.value == 0)
    }

    // MARK: flatMap

    @Test func flatMapChainsTwoAsynchronousOperations() async {
        let first = Promise<Int>()
        let chained = first.future.flatMap { userID -> Future<String> in
            let second = Promise<String>()
            DispatchQueue.global().async { second.succeed("todos of user \(userID)") }
            return second.future
        }
        DispatchQueue.global().async { first.succeed(7) }
        let result = await Fixtures.completion(of: chained)
        #expect(result?.futureTestValue == "todos of user 7")
    }

    @Test func flatMapThatThrowsFailsTheDerivedFuture() {
        let chained = Future(value: 1).flatMap { _ -> Future<Int> in throw TestError(id: 4) }
        #expect(chained.result?.futureTestError as? TestError == TestError(id: 4))
    }

    @Test func flatMapFailsWithTheInnerFuturesError() {
        let inner = Promise<Int>()
        let chained = Future(value: 1).flatMap { _ in inner.future }
        #expect(chained.result == nil, "waits for the inner future")
        inner.fail(TestError(id: 5))
        #expect(chained.result?.futureTestError as? TestError == TestError(id: 5))
    }

    @Test func flatMapPassesAFailureThroughUntouchedWithoutCallingTheTransform() {
        let error = ReferenceError()
        let calls = Counter()
        let chained = Future<Int>(error: error).flatMap { value -> Future<Int> in
            calls.increment()
            return Future(value: value)
        }
        #expect(chained.result?.futureTestError as? ReferenceError === error)
        #expect(calls.value == 0)
    }

    // MARK: mapError

    @Test func mapErrorTransformsTheError() {
        let mapped = Future<Int>(error: TestError(id: 1)).mapError { error in
            TestError(id: ((error as? TestError)?.id ?? 0) + 10)
        }
        #expect(mapped.result?.futureTestError as? TestError == TestError(id: 11))
    }

    @Test func mapErrorPassesASuccessThroughWithoutCallingTheTransform() {
        let calls = Counter()
        let mapped = Future(value: 3).mapError { error -> any Error in
            calls.increment()
            return error
        }
        #expect(mapped.result?.futureTestValue == 3)
        #expect(calls.value == 0)
    }

    // MARK: recover

    @Test func recoverTurnsAFailureIntoAValue() {
        let log = Log<Int>()
        let recovered = Future<Int>(error: TestError(id: 2)).recover { error in
            log.append((error as? TestError)?.id ?? -1)
            return 0
        }
        #expect(recovered.result?.futureTestValue == 0)
        #expect(log.values == [2], "the transform receives the original error")
    }

    @Test func recoverThatThrowsKeepsTheFutureFailed() {
        let recovered = Future<Int>(error: TestError(id: 2)).recover { _ -> Int in throw TestError(id: 3) }
        #expect(recovered.result?.futureTestError as? TestError == TestError(id: 3))
    }

    @Test func recoverPassesASuccessThroughWithoutCallingTheTransform() {
        let calls = Counter()
        let recovered = Future(value: 8).recover { _ -> Int in
            calls.increment()
            return 0
        }
        #expect(recovered.result?.futureTestValue == 8)
        #expect(calls.value == 0)
    }

    // MARK: flatRecover

    @Test func flatRecoverContinuesWithAnotherAsynchronousOperation() async {
        let failing = Promise<Int>()
        let recovered = failing.future.flatRecover { _ -> Future<Int> in
            let fallback = Promise<Int>()
            DispatchQueue.global().async { fallback.succeed(99) }
            return fallback.future
        }
        DispatchQueue.global().async { failing.fail(TestError(id: 1)) }
        let result = await Fixtures.completion(of: recovered)
        #expect(result?.futureTestValue == 99)
    }

    @Test func flatRecoverFailsWithTheInnerFuturesError() {
        let recovered = Future<Int>(error: TestError(id: 1)).flatRecover { _ in Future(error: TestError(id: 2)) }
        #expect(recovered.result?.futureTestError as? TestError == TestError(id: 2))
    }

    @Test func flatRecoverThatThrowsKeepsTheFutureFailed() {
        let recovered = Future<Int>(error: TestError(id: 1)).flatRecover { _ -> Future<Int> in
            throw TestError(id: 3)
        }
        #expect(recovered.result?.futureTestError as? TestError == TestError(id: 3))
    }

    @Test func flatRecoverPassesASuccessThroughWithoutCallingTheTransform() {
        let calls = Counter()
        let recovered = Future(value: 4).flatRecover { _ -> Future<Int> in
            calls.increment()
            return Future(value: 0)
        }
        #expect(recovered.result?.futureTestValue == 4)
        #expect(calls.value == 0)
    }

    // MARK: discardingValue

    @Test func discardingValueKeepsSuccess() {
        let discarded = Future(value: 4).discardingValue()
        #expect(discarded.result?.futureTestValue != nil)
    }

    @Test func discardingValueKeepsTheErrorUntouched() {
        let error = ReferenceError()
        let discarded = Future<Int>(error: error).discardingValue()
        #expect(discarded.result?.futureTestError as? ReferenceError === error)
    }

    @Test func errorsPassUntouchedThroughAChainOfCombinators() {
        let error = ReferenceError()
        let received = Log<Bool>()
        let chained = Future<Int>(error: error)
            .map { $0 + 1 }
            .flatMap { Future(value: "\($0)") }
            .discardingValue()
            .mapError { original in
                received.append(original as? ReferenceError === error)
                return original
            }
        #expect(received.values == [true])
        #expect(chained.result?.futureTestError as? ReferenceError === error)
    }

    // MARK: Shared by every combinator: queue, context, cancellation

    @Test(arguments: Derivation.allCases)
    func derivedFutureRunsTransformAndObserversOnTheSourceQueue(_ derivation: Derivation) async {
        let target = MarkedQueue("combinator.target")
        let completer = MarkedQueue("combinator.completer")
        let source = Promise<Int>(callbackQueue: target.queue)
        let transformOnTarget = Log<Bool>()
        let derived = derivation.derive(from: source.future) { transformOnTarget.append(target.isCurrent) }
        #expect(derived.callbackQueue === target.queue)

        let observerOnTarget = Log<Bool>()
        let inTime = await Fixtures.signalled { done in
            derived.observe {
                observerOnTarget.append(target.isCurrent)
                done()
            }
            completer.queue.async {
                if derivation.transformsSuccess {
                    source.succeed(1)
                } else {
                    source.fail(TestError(id: 1))
                }
            }
        }
        #expect(inTime)
        #expect(observerOnTarget.values == [true])
        let expectedTransformCalls = derivation == .discardingValue ? 0 : 1
        #expect(transformOnTarget.values == Array(repeating: true, count: expectedTransformCalls))
    }

    @Test(arguments: Derivation.allCases)
    func derivedFutureWithoutQueueRunsOnTheCompletingThread(_ derivation: Derivation) {
        let completer = MarkedQueue("combinator.completer")
        let source = Promise<Int>()
        let onCompleter = Log<Bool>()
        let derived = derivation.derive(from: source.future) { onCompleter.append(completer.isCurrent) }
        #expect(derived.callbackQueue == nil)
        completer.queue.sync {
            if derivation.transformsSuccess {
                source.succeed(1)
            } else {
                source.fail(TestError(id: 1))
            }
        }
        let expectedTransformCalls = derivation == .discardingValue ? 0 : 1
        #expect(onCompleter.values == Array(repeating: true, count: expectedTransformCalls))
    }

    @Test(arguments: Derivation.allCases)
    func derivedFutureSharesTheSourceContext(_ derivation: Derivation) {
        let decoder = JSONDecoder()
        let source = Future<Int>(callbackQueue: nil, context: FutureContext(decoder: decoder))
        let derived = derivation.derive(from: source) {}
        #expect(derived.context.decoder === decoder)
    }

    @Test(arguments: Derivation.allCases)
    func cancellingADerivedFutureCancelsItsSource(_ derivation: Derivation) {
        let sourceActions = Counter()
        let source = Future<Int>(callbackQueue: nil) { sourceActions.increment() }
        let derived = derivation.derive(from: source) {}

        derived.cancel()

        #expect(derived.isCancelled())
        #expect(source.result?.isConnectCancellation == true)
        #expect(sourceActions.value == 1)
    }

    @Test func cancellingTheSourceFailsDerivedFuturesWithCancelled() {
        let source = Promise<Int>()
        let mapped = source.future.map { $0 + 1 }
        let chained = source.future.flatMap { Future(value: $0) }
        source.future.cancel()
        #expect(mapped.result?.isConnectCancellation == true)
        #expect(chained.result?.isConnectCancellation == true)
    }

    @Test func cancellingFlatMapAfterTheSourceSucceededCancelsTheInnerFuture() {
        let sourceActions = Counter()
        let innerActions = Counter()
        let source = Future<Int>(callbackQueue: nil) { sourceActions.increment() }
        let inner = Future<String>(callbackQueue: nil) { innerActions.increment() }
        let chained = source.flatMap { _ in inner }
        source.complete(with: .success(1))
        #expect(chained.result == nil)

        chained.cancel()

        #expect(chained.result?.isConnectCancellation == true)
        #expect(inner.result?.isConnectCancellation == true)
        #expect(innerActions.value == 1)
        #expect(sourceActions.value == 0, "the source had already completed")
    }

    @Test func cancellingFlatRecoverAfterTheSourceFailedCancelsTheInnerFuture() {
        let innerActions = Counter()
        let source = Future<Int>(callbackQueue: nil)
        let inner = Future<Int>(callbackQueue: nil) { innerActions.increment() }
        let recovered = source.flatRecover { _ in inner }
        source.complete(with: .failure(TestError(id: 1)))
        #expect(recovered.result == nil)

        recovered.cancel()

        #expect(recovered.result?.isConnectCancellation == true)
        #expect(inner.result?.isConnectCancellation == true)
        #expect(innerActions.value == 1)
    }

    @Test(arguments: Derivation.allCases)
    func cancellingADerivedFutureBeforeItsTransformRunsSkipsTheTransform(_ derivation: Derivation) async {
        let target = MarkedQueue("combinator.gated")
        let gate = DispatchSemaphore(value: 0)
        target.queue.async { _ = gate.wait(timeout: .now() + Fixtures.timeout) }
        let source = Future<Int>(callbackQueue: target.queue)
        let transformCalls = Counter()
        let derived = derivation.derive(from: source) { transformCalls.increment() }
        // The transform now waits behind the gate.
        source.complete(with: derivation.transformsSuccess ? .success(1) : .failure(TestError(id: 1)))

        derived.cancel()
        gate.signal()
        target.queue.sync {}

        #expect(derived.isCancelled())
        // A cancelled chain runs no more of its steps: a flatMap would start a request.
        #expect(transformCalls.value == 0)
    }

    @Test(arguments: Derivation.allCases)
    func cancellingADerivedFutureGivesItsTransformNoCancellationToRecoverFrom(_ derivation: Derivation) {
        let source = Future<Int>(callbackQueue: nil)
        let transformCalls = Counter()
        let derived = derivation.derive(from: source) { transformCalls.increment() }

        derived.cancel()

        #expect(derived.isCancelled())
        #expect(transformCalls.value == 0, "recover and flatRecover saw the chain's own cancellation")
    }

    @Test func cancellingTheSourceStillLetsRecoverTurnTheCancellationIntoAValue() {
        let source = Future<Int>(callbackQueue: nil)
        let recovered = source.recover { _ in 7 }
        let flatRecovered = source.flatRecover { _ in Future(value: 8) }

        source.cancel()

        #expect(recovered.result?.futureTestValue == 7)
        #expect(flatRecovered.result?.futureTestValue == 8)
    }

    // MARK: Long chains

    @Test func chainOf100000MapsWithoutQueueCompletesWithoutOverflowingTheStack() {
        let root = Promise<Int>()
        var tail = root.future
        for _ in 0..<100_000 { tail = tail.map { $0 + 1 } }
        root.succeed(0)
        #expect(tail.result?.futureTestValue == 100_000)
    }

    @Test func chainOf100000MapsOnAQueueCompletesWithoutOverflowingTheStack() async {
        let target = MarkedQueue("combinator.long")
        let root = Promise<Int>(callbackQueue: target.queue)
        var tail = root.future
        for _ in 0..<100_000 { tail = tail.map { $0 + 1 } }
        root.succeed(0)
        let result = await Fixtures.completion(of: tail)
        #expect(result?.futureTestValue == 100_000)
    }

    @Test func chainOfMapsRunsEachTransformAtTheSameStackDepth() throws {
        let depths = Log<Int>()
        let root = Promise<Int>()
        var tail = root.future
        for _ in 0..<500 {
            tail = tail.map { value in
                depths.append(Fixtures.stackAddress())
                return value + 1
            }
        }
        root.succeed(0)
        #expect(tail.result?.futureTestValue == 500)
        let first = try #require(depths.values.first)
        let last = try #require(depths.values.last)
        #expect(abs(first - last) < Fixtures.iterativeStackBound)
    }

    /// A `flatMap` whose transform returns an already-completed future must not run the rest of
    /// the chain from inside that link: a chain of 100 000 such links would overflow the stack.
    @Test func chainOfFlatMapsToCompletedFuturesRunsEachTransformAtTheSameStackDepth() throws {
        let depths = Log<Int>()
        let root = Promise<Int>()
        var tail = root.future
        for _ in 0..<500 {
            tail = tail.flatMap { value in
                depths.append(Fixtures.stackAddress())
                return Future(value: value + 1)
            }
        }
        root.succeed(0)
        #expect(tail.result?.futureTestValue == 500)
        let first = try #require(depths.values.first)
        let last = try #require(depths.values.last)
        #expect(
            abs(first - last) < Fixtures.iterativeStackBound,
            "the stack grew \(abs(first - last)) bytes over 500 links: flatMap recurses"
        )
    }

    @Test func chainOfFlatRecoversToCompletedFuturesRunsEachTransformAtTheSameStackDepth() throws {
        let depths = Log<Int>()
        let root = Promise<Int>()
        var tail = root.future
        for index in 0..<500 {
            tail = tail.flatRecover { _ in
                depths.append(Fixtures.stackAddress())
                return Future(error: TestError(id: index))
            }
        }
        root.fail(TestError(id: -1))
        #expect(tail.result?.futureTestError as? TestError == TestError(id: 499))
        let first = try #require(depths.values.first)
        let last = try #require(depths.values.last)
        #expect(
            abs(first - last) < Fixtures.iterativeStackBound,
            "the stack grew \(abs(first - last)) bytes over 500 links: flatRecover recurses"
        )
    }

    /// Cancelling the tail of a long chain must reach its head without one stack frame per link:
    /// cancelling the tail of 100 000 `map`s would overflow the stack.
    @Test func cancellingTheTailOfALongChainReachesTheHeadWithoutRecursing() throws {
        let depths = Log<Int>()
        let head = Future<Int>(callbackQueue: nil) { depths.append(Fixtures.stackAddress()) }
        var tail = head
        for _ in 0..<500 { tail = tail.map { $0 + 1 } }

        let base = Fixtures.stackAddress()
        tail.cancel()

        #expect(head.result?.isConnectCancellation == true)
        let atHead = try #require(depths.values.first)
        #expect(
            abs(base - atHead) < Fixtures.iterativeStackBound,
            "the stack grew \(abs(base - atHead)) bytes over 500 links: cancel() recurses"
        )
    }
}

extension FutureCombinatorsTests {
    /// One way of deriving a future, so the queue, context and cancellation contracts can be checked
    /// for every combinator.
    enum Derivation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case map, flatMap, mapError, recover, flatRecover, discardingValue

        var testDescription: String { rawValue }

        /// Whether the combinator's transform runs when its source succeeds (else: when it fails).
        var transformsSuccess: Bool {
            switch self {
            case .map, .flatMap, .discardingValue: return true
            case .mapError, .recover, .flatRecover: return false
            }
        }

        /// Derives a future from `source`; `transformRan` is called from inside the user transform.
        /// Inner futures (flatMap, flatRecover) complete later on another thread, without a queue.
        func derive(from source: Future<Int>, transformRan: @escaping @Sendable () -> Void) -> ErasedFuture {
            switch self {
            case .map:
                return ErasedFuture(
                    source.map { value -> Int in
                        transformRan()
                        return value + 1
                    })
            case .flatMap:
                return ErasedFuture(
                    source.flatMap { value -> Future<Int> in
                        transformRan()
                        return Self.later(value + 1)
                    })
            case .mapError:
                return ErasedFuture(
                    source.mapError { error -> any Error in
                        transformRan()
                        return error
                    })
            case .recover:
                return ErasedFuture(
                    source.recover { _ -> Int in
                        transformRan()
                        return 0
                    })
            case .flatRecover:
                return ErasedFuture(
                    source.flatRecover { _ -> Future<Int> in
                        transformRan()
                        return Self.later(0)
                    })
            case .discardingValue:
                return ErasedFuture(source.discardingValue())
            }
        }

        private static func later(_ value: Int) -> Future<Int> {
            let promise = Promise<Int>()
            DispatchQueue.global().async { promise.succeed(value) }
            return promise.future
        }
    }

    /// A future of any value type, reduced to what the shared contracts look at.
    struct ErasedFuture: Sendable {
        let callbackQueue: DispatchQueue?
        let context: FutureContext
        let cancel: @Sendable () -> Void
        let isCancelled: @Sendable () -> Bool
        let observe: @Sendable (@escaping @Sendable () -> Void) -> Void

        init<Value: Sendable>(_ future: Future<Value>) {
            callbackQueue = future.callbackQueue
            context = future.context
            cancel = { future.cancel() }
            isCancelled = { future.result?.isConnectCancellation == true }
            observe = { callback in future.observe { _ in callback() } }
        }
    }
}
