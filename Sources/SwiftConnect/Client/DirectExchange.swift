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
/// awaiting task is resumed straight from URLSession's thread. The exchange is that promise (a
/// ``RequestPromise`` subclass): one object a request rather than two. The steps are
/// ``Pipeline``'s own (``Pipeline/response(to:from:since:)``, ``Pipeline/hop(after:hops:)``,
/// ``Pipeline/validated(_:decision:)``), so both ways give the same results.
///
/// URLSession's thread is its session's serial queue on Linux, which also runs every transfer of
/// the session, so some work leaves it. A response is validated and decoded on a global queue when
/// the session has other transfers in flight, whose callbacks would otherwise wait behind it
/// (measured with 8 and 64 in flight: 0.94–0.95× plain URLSession's throughput inline, 1.03×
/// handed off; one request alone stays inline, sparing the hop), and when its body has
/// ``inlineBodyLimit`` bytes or more, so that a large JSON document never holds up the
/// session's next transfers either. A lone response headed for a callback queue other than the
/// main queue is handled on that queue (``observersQueue()``); if its observer is registered only
/// while it is being handled, it is still decoded there (``Future/mapBeforeObservers(_:)``). One
/// that arrives before it is observed is handled and decoded where it arrives. Since starting or cancelling
/// a task from URLSession's own queue waits on itself, a redirect's next request, and any request
/// sent or cancelled from a validator or error handler there (``SessionQueue``,
/// ``SessionTaskSlot``), start from a global queue. A redirect policy that asks a closure runs it in a task, which
/// cancelling the request cancels, as it would the pipeline's.
final class DirectExchange: RequestPromise, @unchecked Sendable {
    // @unchecked Sendable: as its superclass's, restated for a subclass; every stored property
    // here is a constant of a Sendable type, and `task` guards its own state with a lock.
    /// Bodies from this size on are handled off URLSession's thread.
    static let inlineBodyLimit = 64 * 1024

    private let pipeline: Pipeline
    private let transport: URLSessionTransport
    /// Where the request is registered, and its slot there, until its promise completes or it is
    /// cancelled.
    private let registry: RequestRegistry
    private let slot: Int
    /// The URL the request was built for: a policy's `.followWith` request keeps credential
    /// headers only to its origin. Kept only under a `.decide` policy, the one that can answer so.
    private let credentialOrigin: URL?
    /// The transfer in flight, or the task asking a `.decide` redirect policy.
    private let task = SessionTaskSlot()

    /// Sends `request` and completes `response` (and `body`, if given, with the response's body)
    /// with the outcome. Cancelling `response` cancels the exchange. The pipeline must have a
    /// ``Pipeline/directTransport`` and no upload body.
    static func start(
        _ request: URLRequest, pipeline: Pipeline, transport: URLSessionTransport, response: Future<Response>,
        body: Future<Data>?, registry: RequestRegistry
    ) {
        var credentialOrigin: URL? = nil
        if case .decide = pipeline.redirectPolicy.kind { credentialOrigin = request.url }
        let exchange = DirectExchange(
            pipeline: pipeline, transport: transport, response: response, body: body, registry: registry,
            credentialOrigin: credentialOrigin)
        // Before anything is sent: a cancellation from now on (`cancelAllRequests()` from another
        // thread while the logger runs, say) stops the request before its transfer starts.
        response.setCancelAction { exchange.cancel() }
        // What the pipeline's first attempt does before sending: with no adapters, the request
        // goes to the origin it was built for, credentials and all.
        pipeline.logger?.log(DebugDescription.curl(request, credentialHeaders: pipeline.credentialHeaders))
        exchange.send(request, hops: 0)
    }

    private init(
        pipeline: Pipeline, transport: URLSessionTransport, response: Future<Response>, body: Future<Data>?,
        registry: RequestRegistry, credentialOrigin: URL?
    ) {
        self.pipeline = pipeline
        self.transport = transport
        self.registry = registry
        self.slot = registry.insert(RequestPromise.outermost(response: response, body: body))
        self.credentialOrigin = credentialOrigin
        super.init(response: response, body: body)
    }

