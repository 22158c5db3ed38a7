import Dispatch

/// The writing side of a ``Future``: completes it exactly once.
///
/// ```swift
/// let promise = Promise<Int>()
/// promise.future.observe { print($0) }
/// promise.succeed(42)
/// ```
///
/// - Important: The first of ``succeed(_:)``, ``fail(_:)`` and ``complete(with:)`` wins; later calls
///   return `false` and change nothing. A promise released while still pending fails its future
///   with ``ConnectError/abandoned``, so nobody waits forever on work that was dropped.
public final class Promise<Value: Sendable>: Sendable {
    /// The future this promise completes.
    public let future: Future<Value>

    /// Creates a pending promise.
    ///
    /// - Parameter callbackQueue: Where the future's observers run. `nil` (the default) runs them
    ///   on the thread that completes the promise, or, once completed, on the thread that observes
    ///   — unless the completing thread is still running earlier observers: then there, after
    ///   them. Observers keep their registration order with `nil` and on a serial queue; on a
    ///   concurrent queue, one registered after completion may overlap earlier ones still running.
    @inlinable
    public init(callbackQueue: DispatchQueue? = nil) {
        future = Future(callbackQueue: callbackQueue)
    }

    @inlinable
    init(future: Future<Value>) {
        self.future = future
    }

    deinit {
        future.abandon()
    }

    /// Completes the future with `value`.
    /// - Returns: `true` if this call completed the future, `false` if it had already completed.
    @discardableResult @inlinable
    public func succeed(_ value: Value) -> Bool {
        future.complete(with: .success(value))
    }

    /// Completes the future with `error`.
    /// - Returns: `true` if this call completed the future, `false` if it had already completed.
    @discardableResult @inlinable
    public func fail(_ error: any Error) -> Bool {
        future.complete(with: .failure(error))
    }

    /// Completes the future with `result`.
    /// - Returns: `true` if this call completed the future, `false` if it had already completed.
    @discardableResult @inlinable
    public func complete(with result: Result<Value, any Error>) -> Bool {
        future.complete(with: result)
    }
}
