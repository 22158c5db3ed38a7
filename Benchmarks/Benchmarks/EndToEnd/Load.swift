import BenchmarkSupport
import Foundation

/// Sends `total` requests with `concurrency` of them in flight: `concurrency` workers, each sending
/// its share one after another.
enum Load {
    /// With async/await: one child task per worker.
    static func run(
        total: Int, concurrency: Int, _ send: @escaping @Sendable () async throws -> Void
    ) async -> Elapsed {
        let share = total / concurrency
        let failures = FailureCount()
        let elapsed = await Elapsed.measureAsync {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask {
                        for _ in 0..<share {
                            do { try await send() } catch { failures.record(error) }
                        }
                    }
                }
            }
        }
        failures.check()
        return elapsed
    }

    /// With callbacks: each worker sends its next request from the previous one's completion.
    static func run(
        total: Int, concurrency: Int,
        _ send: @escaping @Sendable (_ done: @escaping @Sendable (Result<Todo, any Error>) -> Void) -> Void
    ) async -> Elapsed {
        let share = total / concurrency
        let failures = FailureCount()
        let elapsed = await Elapsed.measureAsync {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                let workersLeft = Countdown(concurrency)
                @Sendable func next(_ left: Int) {
                    send { result in
                        if case .failure(let error) = result { failures.record(error) }
                        if left > 1 {
                            next(left - 1)
                        } else if workersLeft.decrement() {
                            finished.resume()
                        }
                    }
                }
                for _ in 0..<concurrency { next(share) }
            }
        }
        failures.check()
        return elapsed
    }
}

/// Counts down to zero from several threads.
final class Countdown: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count: Int

    init(_ count: Int) {
        self.count = count
    }

    /// Returns whether this call reached zero.
    func decrement() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        count -= 1
        return count == 0
    }
}

/// Failed requests make a throughput figure meaningless: the run stops and says why.
final class FailureCount: @unchecked Sendable {
    // @unchecked Sendable: `first` and `count` are only touched under `lock`.
    private let lock = NSLock()
    private var first: (any Error)?
    private var count = 0

    func record(_ error: any Error) {
        lock.lock()
        defer { lock.unlock() }
        if first == nil { first = error }
        count += 1
    }

    func check() {
        lock.lock()
        defer { lock.unlock() }
        if let first {
            fatalError("\(count) request(s) failed; the first: \(first)")
        }
    }
}