    /// Stops the transfer in flight, if any, and sends nothing more. The response's future has
    /// already failed with ``ConnectError/cancelled`` (that is where this is called from); the
    /// body's, if it has not yet, fails so too.
    func cancel() {
        task.cancel()
        settle(with: .failure(ConnectError.cancelled))
    }

    /// Completes the promise, unless it has completed, and leaves the registry.
    private func settle(with result: Result<Response, any Error>) {
        complete(with: result)
        registry.remove(slot, holding: outermost)
    }

    /// Sends `request`. From URLSession's own queue — a validator or error handler sending a
    /// request, or a redirect found there — where creating and starting a task would wait on
    /// itself, it is sent from a global queue.
    private func send(_ request: URLRequest, hops: Int) {
        guard !SessionQueue.isCurrent else {
            DispatchQueue.global().async { self.send(request, hops: hops) }
            return
        }
        // Cancelled already (the promise is completed so): start no transfer.
        if task.isCancelled { return }
        let start = DispatchTime.now()
        let transfer = transport.dataTask(for: request, slot: task) { outcome, othersInFlight in
            let bodySize = (try? outcome.get())?.0.count ?? 0
            if othersInFlight && self.transport.handsOffBusyResponses || bodySize >= DirectExchange.inlineBodyLimit {
                DispatchQueue.global().async { self.finish(request, outcome: outcome, since: start, hops: hops) }
            } else if let queue = self.observersQueue() {
                queue.async { self.finish(request, outcome: outcome, since: start, hops: hops) }
            } else {
                self.finish(request, outcome: outcome, since: start, hops: hops)
            }
        }
        task.start(transfer)
    }

    /// The callback queue, when a lone response is headed there anyway — its request's future
    /// is observed, or has a step such as `map`, on that queue — and it is not the main queue:
    /// the response is then handled there, from validation on, in a block of its own, with its
    /// observers queued behind it. `nil` when it is only awaited, or on the main queue, or off Linux.
    ///
    /// URLSession's own thread then hands the transfer over at once and gets on with its
    /// bookkeeping and the session's next transfer. Handled on that thread first and sent to the
    /// callback queue only to be decoded (``Future/mapBeforeObservers(_:)``), one request in
    /// flight answered its observers 3–9 % later than plain URLSession's completion handler, at the
    /// same CPU (Benchmarks/HISTORY.md, "Twenty-third round").
    private func observersQueue() -> DispatchQueue? {
        #if canImport(FoundationNetworking)
            guard let queue = response.callbackQueue, response.lock?.hasObserverOnQueue == true,
                !MainQueue.isMain(queue)
            else { return nil }
            return queue
        #else
            return nil
        #endif
    }

    private func finish(
        _ request: URLRequest, outcome: Result<(Data, HTTPURLResponse), any Error>, since start: DispatchTime, hops: Int
    ) {
        var hops = hops
        do {
            let response = try pipeline.response(to: request, from: outcome, since: start)
            switch try pipeline.hop(after: response, hops: &hops) {
            case .done(let response):
                settle(with: pipeline.validated(response, decision: .proceed))
            case .next(let next):
                follow(next, hops: hops)
            case .ask(let redirect, let decide):
                let hops = hops
                let asking = Task {
                    switch await decide(redirect) {
                    case .follow: self.follow(redirect.proposedRequest, hops: hops)
                    case .followWith(let chosen):
                        do {
                            let next = try RedirectSafety.request(
                                chosen: chosen, credentialOrigin: self.credentialOrigin,
                                credentialHeaders: self.pipeline.credentialHeaders)
                            self.follow(next, hops: hops)
                        } catch {
                            self.settle(with: .failure(error))
                        }
                    case .stop: self.settle(with: self.pipeline.validated(response, decision: .proceed))
                    }
                }
                // Cancelling the request cancels the task asking, as it would the pipeline's task.
                task.hold(asking)
            }
        } catch {
            settle(with: .failure(error))
        }
    }

    /// Sends a redirect's next request, unless the request was cancelled.
    private func follow(_ next: URLRequest, hops: Int) {
        if task.isCancelled {
            settle(with: .failure(ConnectError.cancelled))
            return
        }
        pipeline.logger?.log(DebugDescription.curl(next, credentialHeaders: pipeline.credentialHeaders))
        send(next, hops: hops)
    }
}
