import Dispatch

extension Future {
    /// Transforms the value when this future succeeds.
    ///
    /// The transform runs on the callback queue. A thrown error fails the new future; a failure of
    /// this future passes through untouched. If the new future was cancelled before the transform's
    /// turn came, the transform does not run.
    ///
    /// - Parameter transform: Turns the value into a new one; may throw.
    /// - Returns: A future of the transformed value.
    @inlinable
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        map(on: callbackQueue, transform)
    }

    /// ``map(_:)`` with the transform run on `queue` (`nil`: on the thread that completes this
    /// future).
    @inlinable
    func map<T: Sendable>(on queue: DispatchQueue?, _ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        // Written out rather than through `mapOutcome`: one closure per link, not two.
        let next = derived(T.self)
        register(on: queue) { [self] in
            let mapped: Result<T, any Error>
            switch outcome {
            case .success(let value):
                // Cancelled while the transform waited for its turn: its result would go nowhere.
                guard next.isPending else { return .empty }
                mapped = Result { try transform(value) }
            case .failure(let error): mapped = .failure(error)
            }
            return next.takeWork(completingWith: mapped) ?? .empty
        }
        return next
    }

    /// Starts another asynchronous operation with the value when this future succeeds — chaining
    /// one request after another.
    ///
    /// ```swift
    /// connect.request(UserConnector.me).decoded(toType: User.self)
    ///     .flatMap { user in connect.request(TodoConnector.list(userId: user.id)) }
    /// ```
    ///
    /// Cancelling the returned future cancels whichever of the two operations is running; once it
    /// is cancelled, `transform` is not called, so no next operation starts.
    ///
    /// - Parameter transform: Returns the next future; may throw to fail the chain.
    /// - Returns: A future completed by the future `transform` returns.
    @inlinable
    public func flatMap<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> Future<T>) -> Future<T> {
        let next = derived(T.self)
        register(on: callbackQueue) { [self] in
            switch outcome {
            case .failure(let error):
                return next.takeWork(completingWith: .failure(error)) ?? .empty
            case .success(let value):
                return next.continue { try transform(value) }
            }
        }
        return next
    }

    /// Transforms the error when this future fails; a success passes through untouched. If the new
    /// future was cancelled first, the transform does not run.
    ///
    /// - Parameter transform: Turns the error into another error.
    /// - Returns: A future with the transformed error.
    @inlinable
    public func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> Future<Value> {
        let next = derived(Value.self)
        register(on: callbackQueue) { [self] in
            let result = outcome
            guard case .failure(let error) = result else { return next.takeWork(passingThrough: result, of: self) }
            guard next.isPending else { return .empty }  // cancelled: the transform's error would go nowhere
            return next.takeWork(passingThrough: .failure(transform(error)), of: self)
        }
        return next
    }

    /// Turns a failure into a value; a success passes through untouched.
    ///
    /// Cancelling the returned future fails it with ``ConnectError/cancelled`` without calling
    /// `transform`: the cancellation that reaches this future's source is not recovered from.
    /// (Cancelling the source itself gives `transform` the cancellation to recover from.)
    ///
    /// - Parameter transform: Returns a replacement value for the error, or rethrows it (or
    ///   another error) to keep the future failed.
    /// - Returns: A future that fails only if `transform` throws.
    @inlinable
    public func recover(_ transform: @escaping @Sendable (any Error) throws -> Value) -> Future<Value> {
        let next = derived(Value.self)
        register(on: callbackQueue) { [self] in
            let result = outcome
            guard case .failure(let error) = result else { return next.takeWork(passingThrough: result, of: self) }
            guard next.isPending else { return .empty }  // cancelled: nothing to recover for
            return next.takeWork(completingWith: Result { try transform(error) }) ?? .empty
        }
        return next
    }

    /// Turns a failure into another asynchronous operation; a success passes through untouched.
    ///
    /// Cancelling the returned future cancels whichever operation is running, and `transform` is
    /// not called after it: the cancellation that reaches this future's source starts no fallback.
    /// (Cancelling the source itself gives `transform` the cancellation to recover from.)
    ///
    /// - Parameter transform: Returns the future to continue with, or throws to keep failing.
    /// - Returns: A future completed by the future `transform` returns.
    @inlinable
    public func flatRecover(_ transform: @escaping @Sendable (any Error) throws -> Future<Value>) -> Future<Value> {
        let next = derived(Value.self)
        register(on: callbackQueue) { [self] in
            let result = outcome
            guard case .failure(let error) = result else { return next.takeWork(passingThrough: result, of: self) }
            return next.continue { try transform(error) }
        }
        return next
    }

    /// Discards the value, keeping only success or failure.
    ///
    /// - Returns: A future of `Void`.
    @inlinable
    public func discardingValue() -> Future<Void> {
        map { _ in () }
    }

    /// A derived future completed with `transform` of this one's result, computed on `queue`
    /// (`nil`: on the thread that completes this future).
    @inlinable
    func mapOutcome<T: Sendable>(
        on queue: DispatchQueue?, _ transform: @escaping @Sendable (Result<Value, any Error>) -> Result<T, any Error>
    ) -> Future<T> {
        let next = derived(T.self)
        register(on: queue) { [self] in
            next.takeWork(completingWith: transform(outcome)) ?? .empty
        }
        return next
    }

    /// Transforms the value like ``map(_:)``, but where this future completes instead of on the
    /// callback queue — for the library's own steps (taking a body, decoding), which call no user
    /// code; the derived future still runs its observers on the callback queue.
    @inlinable
    func mapWhereCompleted<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        map(on: nil, transform)
    }

    /// Decoding's step: ``mapWhereCompleted(_:)``, except when this future succeeds on URLSession's
    /// own thread (a lone small response on Linux; see ``DirectExchange``) and the derived
    /// future's first observer runs on a queue other than the main queue. The transform then runs
    /// on that queue, in the block that runs the observers — unless the derived future was
    /// cancelled meanwhile.
    ///
    /// URLSession's thread still has the transfer's bookkeeping to do after the delegate's
    /// completion call, and the session's next request waits for it; handing the body over before
    /// decoding lets the two overlap. With one request in flight, requests sent one after another
    /// from observers gained 2–7 points of throughput against plain URLSession this way
    /// (Benchmarks/HISTORY.md, "Fourteenth round"). This never moves decoding to the main queue: with
    /// that as the callback queue, with no observer yet, or awaited (an observer bound for no
    /// queue), it runs where the body arrives.
    @inlinable
    func mapBeforeObservers<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        let next = derived(T.self)
        register(on: nil) { [self] in
            let value: Value
            switch outcome {
            case .success(let success): value = success
            case .failure(let error): return next.takeWork(completingWith: .failure(error)) ?? .empty
            }
            // A local function: called here, it allocates no closure context; only the hand-over does.
            @Sendable func transformed() -> WorkList {
                next.takeWork(completingWith: Result { try transform(value) }) ?? .empty
            }
            if let queue = next.queueToTransformOn() {
                // Cancelled while the value waited for the queue: its decoding would be thrown away.
                @Sendable func transformedUnlessCancelled() -> WorkList {
                    next.isPending ? transformed() : .empty
                }
                return WorkList(WorkList.Item(queue: queue, run: transformedUnlessCancelled))
            }
            return transformed()
        }
        return next
    }

    /// Where ``mapBeforeObservers(_:)``, completing this future, runs its transform: the queue of
    /// this future's first observer when the caller is on URLSession's own thread and that queue
    /// is not the main queue; otherwise `nil`, for here.
    @inlinable
    func queueToTransformOn() -> DispatchQueue? {
        guard SessionQueue.isCurrent else { return nil }
        return withState { state in
            guard case .pending(let observers, _) = state else { return nil }
            return observers.firstQueueOtherThanMain
        }
    }

    /// Completes this (pending, derived) future with the future `makeInner` returns, or with its
    /// error; `cancel()` then reaches the inner future. Returns work for the caller's drain loop.
    @inlinable
    func `continue`(with makeInner: () throws -> Future<Value>) -> WorkList {
        // Cancelled while the step waited for its turn: start nothing (it would be cancelled at
        // once, but a request could reach the server first).
        guard isPending else { return .empty }
        let inner: Future<Value>
        do {
            inner = try makeInner()
        } catch {
            return takeWork(completingWith: .failure(error)) ?? .empty
        }
        if let settled = inner.result {
            // Already completed (`Future(value:)`, say): nothing to wait for, nothing to cancel.
            return takeWork(passingThrough: settled, of: inner)
        }
        setCancelTarget(.future(inner))
        return inner.registerReturningWork(on: nil) { [self] in
            takeWork(passingThrough: inner.outcome, of: inner)
        }
    }

    /// Completes this (pending, derived) future with `result`, `source`'s value passed through
    /// unchanged on success: a body stays the body of its response, and a response stays that of
    /// its request (``responseSource``, copied before completing; the decoder of that request
    /// decodes it). Returns work for the caller's drain loop.
    ///
    /// ``responseSource`` is written in the locked step that completes this future, and only if it
    /// does: a future cancelled meanwhile has observers that may be reading it on another thread.
    @inlinable
    func takeWork(passingThrough result: Result<Value, any Error>, of source: Future<Value>) -> WorkList {
        // `source` has completed: its `responseSource` is written no more.
        let origin: Future<Response>?
        if Value.self == Response.self, source.responseSource == nil {
            // A response's own future: the request's (a copy, never a list: that one has none).
            origin = source as? Future<Response>
        } else {
            origin = source.responseSource
        }
        let work: WorkList? = withState { state in
            guard case .pending(let observers, _) = state else { return nil }
            responseSource = origin
            state = .completed(result)
            isSettled = true
            return delivering(observers.sendingQueuedItemsNotForThisDrain())
        }
        return work ?? .empty
    }
}
