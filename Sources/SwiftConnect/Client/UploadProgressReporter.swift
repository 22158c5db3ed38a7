import Dispatch

/// Delivers one upload's progress to a callback on a queue and to an `AsyncStream`.
///
/// Values are clamped to the total and only ever increase, whatever order the reports arrive in
/// (a redirect or retry sends the body again from its first byte; those repeats are not shown).
/// Callback deliveries are coalesced: at most one is queued at a time, and it delivers the newest
/// value, so a fast upload cannot flood the callback queue. ``finish(succeeded:)`` reports the
/// total for a successful upload, then ends the stream.
final class UploadProgressReporter: Sendable {
    private struct State {
        var totalBytes: Int64 = 0
        /// The highest value accepted, and the highest handed to the callback.
        var latest: Int64 = -1
        var delivered: Int64 = -1
        var deliveryQueued = false
        var finished = false
        /// Set by ``cancel()``: a delivery queued before it is dropped.
        var cancelled = false
    }

    private let queue: DispatchQueue
    private let handler: (@Sendable (UploadProgress) -> Void)?
    private let continuation: AsyncStream<UploadProgress>.Continuation?
    private let state = LockedBox(State())

    /// - Parameters:
    ///   - queue: Where `handler` runs.
    ///   - handler: The progress callback, if any.
    ///   - continuation: The stream to feed, if any.
    init(
        queue: DispatchQueue, handler: (@Sendable (UploadProgress) -> Void)?,
        continuation: AsyncStream<UploadProgress>.Continuation?
    ) {
        self.queue = queue
        self.handler = handler
        self.continuation = continuation
    }

    /// Sets the body's length, once it is known.
    func start(totalBytes: Int64) {
        state.withLock { $0.totalBytes = totalBytes }
    }

    /// Reports `bytesSent`; ignored unless it is more than what was already reported.
    func report(bytesSent: Int64) {
        let queueDelivery: Bool = state.withLock { state in
            let value = min(max(bytesSent, 0), state.totalBytes)
            guard !state.finished, value > state.latest else { return false }
            state.latest = value
            // Yielded under the lock so that concurrent reports reach the stream in order.
            continuation?.yield(UploadProgress(bytesSent: value, totalBytes: state.totalBytes))
            guard handler != nil, !state.deliveryQueued else { return false }
            state.deliveryQueued = true
            return true
        }
        if queueDelivery {
            queue.async { self.deliver() }
        }
    }

    /// Ends the reports: a successful upload first reports its total. Later reports are ignored.
    func finish(succeeded: Bool) {
        if succeeded {
            report(bytesSent: state.withLock { $0.totalBytes })
        }
        state.withLock { $0.finished = true }
        continuation?.finish()
    }

    /// Ends the reports of a cancelled upload at once: nothing is reported after the caller's
    /// `cancel()`, not even a delivery already queued.
    func cancel() {
        state.withLock { state in
            state.finished = true
            state.cancelled = true
        }
        continuation?.finish()
    }

    /// Runs `body` on the progress queue after every delivery queued so far — so that whoever
    /// learns of the upload's end has already seen its last progress.
    func afterDeliveries(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    private func deliver() {
        let progress: UploadProgress? = state.withLock { state in
            state.deliveryQueued = false
            guard !state.cancelled, state.latest > state.delivered else { return nil }
            state.delivered = state.latest
            return UploadProgress(bytesSent: state.latest, totalBytes: state.totalBytes)
        }
        if let progress { handler?(progress) }
    }
}
