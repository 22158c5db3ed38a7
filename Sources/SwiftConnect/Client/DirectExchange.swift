import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request sent without a Swift task: the common case, where nothing in its pipeline can
/// suspend — no middleware, no upload, and the library's own ``URLSessionTransport``.
///
/// The pipeline's task costs a thread hop per request: URLSession resumes the task, which
/// completes the future, which resumes whoever awaits it. Here URLSession's callback builds the
/// response, follows the redirect policy, validates and completes the promise itself, so an
/// awaiting task is resumed straight from URLSession's thread. The steps are ``Pipeline``'s own
/// (``Pipeline/response(to:from:since:)``, ``Pipeline/hop(after:hops:)``,
/// ``Pipeline/validated(_:decision:)``), so both ways give the same results.
///
/// URLSession's thread is its session's serial queue on Linux, so two kinds of work leave it: a
/// body of ``inlineBodyLimit`` bytes or more is validated and decoded on a global queue, so that
/// a large JSON document never holds up the session's other transfers; and the next request of a
/// redirect is started there, since starting a task from URLSession's own queue waits on itself.
/// A redirect policy that asks a closure runs it in a task, as the pipeline would.
final class DirectExchange: Sendable {
    /// Bodies from this size on are handled off URLSession's thread.
    static let inlineBodyLimit = 64 * 1024

    private let pipeline: Pipeline
    private let transport: URLSessionTransport
    private let promise: Promise<Response>
    private let state = LockedBox(State.idle)

    private enum State {
        case idle
        case running(URLSessionTask)
        case cancelled
    }

    /// Sends `request` and completes `promise` with the outcome, if `pipeline` can run without a
    /// task; returns `nil`, sending nothing, if it cannot.
    static func start(_ request: URLRequest, pipeline: Pipeline, promise: Promise<Response>) -> DirectExchange? {
        guard pipeline.uploadBody == nil, let transport = pipeline.transport as? URLSessionTransport,
            let middleware = pipeline.middleware as? ConnectMiddleware,
            middleware.adapters.isEmpty, middleware.retriers.isEmpty, middleware.interceptors.isEmpty
        else { return nil }
        let exchange = DirectExchange(pipeline: pipeline, transport: transport, promise: promise)
        // What the pipeline's first attempt does before sending: with no adapters, the request
        // goes to the origin it was built for, credentials and all.
        pipeline.logger?.log(DebugDescription.curl(request))
        exchange.send(request, hops: 0)
        return exchange
    }

    private init(pipeline: Pipeline, transport: URLSessionTransport, promise: Promise<Response>) {
        self.pipeline = pipeline
        self.transport = transport
        self.promise = promise
    }

    /// Stops the transfer in flight, if any, and sends nothing more. The promise's future has
    /// already failed with ``ConnectError/cancelled`` (that is where this is called from).
    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            defer { state = .cancelled }
            if case .running(let task) = state { return task }
            return nil
        }
        guard let task else { return }
        // Not here: this may be URLSession's own queue (a validator cancelling its request), where
        // `cancel()` would wait on itself.
        let cancellation = TaskCancellation(task: task)
        DispatchQueue.global().async { cancellation.task.cancel() }
    }

    /// A task handed to another queue to be cancelled.
    private struct TaskCancellation: @unchecked Sendable {
        // @unchecked Sendable: URLSessionTask is thread-safe; FoundationNetworking does not say so.
        let task: URLSessionTask
    }

    private func send(_ request: URLRequest, hops: Int) {
        let start = DispatchTime.now()
        let task = transport.dataTask(for: request) { outcome in
            if case .success(let (data, _)) = outcome, data.count >= DirectExchange.inlineBodyLimit {
                DispatchQueue.global().async { self.finish(request, outcome: outcome, since: start, hops: hops) }
            } else {
                self.finish(request, outcome: outcome, since: start, hops: hops)
            }
        }
        let cancelled = state.withLock { state -> Bool in
            if case .cancelled = state { return true }
            state = .running(task)
            return false
        }
        // Resumed even when cancelled, so that URLSession completes it and the delegate lets it go.
        task.resume()
        if cancelled { task.cancel() }
    }

    private func finish(
        _ request: URLRequest, outcome: Result<(Data, HTTPURLResponse), any Error>, since start: DispatchTime, hops: Int
    ) {
        var hops = hops
        do {
            let response = try pipeline.response(to: request, from: outcome, since: start)
            switch try pipeline.hop(after: response, hops: &hops) {
            case .done(let response):
                promise.complete(with: pipeline.validated(response, decision: .proceed))
            case .next(let next):
                follow(next, hops: hops)
            case .ask(let redirect, let decide):
                let hops = hops
                Task {
                    switch await decide(redirect) {
                    case .follow: self.follow(redirect.proposedRequest, hops: hops)
                    case .followWith(let next): self.follow(next, hops: hops)
                    case .stop: self.promise.complete(with: self.pipeline.validated(response, decision: .proceed))
                    }
                }
            }
        } catch {
            promise.fail(error)
        }
    }

    /// Sends a redirect's next request from a global queue, unless the request was cancelled.
    private func follow(_ next: URLRequest, hops: Int) {
        if case .cancelled = state.withLock({ $0 }) {
            promise.fail(ConnectError.cancelled)
            return
        }
        pipeline.logger?.log(DebugDescription.curl(next))
        DispatchQueue.global().async { self.send(next, hops: hops) }
    }
}
