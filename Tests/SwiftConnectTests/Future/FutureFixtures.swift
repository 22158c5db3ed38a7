import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

/// Helpers shared by the Future, Promise, WorkList and LockedBox suites. Namespaced so other
/// suites in the test target can keep short names of their own.
enum FutureFixtures {
    /// An error with an identity, so a test can tell which error came through.
    struct TestError: Error, Sendable, Equatable {
        let id: Int
    }

    /// An error compared by identity (`===`), to prove an error passed through untouched.
    final class ReferenceError: Error, Sendable {}

    /// An object whose lifetime a test follows through a `weak` reference.
    final class Tracked: Sendable {}

    /// How long any bounded wait lasts before it gives up and fails the test instead of hanging.
    static let timeout: Double = 30

    // MARK: Thread-safe recording

    typealias Log = Recorder
    typealias Counter = SwiftConnectTests.Counter

    /// A flag that can be claimed once, from any thread.
    final class Once: @unchecked Sendable {
        // @unchecked Sendable: `claimed` is only touched while `lock` is held.
        private let lock = NSLock()
        private var claimed = false

        /// Returns `true` for the first caller only.
        func claim() -> Bool {
            lock.withLock {
                defer { claimed = true }
                return !claimed
            }
        }
    }

    // MARK: Queues

    /// A serial queue that knows whether the current code runs on it.
    final class MarkedQueue: @unchecked Sendable {
        // @unchecked Sendable: both properties are immutable; the key is only used as an identity.
        let queue: DispatchQueue
        private let key = DispatchSpecificKey<Bool>()

        init(_ label: String) {
            queue = DispatchQueue(label: label)
            queue.setSpecific(key: key, value: true)
        }

        /// Whether the caller is running on this queue.
        var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    }

    // MARK: Bounded waits

    /// Calls `start` with a `done` closure and waits until `done` is called or the timeout passes.
    /// - Returns: `true` if `done` was called in time.
    static func signalled(
        within seconds: Double = timeout,
        _ start: (@escaping @Sendable () -> Void) -> Void
    ) async -> Bool {
        let once = Once()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let finish: @Sendable (Bool) -> Void = { inTime in
                if once.claim() { continuation.resume(returning: inTime) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { finish(false) }
            start { finish(true) }
        }
    }

    /// Waits for `future` to complete, observing it like a user would.
    /// - Returns: Its result, or `nil` if it did not complete in time.
    static func completion<Value: Sendable>(
        of future: Future<Value>,
        within seconds: Double = timeout
    ) async -> Result<Value, any Error>? {
        let log = Log<Result<Value, any Error>>()
        let inTime = await signalled(within: seconds) { done in
            future.observe { result in
                log.append(result)
                done()
            }
        }
        return inTime ? log.values.first : nil
    }

    /// Runs `body` on a thread of its own and waits for it to return.
    /// - Returns: `false` if it had not returned in time (a deadlock), without hanging the test.
    static func finishes(within seconds: Double = timeout, _ body: @escaping @Sendable () -> Void) async -> Bool {
        await signalled(within: seconds) { done in
            Thread {
                body()
                done()
            }.start()
        }
    }

    /// Runs `operation` in a task of its own and waits for its result.
    /// - Returns: The result, or `nil` if it did not arrive in time (the task is left behind).
    static func outcome<T: Sendable>(
        within seconds: Double = timeout,
        of operation: @escaping @Sendable () async -> T
    ) async -> T? {
        let log = Log<T>()
        let inTime = await signalled(within: seconds) { done in
            Task {
                log.append(await operation())
                done()
            }
        }
        return inTime ? log.values.first : nil
    }

    /// The address of a local of the caller's frame: comparing two tells how deep the stack grew.
    @inline(never)
    static func stackAddress() -> Int {
        var marker: UInt8 = 0
        return withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
    }

    /// A bound on stack growth that an iterative implementation stays far below and a recursive
    /// one (hundreds of bytes per link, thousands of links) far exceeds.
    static let iterativeStackBound = 64 * 1024
}

extension Result {
    /// The value, if this is a success.
    var futureTestValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The error, if this is a failure.
    var futureTestError: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// Whether this is a failure with ``ConnectError/cancelled``.
    var isConnectCancellation: Bool {
        (futureTestError as? ConnectError)?.isCancellation == true
    }

    /// Whether this is a failure with ``ConnectError/abandoned``.
    var isConnectAbandoned: Bool {
        if case .abandoned? = futureTestError as? ConnectError { return true }
        return false
    }
}
