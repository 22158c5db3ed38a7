import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias TestError = FutureFixtures.TestError

/// Many threads racing to complete, cancel and observe the same futures. Run under
/// `swift test --sanitize=thread` too.
///
/// `concurrentPerform` hands out iterations one at a time to as many threads as there are cores,
/// so consecutive iterations run at the same moment. Each future gets a run of consecutive
/// iterations — one per racer — which keeps every core racing on the same future.
@Suite("Future: stress", .serialized)
struct FutureStressTests {
    /// What one future saw during a race; compared after every thread has finished.
    final class Record: @unchecked Sendable {
        // @unchecked Sendable: every property is only touched while `lock` is held.
        private let lock = NSLock()
        private var wins = 0
        private var seen: [Int] = []
        private var actions = 0

        func won() { lock.withLock { wins += 1 } }
        func saw(_ tag: Int) { lock.withLock { seen.append(tag) } }
        func cancelActionRan() { lock.withLock { actions += 1 } }

        var winCount: Int { lock.withLock { wins } }
        var seenTags: [Int] { lock.withLock { seen } }
        var actionCount: Int { lock.withLock { actions } }
    }

    /// Runs `body(index, racer)` for every index below `count` and every racer below `racers`, on
    /// as many threads as there are cores (`concurrentPerform`, one call at a time per thread).
    /// The race runs on a global queue and is awaited without holding one of the concurrency
    /// pool's threads: on two cores a race holding one for seconds (under ThreadSanitizer) stalls
    /// every other test meanwhile.
    static func race(
        _ count: Int, racers: Int, _ body: @escaping @Sendable (_ index: Int, _ racer: Int) -> Void
    ) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: count * racers) { iteration in
                    body(iteration / racers, iteration % racers)
                }
                continuation.resume()
            }
        }
    }

    /// A comparable summary of a result: the value, 1000 + the error's id, or -1 for cancelled.
    static func tag(_ result: Result<Int, any Error>) -> Int {
        switch result {
        case .success(let value): return value
        case .failure(let error as TestError): return 1_000 + error.id
        case .failure(let error as ConnectError) where error.isCancellation: return -1
        case .failure: return -2
        }
    }

    @Test(timeLimit(minutes: 1))
    func racingCompletersAndObserversAgreeOnExactlyOneResultPerFuture() async {
        let futureCount = 1_000
        let completers = 8
        let observers = 8
        let racers = completers + observers
        let promises = (0..<futureCount).map { _ in Promise<Int>() }
        let records = (0..<futureCount).map { _ in Record() }
        for index in 0..<futureCount {
            promises[index].future.observe { records[index].saw(Self.tag($0)) }
        }

        await Self.race(futureCount, racers: racers) { index, racer in
            let promise = promises[index]
            let record = records[index]
            guard racer < completers else {
                promise.future.observe { record.saw(Self.tag($0)) }
                return
            }
            switch (racer + index) % 3 {
            case 0: if promise.succeed(racer) { record.won() }
            case 1: if promise.fail(TestError(id: racer)) { record.won() }
            default: promise.future.cancel()
            }
        }

        // Without a callback queue every observer ran inside succeed/fail/cancel/observe, so all
        // have run by now.
        var wrong: [String] = []
        for index in 0..<futureCount {
            guard let result = promises[index].future.result else {
                wrong.append("future \(index) never completed")
                continue
            }
            let tag = Self.tag(result)
            let expectedWins = tag == -1 ? 0 : 1
            if records[index].winCount != expectedWins {
                wrong.append("future \(index): \(records[index].winCount) completions returned true")
            }
            let expectedSeen = Array(repeating: tag, count: 1 + observers)
            if records[index].seenTags != expectedSeen {
                wrong.append("future \(index): result \(tag), observers saw \(records[index].seenTags)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) futures broke the contract, first: \(wrong.prefix(3))")
    }

    @Test(timeLimit(minutes: 1))
    func racingObserversOnACallbackQueueEachRunOnceWithTheWinningResult() async {
        let futureCount = 1_000
        let racers = 8
        let target = FutureFixtures.MarkedQueue("stress.target")
        let promises = (0..<futureCount).map { _ in Promise<Int>(callbackQueue: target.queue) }
        let records = (0..<futureCount).map { _ in Record() }
        let offQueue = Counter()

        await Self.race(futureCount, racers: racers) { index, racer in
            let promise = promises[index]
            let record = records[index]
            if racer % 2 == 0 {
                promise.future.map { $0 * 2 }.observe { result in
                    if !target.isCurrent { offQueue.increment() }
                    record.saw(Self.tag(result))
                }
            } else if promise.succeed(racer) {
                record.won()
            }
        }
        target.queue.sync {}  // observers were queued before this; now they have all run

        var wrong: [String] = []
        for index in 0..<futureCount {
            let value = promises[index].future.result?.futureTestValue ?? -100
            if records[index].winCount != 1 {
                wrong.append("future \(index): \(records[index].winCount) completions returned true")
            }
            if records[index].seenTags != Array(repeating: value * 2, count: racers / 2) {
                wrong.append("future \(index): value \(value), observers saw \(records[index].seenTags)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) futures broke the contract, first: \(wrong.prefix(3))")
        #expect(offQueue.value == 0)
    }

    /// Futures with a cancel action, and what each action saw.
    static func cancellableFutures(_ count: Int) -> (futures: [Future<Int>], records: [Record]) {
        let records = (0..<count).map { _ in Record() }
        let futures = (0..<count).map { index in
            Future<Int>(callbackQueue: nil) { records[index].cancelActionRan() }
        }
        return (futures, records)
    }

    // The window these two races need is a few instructions wide, so each runs rounds of many
    // futures and stops at the first round that breaks the contract, or after at most
    // `cancelRounds` rounds or `cancelBudget` seconds (debug and TSan builds differ tenfold).
    static let cancelRounds = 10
    static let futuresPerCancelRound = 20_000
    static let cancelBudget: UInt64 = 1_000_000_000

    /// Whether some of `records` (one per future) are not `0..<perFuture`, the order their
    /// observers were registered in; records an issue naming the round if so.
    static func recordedOutOfOrder(_ records: [Recorder<Int>], perFuture: Int, round: Int) -> Bool {
        let wrong = records.indices.filter { records[$0].values != Array(0..<perFuture) }
        guard !wrong.isEmpty else { return false }
        Issue.record(
            """
            round \(round): \(wrong.count) of \(records.count) futures ran their observers out of order, \
            e.g. \(wrong.first.map { records[$0].values } ?? [])
            """
        )
        return true
    }

    /// Whether the time budget that started at `start` (uptime nanoseconds) is spent.
    static func budgetSpent(since start: UInt64) -> Bool {
        DispatchTime.now().uptimeNanoseconds - start >= cancelBudget
    }

    /// A recursive polling chain: each step a promise completed on a queue, then `flatMap` to the
    /// next step. A link from every outer future to its inner one made a list as long as the
    /// chain, which freeing it walked recursively, past the end of the stack (50,000 steps).
    @Test(timeLimit(minutes: 1))
    func aDeepRecursiveFlatMapChainIsFreedWithoutRecursion() async throws {
        let queue = DispatchQueue(label: "stress.deep")
        @Sendable func step(_ left: Int) -> SwiftConnect.Future<Int> {
            let promise = Promise<Int>()
            queue.async { promise.succeed(left) }
            return promise.future.flatMap { value in value == 0 ? SwiftConnect.Future(value: 0) : step(value - 1) }
        }
        weak var head: SwiftConnect.Future<Int>?
        do {
            let future = step(100_000)
            head = future
            #expect(try await future.value == 0)
        }
        // The thread that completed the chain may still hold it for a moment after the await
        // resumed: freed soon, not necessarily at once.
        for _ in 0..<200 where head != nil {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(head == nil)
    }

    /// Runs `body` on a thread of its own with a stack of `stackSize` bytes (512 KiB: a secondary
    /// thread's on Apple platforms), and returns what it returns.
    static func onSmallStack<T: Sendable>(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// Recursion through futures that have completed already — `flatMap` to a step that returns a
    /// `flatMap` on `Future(value:)`, a cached page for each of 20,000 pages — ran each step in a
    /// drain nested in the one before, a few kilobytes of stack a step: it crashed the process
    /// past about 2,000 steps on an 8 MiB stack. It now runs in a loop, 16 drains deep at most.
    @Test(timeLimit(minutes: 1))
    func recursiveFlatMapOverCompletedFuturesRunsInALoop() async {
        @Sendable func step(_ left: Int) -> SwiftConnect.Future<Int> {
            SwiftConnect.Future(value: left).flatMap { value in
                value == 0 ? SwiftConnect.Future(value: 0) : step(value - 1)
            }
        }
        let result = await Self.onSmallStack { try? step(20_000).result?.get() }
        #expect(result == 0)
    }

    /// The same with promises completed from their own observers, which ran each observer in a
    /// drain nested in the one before.
    @Test(timeLimit(minutes: 1))
    func promisesCompletedFromTheirObserversRecursivelyRunInALoop() async {
        let steps = Counter()
        @Sendable func countDown(from left: Int, done: Promise<Int>) {
            let promise = Promise<Int>()
            promise.future.observe { result in
                steps.increment()
                guard case .success(let value) = result, value > 0 else {
                    done.succeed(steps.value)
                    return
                }
                countDown(from: value - 1, done: done)
            }
            promise.succeed(left)
        }
        let counted = await Self.onSmallStack { () -> Int? in
            let done = Promise<Int>()
            countDown(from: 20_000, done: done)
            return try? done.future.result?.get()
        }
        #expect(counted == 20_001)
    }

    /// Below that depth nothing changes: an observer registered on a completed future from inside
    /// another observer has run when `observe` returns, and a promise completed there has run its
    /// observers when `succeed` returns.
    @Test func anObserverNestedInAnotherRunsAtOnce() {
        let outer = Promise<Int>()
        let seen = Recorder<String>()
        outer.future.observe { _ in
            SwiftConnect.Future(value: 1).observe { _ in seen.append("registered") }
            seen.append("after observe")
            let inner = Promise<Int>()
            inner.future.observe { _ in seen.append("completed") }
            inner.succeed(2)
            seen.append("after succeed")
        }
        outer.succeed(0)
        #expect(seen.values == ["registered", "after observe", "completed", "after succeed"])
    }

    @Test(timeLimit(minutes: 1))
    func concurrentCancelsRunTheCancelActionExactlyOnce() async {
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<Self.cancelRounds {
            let (futures, records) = Self.cancellableFutures(Self.futuresPerCancelRound)

            await Self.race(futures.count, racers: 2) { index, _ in
                futures[index].cancel()
            }

            let wrong = futures.indices.filter { records[$0].actionCount != 1 }
            #expect(futures.allSatisfy { $0.result?.isConnectCancellation == true })
            guard wrong.isEmpty else {
                Issue.record(
                    """
                    round \(round): \(wrong.count) of \(futures.count) futures ran their cancel action \
                    \(wrong.first.map { records[$0].actionCount } ?? 0) times, not once
                    """
                )
                return
            }
            if Self.budgetSpent(since: start) { return }
        }
    }

    @Test(timeLimit(minutes: 1))
    func cancelActionRunsOnlyWhenCancelWinsTheRace() async {
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<Self.cancelRounds {
            let (futures, records) = Self.cancellableFutures(Self.futuresPerCancelRound)

            await Self.race(futures.count, racers: 2) { index, racer in
                // Alternate which of the two goes first, so each wins about half the races.
                if (index + racer) % 2 == 0 {
                    futures[index].cancel()
                } else {
                    futures[index].complete(with: .success(1))
                }
            }

            let wrong = futures.indices.filter { index in
                let cancelled = futures[index].result?.isConnectCancellation == true
                return records[index].actionCount != (cancelled ? 1 : 0)
            }
            guard wrong.isEmpty else {
                Issue.record(
                    """
                    round \(round): \(wrong.count) of \(futures.count) futures ran their cancel action \
                    although the future succeeded (cancel() lost the race)
                    """
                )
                return
            }
            if Self.budgetSpent(since: start) { return }
        }
    }

    /// Observers of a derived future (here `decoded(toType:)`'s) on a serial queue keep their registration
    /// order while another thread completes the chain: one registered just after the derived
    /// future completes must not reach the queue before the earlier ones, which the completing
    /// thread is still handing over.
    @Test(timeLimit(minutes: 1))
    func observersRegisteredWhileADerivedFutureCompletesKeepTheirOrder() async {
        let queue = DispatchQueue(label: "stress.observers")
        let perFuture = 8
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<Self.cancelRounds {
            let count = 5_000
            let promises = (0..<count).map { _ in Promise<Data>(callbackQueue: queue) }
            // `decoded(toType:)` is one of the library's own steps, which run on the completing
            // thread, not on the queue: its future completes there, off the observers' queue.
            let derived = promises.map { $0.future.decoded(toType: Int.self) }
            let records = (0..<count).map { _ in Recorder<Int>() }
            await Self.race(count, racers: 2) { index, racer in
                if racer == 0 {
                    promises[index].succeed(Data("\(index)".utf8))
                } else {
                    for order in 0..<perFuture {
                        derived[index].observe { _ in records[index].append(order) }
                    }
                }
            }
            queue.sync {}  // every observer has been handed to the queue; let them all run
            if Self.recordedOutOfOrder(records, perFuture: perFuture, round: round) { return }
            if Self.budgetSpent(since: start) { return }
        }
    }

    /// The same with no callback queue: the completing thread runs the observers registered
    /// before completion while another thread registers more, which must wait behind them.
    @Test(timeLimit(minutes: 1))
    func observersRegisteredWhileAFutureWithNoQueueCompletesKeepTheirOrder() async {
        let perFuture = 8
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<Self.cancelRounds {
            let count = 5_000
            let promises = (0..<count).map { _ in Promise<Int>() }
            let records = (0..<count).map { _ in Recorder<Int>() }
            for index in 0..<count {
                for order in 0..<perFuture / 2 {
                    promises[index].future.observe { _ in records[index].append(order) }
                }
            }
            await Self.race(count, racers: 2) { index, racer in
                if racer == 0 {
                    promises[index].succeed(index)
                } else {
                    for order in perFuture / 2..<perFuture {
                        promises[index].future.observe { _ in records[index].append(order) }
                    }
                }
            }
            if Self.recordedOutOfOrder(records, perFuture: perFuture, round: round) { return }
            if Self.budgetSpent(since: start) { return }
        }
    }

    /// The same for a future cancelled from a block on its own serial queue (an observer of
    /// another future there cancels it) while another thread registers observers on it.
    @Test(timeLimit(minutes: 1))
    func observersRegisteredWhileAFutureIsCancelledFromItsQueueKeepTheirOrder() async {
        let perFuture = 8
        let start = DispatchTime.now().uptimeNanoseconds
        for round in 0..<Self.cancelRounds {
            let count = 3_000
            let queues = (0..<count).map { DispatchQueue(label: "stress.cancel-order.\($0)") }
            let promises = (0..<count).map { Promise<Int>(callbackQueue: queues[$0]) }
            let triggers = (0..<count).map { Promise<Int>(callbackQueue: queues[$0]) }
            let records = (0..<count).map { _ in Recorder<Int>() }
            for index in 0..<count {
                let future = promises[index].future
                triggers[index].future.observe { _ in future.cancel() }
            }
            await Self.race(count, racers: 2) { index, racer in
                if racer == 0 {
                    triggers[index].succeed(0)
                } else {
                    for order in 0..<perFuture {
                        promises[index].future.observe { _ in records[index].append(order) }
                    }
                }
            }
            // Twice: the trigger's block sends the cancelled future's observers to the queue.
            for queue in queues { queue.sync {} }
            for queue in queues { queue.sync {} }
            if Self.recordedOutOfOrder(records, perFuture: perFuture, round: round) { return }
            if Self.budgetSpent(since: start) { return }
        }
    }

    /// Cancelling a flatMap whose inner future is pending sends the flatMap's observers to their
    /// queue and cancels the inner future, whose step then tries to pass its result through. That
    /// step wrote the flatMap's `responseSource` whether or not it completed it, while a mapError
    /// on the queue read it: a data race ThreadSanitizer reports. Run under `--sanitize=thread`.
    @Test(timeLimit(minutes: 1))
    func cancellingAFlatMapWhileItsInnerFutureIsPendingDoesNotRaceItsObservers() async {
        let count = 2_000
        let queue = DispatchQueue(label: "stress.flatmap-cancel")
        let sources = (0..<count).map { _ in Promise<Int>(callbackQueue: queue) }
        let inners = (0..<count).map { _ in Promise<Int>() }
        let chains = (0..<count).map { index in sources[index].future.flatMap { _ in inners[index].future } }
        let tails = chains.map { chain in chain.mapError { $0 } }
        for source in sources { source.succeed(1) }
        queue.sync {}  // every flatMap now waits on its inner future
        for chain in chains { chain.cancel() }
        queue.sync {}
        #expect(tails.allSatisfy { $0.result?.isConnectCancellation == true })
        #expect(inners.allSatisfy { $0.future.result?.isConnectCancellation == true })
    }
}
