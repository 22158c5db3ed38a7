import Dispatch
import Foundation

/// The eventual result of an asynchronous operation: a value, or an error.
///
/// A `Future` is read-only; the ``Promise`` that made it completes it. `Connect` hands back
/// futures for every request; chain them with ``map(_:)``, ``flatMap(_:)``,
/// `decoded(toType:keyPath:decoder:)` and friends, then ``observe(_:)`` the result or
/// `await` ``value``.
///
/// - Important: The threading contract.
///   - A future completes **exactly once**: the first completion wins and later ones are ignored.
///   - Every observer runs exactly once, in the order it was registered, never while a lock is
///     held, on the future's callback queue. Futures made by ``Connect`` use
///     ``ConnectConfiguration/callbackQueue``; futures made by a ``Promise`` use the queue given to
///     ``Promise/init(callbackQueue:)``, or run observers on the thread that completes the promise
///     when none was given. Futures derived with `map`, `flatMap`, … share their source's queue.
///   - Observing a future that has already completed still runs the observer (on the same queue).
///   - Observers are released once they have run; long chains run in a loop, never recursively,
///     and so does recursion through futures that have completed already (a `flatMap` step that
///     returns another `flatMap` on `Future(value:)`): past 16 observers nested in one another, a
///     nested observer runs as soon as the one 16 deep returns, on the same thread.
///
/// In a module that also imports Combine, spell it `SwiftConnect.Future`.
public final class Future<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is `state` and the flags beside it (`isSettled`,
    // `isDelivering`, `hasObserver`), written only while `lock` is held and read under it — but
    // for observers reading a completed `state`, which is never written again (see `outcome`) —
    // or, for a future born completed (`lock == nil`), never written after `init`; and
    // `responseSource`, written before the future completes and read only after (see its comment).
    //
    // The hot path — creating, chaining, observing, completing and awaiting — is `@inlinable`, with
    // `@usableFromInline` internals, as swift-nio does for `EventLoopFuture`: a `Future<Todo>` is
    // then specialised in the caller's module instead of running as unspecialised generic code
    // that looks up `Future<Todo>.State`'s metadata on every call (about 24,000 instructions per
    // request end to end, 2 % of one; Benchmarks/HISTORY.md, "Fourth round"). Cold paths
    // (`cancel()`, the cancel chain, `WorkList`'s loop) stay out of line.

    @usableFromInline
    enum State {
        /// The observers to run on completion, and what `cancel()` must stop meanwhile.
        case pending(observers: WorkList, onCancel: CancelTarget?)
        case completed(Result<Value, any Error>)
    }

    /// Where observers run; `nil` means on the completing thread.
    @usableFromInline let callbackQueue: DispatchQueue?
    /// The JSON decoder `decoded(toType:)` uses when none is passed; set by `Connect`.
    @usableFromInline let context: FutureContext
    /// Guards `state`. Futures derived with `map`, `flatMap`, … share their source's lock, so a
    /// chain costs one lock, not one per link: no code path holds one future's lock while taking
    /// another's, so sharing cannot deadlock. `nil` for a future created completed.
    @usableFromInline let lock: StateLock?
    /// Whether `state` is `.completed`, kept beside it under `lock`: a copy that is not generic,
    /// which code running unspecialised (a promise's deinit) reads without looking up the metadata
    /// of `State`.
    @usableFromInline @exclusivity(unchecked) var isSettled: Bool
    /// Whether the thread that completed this future (with no callback queue) is still running the
    /// observers it had then: a delivery (``delivering(_:)``). Guarded by `lock`.
    @usableFromInline @exclusivity(unchecked) var isDelivering = false
    /// Whether an observer of the caller's (``observe(_:)``) was registered while the future was
    /// pending: only then is its completion a delivery. Guarded by `lock`.
    @usableFromInline @exclusivity(unchecked) var hasObserver = false
    // Unchecked exclusivity: `lock` already serialises every access.
    @usableFromInline @exclusivity(unchecked) var state: State
    /// For the body of a response, the response's future, so that a decoding failure can carry
    /// the response and decoding uses that request's decoder: set by ``Future/data`` before the
    /// future is handed out, and copied from the future a value passes through from unchanged —
    /// the source of a `mapError`, a `recover` or a `flatRecover` that succeeded, the future a
    /// `flatMap` or `flatRecover` continued with — in the locked step that completes this one. For a response
    /// that passed through so, the future of the request it came from. Read only after this
    /// future has completed.
    ///
    /// Copied rather than linked: a link from each future to the one its value came from made a
    /// list as long as the chain, which a deep recursive `flatMap` chain freed recursively, past
    /// the end of the stack.
    @usableFromInline var responseSource: Future<Response>?

    @inlinable
    init(
        callbackQueue: DispatchQueue?, context: FutureContext = .init(), cancelTarget: CancelTarget?,
        sharingLockOf source: StateLock? = nil
    ) {
        self.callbackQueue = callbackQueue
        self.context = context
        self.lock = source ?? StateLock()
        self.isSettled = false
        self.state = .pending(observers: .empty, onCancel: cancelTarget)
    }

    @inlinable
    convenience init(
        callbackQueue: DispatchQueue?, context: FutureContext = .init(), onCancel: (@Sendable () -> Void)? = nil
    ) {
        self.init(callbackQueue: callbackQueue, context: context, cancelTarget: onCancel.map(CancelTarget.action))
    }

    @inlinable
    init(result: Result<Value, any Error>, callbackQueue: DispatchQueue?, context: FutureContext = .init()) {
        self.callbackQueue = callbackQueue
        self.context = context
        self.lock = nil
        self.isSettled = true
        self.state = .completed(result)
    }

    /// Creates a future that has already succeeded with `value`.
    ///
    /// - Parameters:
    ///   - value: The value observers receive.
    ///   - callbackQueue: Where observers run; `nil` (the default) runs them on the caller's thread.
    @inlinable
    public convenience init(value: Value, callbackQueue: DispatchQueue? = nil) {
        self.init(result: .success(value), callbackQueue: callbackQueue)
    }

    /// Creates a future that has already failed with `error`.
    ///
    /// - Parameters:
    ///   - error: The error observers receive.
    ///   - callbackQueue: Where observers run; `nil` (the default) runs them on the caller's thread.
    @inlinable
    public convenience init(error: any Error, callbackQueue: DispatchQueue? = nil) {
        self.init(result: .failure(error), callbackQueue: callbackQueue)
    }

    /// Runs `body` on the state with the lock held. Never call out to user code inside `body`.
    @inlinable
    func withState<R>(_ body: (inout State) -> R) -> R {
        guard let lock else {
            // Born completed: nothing writes the state any more, so a copy is all `body` may touch.
            var completed = state
            return body(&completed)
        }
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// The result, if the future has completed; `nil` while it is pending.
    @inlinable
    public var result: Result<Value, any Error>? {
        withState { state in
            if case .completed(let result) = state { return result }
            return nil
        }
    }

    /// Whether the future has completed (succeeded, failed or been cancelled).
    @inlinable
    public var isCompleted: Bool { result != nil }

    /// Whether the future is still pending, read from ``isSettled``: a combinator asks its derived
    /// future before calling a transform, as one completed already was cancelled.
    @inlinable
    var isPending: Bool {
        guard let lock else { return false }
        lock.lock()
        defer { lock.unlock() }
        return !isSettled
    }

    /// The result, for observers: they run only once the future has completed.
    ///
    /// Read without the lock. A completed state is never written again, and the write that
    /// completed it happens before every observer runs: the completing thread runs the observer
    /// after unlocking, or hands it to its queue; an observer registered later runs on a thread that
    /// found the future completed under the lock. (Three lock round trips fewer per request.)
    @inlinable
    var outcome: Result<Value, any Error> {
        if case .completed(let result) = state { return result }
        return .failure(ConnectError.abandoned)  // unreachable: observers run after completion
    }

    // MARK: Observing

    /// Registers `callback` to receive the result once the future completes.
    ///
    /// The callback runs exactly once, on the future's callback queue, after the observers
    /// registered before it. If the future has already completed it still runs.
    ///
    /// - Parameter callback: Receives `.success(value)` or `.failure(error)`.
    /// - Returns: This future, so several observers can be chained.
    @discardableResult @inlinable
    public func observe(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Future<Value> {
        register(on: callbackQueue, isObserver: true) { [self] in
            callback(outcome)
            return .empty
        }
        return self
    }

    /// Registers `callback` to run with the value if the future succeeds.
    ///
    /// - Parameter callback: Receives the value; not called on failure.
    /// - Returns: This future, so several observers can be chained.
    @discardableResult @inlinable
    public func whenSuccess(_ callback: @escaping @Sendable (Value) -> Void) -> Future<Value> {
        observe { if case .success(let value) = $0 { callback(value) } }
    }

    /// Registers `callback` to run with the error if the future fails.
    ///
    /// - Parameter callback: Receives the error; not called on success.
    /// - Returns: This future, so several observers can be chained.
    @discardableResult @inlinable
    public func whenFailure(_ callback: @escaping @Sendable (any Error) -> Void) -> Future<Value> {
        observe { if case .failure(let error) = $0 { callback(error) } }
    }

    // MARK: Cancelling

    /// Cancels the operation behind this future.
    ///
    /// If the future is still pending it fails at once with ``ConnectError/cancelled`` (telling it
    /// apart from real failures) and the work producing it — an HTTP request, or the future this
    /// one was derived from — is cancelled, exactly once however many threads call `cancel()`.
    /// Cancelling a completed future does nothing.
    public func cancel() {
        CancelTarget.future(self).cancel()
    }

    /// Sets what `cancel()` must stop while the future is pending. If the future was cancelled
    /// before this call, the target is cancelled at once.
    @inlinable
    func setCancelTarget(_ target: CancelTarget) {
        let cancelledAlready: Bool = withState { state in
            switch state {
            case .pending(let observers, _):
                state = .pending(observers: observers, onCancel: target)
                return false
            case .completed(.failure(let error)):
                return (error as? ConnectError)?.isCancellation == true
            case .completed:
                return false
            }
        }
        if cancelledAlready { target.cancel() }
    }

    /// Sets a closure as what `cancel()` must stop.
    @inlinable
    func setCancelAction(_ action: @escaping @Sendable () -> Void) {
        setCancelTarget(.action(action))
    }

    // MARK: Completing (for Promise and the combinators)

    /// Completes the future unless it already is; returns whether this call won.
    ///
    /// Observers bound for a queue are handed to it in the same locked step that marks the future
    /// completed: an observer registered afterwards, from any thread, sees the completion only
    /// after that hand-over, so it is queued behind the earlier observers (registration order).
    /// The library's own steps, bound for no queue, then run on this thread.
    @discardableResult @inlinable
    func complete(with result: Result<Value, any Error>) -> Bool {
        let work: WorkList? = withState { state in
            guard case .pending(let observers, _) = state else { return nil }
            state = .completed(result)
            isSettled = true
            return delivering(observers.sendingQueuedItems())
        }
        guard let work else { return false }
        work.drain()
        return true
    }

    /// Marks the future completed and returns its observers as work for the caller's drain loop,
    /// without running them. Returns `nil` if it had already completed.
    ///
    /// As in ``complete(with:)``, observers bound for a queue are handed to it in the locked step
    /// that marks the future completed: handed over later, by the caller's drain loop, they could
    /// reach their queue after an observer that another thread registered in between and that
    /// went straight to the queue, the future being completed. Those bound for the queue this
    /// thread is draining a list in stay in the work instead, to run in this same block: one
    /// registered meanwhile is queued behind the block.
    @inlinable
    func takeWork(completingWith result: Result<Value, any Error>) -> WorkList? {
        withState { state in
            guard case .pending(let observers, _) = state else { return nil }
            state = .completed(result)
            isSettled = true
            return delivering(observers.sendingQueuedItemsNotForThisDrain())
        }
    }

    /// `work`, the observers this future hands to the completing thread as it completes, made a
    /// delivery when the future has no callback queue: until they have run (a last item calls
    /// ``finishDelivery()``), an observer registered on this future waits behind them, in order,
    /// instead of running at once on its own thread. Call it with the lock held.
    ///
    /// A future with a callback queue needs none of this: its observers go to the queue in the
    /// locked step that completes it, and a later one is queued behind them. Nor does one with
    /// only the library's own steps (a `map`'s, an `await`'s): those are no observers whose order
    /// anyone sees, and a chain of them is then spared a lock round trip per link.
    @inlinable
    func delivering(_ work: WorkList) -> WorkList {
        guard callbackQueue == nil, hasObserver, !work.isEmpty, lock != nil else { return work }
        isDelivering = true
        var work = work
        work.append(deliveryEnd)
        return work
    }

    /// The item that ends a delivery of this future, run after its observers.
    @usableFromInline
    var deliveryEnd: WorkList.Item {
        WorkList.Item(queue: nil) { [self] in finishDelivery() }
    }

    /// Fails the future with ``ConnectError/abandoned`` if it is still pending: what a ``Promise``
    /// released uncompleted does.
    ///
    /// A promise's deinit runs unspecialised, where completing the future would look up the
    /// metadata of `Result` and `State` and box the error, on every request. The common case — a
    /// promise released after completing its future — reads only ``isSettled`` under the lock.
    func abandon() {
        guard let lock else { return }
        lock.lock()
        let settled = isSettled
        lock.unlock()
        if !settled { complete(with: .failure(ConnectError.abandoned)) }
    }

    /// Adds an observer that runs on `queue` (`nil`: wherever the future completes), running it
    /// now if the future has completed — but for one bound for no queue while the completing
    /// thread still runs the observers registered before (``isDelivering``), which is kept and
    /// runs there, after them. The observer reads the result from ``outcome``.
    @inlinable
    func register(on queue: DispatchQueue?, isObserver: Bool = false, _ body: @escaping @Sendable () -> WorkList) {
        registerReturningWork(on: queue, isObserver: isObserver, body).drain()
    }

    /// Adds an observer; if the future has already completed, returns the observer's call as work
    /// for the caller's drain loop instead of running it (so chains of completed futures iterate),
    /// or, bound for no queue while this future's delivery is in progress, keeps it for after.
    @inlinable
    func registerReturningWork(
        on queue: DispatchQueue?, isObserver: Bool = false, _ body: @escaping @Sendable () -> WorkList
    ) -> WorkList {
        let item = WorkList.Item(queue: queue, run: body)
        let added: Bool = withState { state in
            guard case .pending(var observers, let onCancel) = state else {
                // Completed, but its thread may still be running the observers registered before.
                guard queue == nil, isDelivering, let lock else { return false }
                lock.keep(item, for: ObjectIdentifier(self))
                return true
            }
            state = .pending(observers: .empty, onCancel: nil)  // keep `observers` uniquely referenced
            observers.append(item)
            if isObserver { hasObserver = true }
            state = .pending(observers: observers, onCancel: onCancel)
            if queue != nil { lock?.noteObserverOnQueue() }
            return true
        }
        return added ? .empty : WorkList(item)
    }

    /// Makes a pending future that shares this one's queue, context and lock, and whose `cancel()`
    /// cancels this one.
    @inlinable
    func derived<T: Sendable>(_: T.Type = T.self) -> Future<T> {
        Future<T>(callbackQueue: callbackQueue, context: context, cancelTarget: .future(self), sharingLockOf: lock)
    }
}

extension Future {
    /// Ends this future's delivery (``delivering(_:)``): returns the observers kept meanwhile, if
    /// any, as a delivery of their own, so that one registered while they run waits behind them
    /// in turn.
    @usableFromInline
    func finishDelivery() -> WorkList {
        guard let lock else { return WorkList() }
        lock.lock()
        defer { lock.unlock() }
        let kept = lock.takeKept(for: ObjectIdentifier(self))
        guard !kept.isEmpty else {
            isDelivering = false
            return WorkList()
        }
        var work = WorkList(items: kept)
        work.append(deliveryEnd)
        return work
    }
}

extension Future: CancellableFuture {
    @usableFromInline
    func cancelStep() -> (WorkList, CancelTarget?)? {
        withState { state in
            guard case .pending(let observers, let onCancel) = state else { return nil }
            state = .completed(.failure(ConnectError.cancelled))
            isSettled = true
            // Every observer bound for a queue goes to it in this locked step, as in `takeWork`;
            // none is kept for the queue being drained, as the walk's own drain runs on no queue.
            return (delivering(observers.sendingQueuedItems()), onCancel)
        }
    }
}

/// A future, seen only as something that can be cancelled.
@usableFromInline
protocol CancellableFuture: AnyObject, Sendable {
    /// Completes the future as cancelled if it is pending, sending its observers bound for a queue
    /// there; returns its other observers' work and what it was waiting on, to be cancelled next.
    /// `nil` if it had completed.
    func cancelStep() -> (WorkList, CancelTarget?)?
}

/// What cancelling a pending future must stop.
@usableFromInline
enum CancelTarget: Sendable {
    /// The future it was derived from, or the future a `flatMap` is waiting on.
    case future(any CancellableFuture)
    /// Other work, such as the task running an HTTP request.
    case action(@Sendable () -> Void)

    /// Cancels the target and, in a loop rather than by recursion, whatever it waits on in turn:
    /// cancelling the tail of a long chain walks up to its head. Observers bound for a queue are
    /// sent to it as each future is cancelled; the others run after the walk.
    @usableFromInline
    func cancel() {
        var work = WorkList()
        var actions: [@Sendable () -> Void] = []
        var target: CancelTarget? = self
        while let current = target {
            target = nil
            switch current {
            case .action(let action):
                actions.append(action)
            case .future(let future):
                if let (produced, next) = future.cancelStep() {
                    work.append(produced)
                    target = next
                }
            }
        }
        work.drain()
        for action in actions { action() }
    }
}

/// What derived futures inherit from their source besides the queue.
@usableFromInline
struct FutureContext: Sendable {
    /// Decoder used by `decoded(toType:)` when the caller passes none; `nil` means `JSONDecoder()`.
    @inlinable var decoder: JSONDecoder? { box?.coder }
    /// Boxed: Apple's Foundation makes `JSONDecoder` `Sendable` only from macOS 13 and iOS 16.
    @usableFromInline let box: SendableCoder<JSONDecoder>?

    @usableFromInline
    init(decoder: JSONDecoder? = nil) {
        box = decoder.map(SendableCoder.init)
    }
}
