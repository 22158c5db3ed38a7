import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default transport: one `URLSession` per `Connect`, driven by a delegate that makes it safe.
///
/// What it fixes in FoundationNetworking on Linux (each measured on Linux with Swift 6.3):
/// - A `401` with a `Basic` challenge makes a task wait forever unless the challenge is answered,
///   and answering it loses the response. The delegate buffers the response and body, cancels the
///   challenge, and returns the `401` with its body as a normal response.
/// - URLSession forwards `Authorization` and `Cookie` to other hosts on redirects, and loses the
///   body of `307`/`308` redirects whatever the delegate does. This transport therefore never lets
///   URLSession follow a redirect: it returns the `3xx` response, and `Connect` follows it safely.
/// - An empty body is empty `Data`.
/// - A streamed upload body goes out chunked, and a `Content-Length` set by hand goes out next to
///   `Transfer-Encoding: chunked`, which servers reject; the progress of a streamed body has `0` as
///   its expected size. ``send(_:body:progress:)`` sends a plain `Content-Length` and reports
///   progress against the body's known length.
/// - A NaN, infinite or huge timeout traps in FoundationNetworking, and a fraction of a second is
///   truncated (0.5 s times out at once). The session's timeouts are taken as
///   ``ConnectConfiguration/timeoutInterval`` describes, on a copy of the configuration.
/// - URLSession adds a configuration's `httpAdditionalHeaders` to every task, the next hop of a
///   redirect to another origin included, and checks none of them. In the transport a `Connect`
///   makes from its `sessionConfiguration`, those headers are taken out of the session; `Connect`
///   sends them as headers of each request it builds, where the build checks them like any other
///   header and a redirect to another origin removes the credentials among them (`Authorization`,
///   `Cookie`, `X-API-Key`, …).
public final class URLSessionTransport: Transport {
    let session: URLSession
    private let delegate: SessionDelegate
    /// The headers taken out of the configuration's `httpAdditionalHeaders`, sorted by name.
    /// `Connect` sends them with every request it builds, below its own default headers.
    let sessionHeaders: [HTTPHeader]
    /// Whether a ``DirectExchange`` hands a response off URLSession's queue when the session has
    /// other transfers in flight. Always, but for tests that must reach what a validator meets on
    /// that queue when another transfer starts just after the check (a race otherwise).
    let handsOffBusyResponses: Bool

    /// Creates a transport with its own session. Its session sends every header of the
    /// configuration's `httpAdditionalHeaders` itself, credentials included, on every hop of a
    /// redirect too: give a `Connect` credentials as `ConnectConfiguration.defaultHeaders` (or
    /// its `sessionConfiguration`, without a transport of your own), where a redirect to another
    /// origin drops them.
    public convenience init(configuration: URLSessionConfiguration = .default) {
        self.init(configuration: configuration, handsOffBusyResponses: true)
    }

    /// `liftingHeaders`: whether the configuration's `httpAdditionalHeaders` are taken out of the
    /// session, for a `Connect` that made this transport to check and send with each request it
    /// builds (``sessionHeaders``).
    init(configuration: URLSessionConfiguration, handsOffBusyResponses: Bool, liftingHeaders: Bool = false) {
        self.handsOffBusyResponses = handsOffBusyResponses
        let (lifted, headers) = liftingHeaders ? Self.liftingHeaders(from: configuration) : (configuration, [])
        sessionHeaders = headers
        let sessionConfiguration = RequestTimeout.sanitized(lifted)
        delegate = SessionDelegate()
        #if canImport(FoundationNetworking)
            session = URLSession(
                configuration: sessionConfiguration, delegate: delegate, delegateQueue: ImmediateOperationQueue())
        #else
            session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
        #endif
    }

    /// `configuration`, or a copy without its `httpAdditionalHeaders`, and those headers.
    ///
    /// All of them, not only credentials: URLSession would send the others unchecked, so a line
    /// break in one would add a header of its own, and a `Content-Length` would cut the body and
    /// desynchronise the connection. As headers of the request, the build checks them.
    static func liftingHeaders(from configuration: URLSessionConfiguration) -> (URLSessionConfiguration, [HTTPHeader]) {
        guard let additional = configuration.httpAdditionalHeaders, !additional.isEmpty,
            let copy = configuration.copy() as? URLSessionConfiguration
        else { return (configuration, []) }
        copy.httpAdditionalHeaders = nil
        func string(_ value: Any) -> String? {
            value as? String ?? (value as? NSString).map { String($0) }
        }
        let lifted = additional.map { key, value -> HTTPHeader in
            let name = string(key.base)
            guard let name, let text = string(value) else {
                // A name or value that is not a string (a number, `Data`, `NSNull`; FoundationNetworking
                // traps on one) has no text of its own to send: it gets a value the build refuses, a
                // NUL, so that every request fails with `invalidHeader(name:)` and none goes out with
                // `2 bytes` or `<null>` in its place.
                return HTTPHeader(name: name ?? "\(key.base)", value: "\u{0}")
            }
            return HTTPHeader(name: name, value: text)
        }
        return (copy, lifted.sorted { $0.name < $1.name })
    }

    deinit {
        // Lets tasks in flight finish, then releases the delegate (URLSession retains it until then).
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; cancelling the calling task cancels the data task.
    ///
    /// On Linux the data task is cancelled once URLSession has begun the transfer (a response or
    /// upload progress), or a second after the cancellation at the latest, and this throws then:
    /// cancelled earlier, FoundationNetworking can trap (Usage.md, "Futures: chaining, observing,
    /// awaiting"). A transfer that ends in a redirect is never cancelled (FoundationNetworking
    /// traps then too): it returns its `3xx` at once.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await run(request, upload: nil)
    }

    /// Sends `request` with `body` streamed as its body, reporting progress from URLSession's
    /// `didSendBodyData` against the body's known length.
    ///
    /// The body goes out as an `httpBodyStream` that reads files chunk by chunk, so memory stays
    /// flat whatever the size; URLSession asks for a fresh stream (`needNewBodyStream`) if it must
    /// send the body again. Cancelling the calling task cancels the transfer and closes any file
    /// being read. A file that changes while it is sent aborts the transfer, which then throws
    /// ``ConnectError/uploadSourceChanged(_:detail:)``.
    ///
    /// With ``UploadBody/Framing/contentLength`` the request carries `Content-Length`. On Linux,
    /// libcurl would add `Transfer-Encoding: chunked` next to it for any body stream (servers
    /// reject the pair); the request therefore also carries a blank `Transfer-Encoding` header,
    /// which tells libcurl to leave that header out and send the body as it is. Measured on Linux
    /// with a 1 GiB file: as fast as chunked, at the same flat memory.
    public func send(
        _ request: URLRequest, body: UploadBody, progress: @escaping @Sendable (UploadProgress) -> Void
    ) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.httpBody = nil
        switch body.framing {
        case .contentLength:
            request.setValue(String(body.contentLength), forHTTPHeaderField: "Content-Length")
            #if canImport(FoundationNetworking)
                request.setValue(" ", forHTTPHeaderField: "Transfer-Encoding")
            #endif
        case .chunked:
            request.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return try await run(request, upload: UploadStreams(body: body, progress: progress))
    }

    private func run(_ request: URLRequest, upload: UploadStreams?) async throws -> (Data, HTTPURLResponse) {
        let slot = SessionTaskSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task: URLSessionDataTask
                if let upload {
                    var streamed = request
                    streamed.httpBodyStream = upload.makeStream()
                    task = session.dataTask(with: streamed)
                } else {
                    task = session.dataTask(with: request)
                }
                delegate.register(
                    task, completion: .continuation(SessionDelegate.Waiter(continuation)), upload: upload, slot: slot)
                slot.start(task)
            }
        } onCancel: {
            slot.cancel()
        }
    }

    /// Makes a data task for `request` whose outcome goes to `completion`, without a Swift task:
    /// for ``DirectExchange``. `completion` runs on URLSession's own thread (on Linux, the
    /// session's work queue), where it must not call back into URLSession synchronously — no
    /// `resume()` or `cancel()` of a task; the caller resumes the task it gets. `completion` also
    /// learns whether the session had other transfers in flight when this one completed.
    func dataTask(
        for request: URLRequest, slot: SessionTaskSlot,
        completion: @escaping @Sendable (Result<(Data, HTTPURLResponse), any Error>, _ othersInFlight: Bool) -> Void
    ) -> URLSessionDataTask {
        let task = session.dataTask(with: request)
        delegate.register(task, completion: .callback(completion), slot: slot)
        return task
    }

}

/// Collects each task's response and body, and answers redirects and challenges.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: its only mutable state is `tasks`, a LockedBox.
    typealias Outcome = Result<(Data, HTTPURLResponse), any Error>

    /// Where a task's outcome goes.
    enum Completion {
        /// A task awaiting ``URLSessionTransport/send(_:)``.
        case continuation(Waiter)
        /// A ``DirectExchange``.
        case callback(@Sendable (Outcome, _ othersInFlight: Bool) -> Void)

        /// Delivers `outcome`; `othersInFlight` tells a callback whether the session has other
        /// transfers in flight, whose callbacks wait on the session's queue meanwhile.
        func deliver(_ outcome: Outcome, othersInFlight: Bool) {
            switch self {
            case .continuation(let waiter): waiter.continuation.resume(with: outcome)
            case .callback(let callback): callback(outcome, othersInFlight)
            }
        }
    }

    /// The continuation of a task awaiting a transfer, in a box. `CheckedContinuation` is not
    /// frozen, so an enum carrying it inline has a layout known only at run time: every copy and
    /// destroy of ``Completion`` — a few per request, the direct exchange's included — then goes
    /// through runtime calls. A class reference keeps the layout fixed.
    final class Waiter: Sendable {
        let continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>

        init(_ continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) {
            self.continuation = continuation
        }
    }

    /// One task's state. A class, so that each delegate call updates it in place, under the lock
    /// of ``tasks``, instead of copying a struct out of the table and back.
    private final class Record {
        let completion: Completion
        /// The body streams of an upload.
        let upload: UploadStreams?
        /// Told when the task completes, so that a late cancellation leaves it alone.
        let slot: SessionTaskSlot?
        var response: HTTPURLResponse?
        var data = Data()
        var challengeCancelled = false

        init(completion: Completion, upload: UploadStreams?, slot: SessionTaskSlot?) {
            self.completion = completion
            self.upload = upload
            self.slot = slot
        }
    }

    /// Each task in flight's state, by task identifier.
    private let tasks = LockedBox(TaskTable<Record>())

    func register(
        _ task: URLSessionTask, completion: Completion, upload: UploadStreams? = nil, slot: SessionTaskSlot? = nil
    ) {
        tasks.withLock { $0[task.taskIdentifier] = Record(completion: completion, upload: upload, slot: slot) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping (InputStream?) -> Void
    ) {
        // Called when URLSession must send the body again from its start (libcurl rewinds, for
        // example on a reused connection that turned out dead).
        let upload = tasks.withLock { $0[task.taskIdentifier]?.upload }
        completionHandler(upload?.makeStream())
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        // URLSession on Linux reports 0 as the expected size of a streamed body; the body knows.
        let record = tasks.withLock { $0[task.taskIdentifier] }
        record?.slot?.began(task)
        guard let upload = record?.upload else { return }
        let total = upload.body.contentLength
        upload.progress(UploadProgress(bytesSent: min(totalBytesSent, total), totalBytes: total))
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let response = response as? HTTPURLResponse
        let slot = tasks.withLock { tasks -> SessionTaskSlot? in
            guard let record = tasks[dataTask.taskIdentifier] else { return nil }
            record.response = response
            return record.slot
        }
        // Outside the table's lock: the slot has a lock of its own.
        slot?.began(dataTask)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        tasks.withLock { tasks in
            guard let record = tasks[dataTask.taskIdentifier] else { return }
            if record.data.isEmpty {
                record.data = data  // the usual single chunk: no copy
            } else {
                record.data.append(data)
            }
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Never let URLSession follow: the 3xx comes back, and Connect follows it safely.
        let slot = tasks.withLock { $0[task.taskIdentifier]?.slot }
        #if canImport(FoundationNetworking)
            // A cancellation under way fails the task; FoundationNetworking traps when the answer
            // arrives after it, as when it arrives before it. So the task gets one or the other.
            guard slot?.redirecting(task) ?? true else { return }
        #else
            _ = slot?.redirecting(task)
        #endif
        // At once: the answer only queues the 3xx's completion on the session's queue. Answered
        // later, the task would stay open to a cancellation for longer.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard RedirectSafety.isServerAuthentication(challenge.protectionSpace.authenticationMethod) else {
            SessionDelegate.answer { completionHandler(.performDefaultHandling, nil) }
            return
        }
        #if canImport(FoundationNetworking)
            // Linux: `.rejectProtectionSpace` and `.performDefaultHandling` hang or lose the response;
            // cancel the challenge and return the buffered 401 when the task completes.
            tasks.withLock { tasks in tasks[task.taskIdentifier].map { $0.challengeCancelled = true } }
            SessionDelegate.answer { completionHandler(.cancelAuthenticationChallenge, nil) }
        #else
            completionHandler(.rejectProtectionSpace, nil)
        #endif
    }

    /// Hands an answer back to URLSession. On Linux the delegate runs on the session's own queue
    /// (``ImmediateOperationQueue``), where an answer that cancels the task would wait for that
    /// queue — itself; such answers are given from another thread. These are the rare calls:
    /// redirects and authentication challenges.
    static func answer(_ reply: @escaping () -> Void) {
        #if canImport(FoundationNetworking)
            let answer = Answer(reply: reply)
            DispatchQueue.global().async { answer.reply() }
        #else
            reply()
        #endif
    }

    /// A completion handler URLSession gave the delegate.
    private struct Answer: @unchecked Sendable {
        // @unchecked Sendable: URLSession's completion handlers may be called from any thread;
        // FoundationNetworking only leaves them unannotated.
        let reply: () -> Void
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (taken, othersInFlight) = tasks.withLock { tasks in
            (tasks.removeValue(forKey: task.taskIdentifier), !tasks.isEmpty)
        }
        guard let record = taken else { return }
        record.slot?.finish(task)
        if record.response == nil {
            // FoundationNetworking never reports a 3xx without a `Location` as received (it took it
            // for a redirect it could not follow), and drops its body; the task still has it.
            record.response = task.response as? HTTPURLResponse
        }
        record.completion.deliver(SessionDelegate.outcome(of: record, error: error), othersInFlight: othersInFlight)
    }

    private static func outcome(of record: Record, error: (any Error)?) -> Outcome {
        if let upload = record.upload {
            // Free the files at once, whatever the outcome; a failed source explains the abort.
            upload.closeAll()
            if let failure = upload.failure { return .failure(failure) }
        }
        if record.challengeCancelled {
            guard let response = record.response else { return .failure(URLError(.userAuthenticationRequired)) }
            return .success((record.data, response))
        }
        if let error { return .failure(classified(error, response: record.response, received: record.data.count)) }
        guard let response = record.response else { return .failure(ConnectError.invalidResponse) }
        return .success((record.data, response))
    }

    /// `error`, with a connection lost in the middle of a response's body called what it is.
    ///
    /// FoundationNetworking reports that as `URLError(.unknown)` with libcurl's text, which is all
    /// it keeps of libcurl's error: "transfer closed with 93 bytes remaining to read" or "…with
    /// outstanding read data remaining" (a chunked body without its last chunk) from libcurl 7,
    /// "end of response with 93 bytes missing" from libcurl 8. Apple's URLSession reports
    /// `.networkConnectionLost`, which ``RetryPolicy`` retries; so it is that here too when the text
    /// says so, or when fewer bytes came than the response's `Content-Length` (and no
    /// `Content-Encoding` makes the two differ), whatever the text. The error keeps its `userInfo`:
    /// libcurl's text and FoundationNetworking's underlying error.
    static func classified(_ error: any Error, response: HTTPURLResponse?, received: Int) -> any Error {
        #if canImport(FoundationNetworking)
            guard let urlError = error as? URLError, urlError.code == .unknown else { return error }
            let text = urlError.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
            let saysCut = text.hasPrefix("transfer closed with ") || text.hasPrefix("end of response with ")
            let cutShort =
                response.map {
                    $0.expectedContentLength > received && $0.value(forHTTPHeaderField: "Content-Encoding") == nil
                } ?? false
            guard saysCut || cutShort else { return error }
            return URLError(.networkConnectionLost, userInfo: urlError.userInfo)
        #else
            return error
        #endif
    }
}

/// What one request is waiting on — its URLSession task, or a Swift task between two transfers —
/// so that it can be cancelled from any thread, exactly once, including before it starts.
struct SessionTaskSlot: Sendable {
    private let state = LockedBox(Slot())
    /// How long a cancellation waits for its transfer to begin (``cancelLater(_:)``) before it
    /// cancels the transfer all the same.
    let beginWait: DispatchTimeInterval

    init(beginWait: DispatchTimeInterval = .seconds(1)) {
        self.beginWait = beginWait
    }

    /// Whether a cancellation waits for its transfer to begin (``cancelLater(_:)``): only with
    /// FoundationNetworking, whose `cancel()` can trap before then.
    #if canImport(FoundationNetworking)
        static let waitsForTransferToBegin = true
    #else
        static let waitsForTransferToBegin = false
    #endif

    private struct Slot {
        var current = State.idle
        /// The last transfer URLSession completed (``finish(_:)``): cancelling it now would race
        /// FoundationNetworking's own completion, which then traps ("Trying to access a behaviour
        /// for a task that in not in the registry").
        var finished: ObjectIdentifier?
        /// The last transfer URLSession has answered for (``began(_:)``, ``redirecting(_:)``): a
        /// response, a redirect or upload progress.
        var began: ObjectIdentifier?
        /// A transfer to cancel once it has begun (``cancelLater(_:)``).
        var deferred: URLSessionTask?
        /// The last transfer URLSession reported a redirect for (``redirecting(_:)``): answered,
        /// it ends by itself with the `3xx`, and must not be cancelled.
        var redirected: ObjectIdentifier?
        /// The last transfer a cancellation was committed to (`cancel(_:unlessFinishedIn:)`):
        /// its redirect, if it reports one, must not be answered.
        var cancelling: ObjectIdentifier?
    }

    private enum State {
        case idle
        case running(URLSessionTask)
        /// Work between transfers, such as asking a `.decide` redirect policy.
        case waiting(Task<Void, Never>)
        case cancelled
    }

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        state.withLock { slot in
            if case .cancelled = slot.current { return true }
            return false
        }
    }

    /// Resumes `task`, and cancels it at once if the request was cancelled before it started (it is
    /// still resumed, so that URLSession completes it and its delegate record is let go). Call it
    /// off URLSession's own queue, as `resume()` waits for that queue.
    func start(_ task: URLSessionTask) {
        let cancelled = state.withLock { slot -> Bool in
            if case .cancelled = slot.current { return true }
            slot.current = .running(task)
            return false
        }
        task.resume()
        if cancelled { cancelLater(task) }
    }

    /// Notes that URLSession completed `task` (from its delegate's completion): a cancellation
    /// arriving from now on leaves it alone.
    func finish(_ task: URLSessionTask) {
        state.withLock { slot in
            slot.finished = ObjectIdentifier(task)
            if slot.deferred === task { slot.deferred = nil }
        }
    }

    /// Notes that URLSession has answered for `task` — its response or upload progress — and
    /// cancels it now if a cancellation waited for that (``cancelLater(_:)``). Called from
    /// the delegate, on URLSession's own queue, so the cancellation itself goes to another.
    func began(_ task: URLSessionTask) {
        let deferred = state.withLock { slot -> URLSessionTask? in
            slot.began = ObjectIdentifier(task)
            guard let deferred = slot.deferred, deferred === task else { return nil }
            slot.deferred = nil
            return deferred
        }
        if let deferred { cancelFromAnotherQueue(deferred) }
    }

    /// Notes that URLSession reports a redirect for `task`, and returns whether the delegate may
    /// answer it. Called from the delegate, on URLSession's own queue.
    ///
    /// FoundationNetworking traps when a task is cancelled while it waits for that answer, with
    /// the answer queued either before or after the cancellation ("Received callback for HTTP
    /// redirection, but we're not waiting for it"). The transport always answers that the `3xx` is
    /// the response, so an answered task ends by itself: a cancellation waiting for it to begin is
    /// dropped, and none starts from now on. But when a cancellation is already committed, the
    /// delegate must not answer: the cancellation ends the task.
    func redirecting(_ task: URLSessionTask) -> Bool {
        state.withLock { slot in
            let id = ObjectIdentifier(task)
            slot.began = id
            if slot.deferred === task { slot.deferred = nil }
            if slot.cancelling == id { return false }
            slot.redirected = id
            return true
        }
    }

    /// Holds `task` as what the request waits on, cancelling it at once if the request was
    /// cancelled already.
    ///
    /// The task runs as soon as it is created, before this call: by now it may have started the
    /// next transfer (``start(_:)``), or that transfer may have led to another task held here.
    /// Either is newer than `task` and stays what `cancel()` stops: `task` replaces only a transfer
    /// URLSession has completed, or nothing.
    func hold(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { slot -> Bool in
            switch slot.current {
            case .cancelled:
                return true
            case .running(let transfer) where slot.finished != ObjectIdentifier(transfer):
                return false
            case .waiting:
                return false
            case .idle, .running:
                slot.current = .waiting(task)
                return false
            }
        }
        if cancelled { task.cancel() }
    }

    /// Cancels what the request waits on, if anything, and whatever it would start later.
    func cancel() {
        let previous = state.withLock { slot -> State in
            defer { slot.current = .cancelled }
            return slot.current
        }
        switch previous {
        case .running(let task): cancelLater(task)
        case .waiting(let task): task.cancel()
        case .idle, .cancelled: break
        }
    }

    /// Cancels `task` once URLSession has answered for it (``began(_:)``), or after
    /// ``beginWait`` at the latest, unless URLSession has completed it by then.
    ///
    /// Not before it has begun: until then FoundationNetworking may still be asking the session's
    /// `URLCache` about the request, on a background queue. `cancel()` then leaves its own failure
    /// of the task to that queue's reply, which queues it after the request's start; preempted
    /// between the two, the reply can queue it after the whole transfer has completed and left the
    /// session's registry, and FoundationNetworking traps ("Trying to access a behaviour for a task
    /// that in not in the registry"; about one racing cancellation in a thousand on a loaded
    /// machine). Once the transfer has begun, `cancel()` queues its failure at once, ahead of the
    /// completion. A request's futures fail as cancelled at once either way; only the transfer
    /// runs a little longer.
    private func cancelLater(_ task: URLSessionTask) {
        let id = ObjectIdentifier(task)
        let now = state.withLock { slot -> Bool? in
            if slot.finished == id || slot.redirected == id { return nil }
            if slot.began == id || !Self.waitsForTransferToBegin { return true }
            slot.deferred = task
            return false
        }
        guard let now else { return }
        if now {
            cancelFromAnotherQueue(task)
            return
        }
        let cancellation = Cancellation(task: task)
        let state = self.state
        DispatchQueue.global().asyncAfter(deadline: .now() + beginWait) {
            let due = state.withLock { slot -> Bool in
                guard slot.deferred === cancellation.task else { return false }
                slot.deferred = nil
                return true
            }
            if due { SessionTaskSlot.cancel(cancellation, unlessFinishedIn: state) }
        }
    }

    /// Cancels `task` from a global queue, unless URLSession has completed it by then.
    ///
    /// Never where the cancellation comes from: FoundationNetworking's `cancel()` waits for the
    /// session's work queue. From that queue (a validator cancelling a request, or ``began(_:)``)
    /// it would wait on itself; from a Swift task's cancellation handler it waits holding the
    /// task's status lock, while the work queue, delivering that very task's response, waits for
    /// the same lock to resume its continuation — a deadlock.
    private func cancelFromAnotherQueue(_ task: URLSessionTask) {
        let cancellation = Cancellation(task: task)
        let state = self.state
        DispatchQueue.global().async { SessionTaskSlot.cancel(cancellation, unlessFinishedIn: state) }
    }

    /// Cancels the task unless URLSession has completed it or is ending it after a redirect
    /// (``redirecting(_:)``); the check and the commitment are one step under the lock.
    private static func cancel(_ cancellation: Cancellation, unlessFinishedIn state: LockedBox<Slot>) {
        let commits = state.withLock { slot -> Bool in
            let id = ObjectIdentifier(cancellation.task)
            guard slot.finished != id, slot.redirected != id else { return false }
            slot.cancelling = id
            return true
        }
        if commits { cancellation.task.cancel() }
    }

    private struct Cancellation: @unchecked Sendable {
        // @unchecked Sendable: URLSessionTask is thread-safe; FoundationNetworking does not say so.
        let task: URLSessionTask
    }
}

/// The body streams URLSession reads for one upload task: the first, and any it asks for again.
final class UploadStreams: Sendable {
    let body: UploadBody
    let progress: @Sendable (UploadProgress) -> Void
    private let readers = LockedBox([UploadBodyReader]())

    init(body: UploadBody, progress: @escaping @Sendable (UploadProgress) -> Void) {
        self.body = body
        self.progress = progress
    }

    /// A new stream from the body's first byte; call it on the thread that hands it to URLSession.
    func makeStream() -> InputStream {
        let reader = body.makeReader()
        readers.withLock { $0.append(reader) }
        return UploadBodyStream(reader: reader)
    }

    /// Why the latest stream failed, if it did.
    var failure: ConnectError? {
        readers.withLock { $0.last }?.failure
    }

    /// Closes every stream, releasing open files.
    func closeAll() {
        for reader in readers.withLock({ $0 }) { reader.close() }
    }
}

#if canImport(FoundationNetworking)
    /// The delegate queue of the Linux transport: runs each delegate call at once, on the thread of
    /// URLSession's that makes it, instead of as an `Operation` on a queue of its own.
    ///
    /// FoundationNetworking hands every delegate call — the response, each chunk of the body, the
    /// completion — to the delegate queue as a separate operation; with an ordinary queue that is
    /// three thread hops per request, which measured as most of the library's cost over a plain
    /// completion-handler data task. ``SessionDelegate``'s calls only take a lock and record, so
    /// they can run where they are made. On completion they resume a continuation (the awaiting
    /// task then runs on the Swift concurrency pool) or finish a ``DirectExchange``, which leaves
    /// this thread when the session has other transfers in flight, for large bodies, and for
    /// whatever calls back into URLSession; the delegate's
    /// own answers that call back go through ``SessionDelegate/answer(_:)``.
    final class ImmediateOperationQueue: OperationQueue, @unchecked Sendable {
        // @unchecked Sendable: adds no state to OperationQueue, which is thread-safe.
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            SessionQueue.run(block)
        }
    }
#endif

/// Whether this thread is running one of the transport's delegate calls on URLSession's own queue.
///
/// On Linux, `URLSession.dataTask(with:)`, `URLSessionTask.resume()` and `cancel()` each wait for
/// the session's serial queue, so called from that queue they wait on themselves. Code that may
/// run there — a request's validators, error handler, logger and decoding, which a
/// ``DirectExchange`` runs in URLSession's callback — can start or cancel requests, so those paths
/// check ``isCurrent`` and move to another thread first. On Apple platforms the delegate runs on
/// a queue of its own, from which URLSession may be called: ``isCurrent`` is always `false`.
@usableFromInline
enum SessionQueue {
    #if canImport(FoundationNetworking)
        /// Set while a delegate call runs; per thread, so nested calls see it too.
        private static let mark = ThreadMark()

        /// Whether the current thread is inside a delegate call of the transport.
        @usableFromInline
        static var isCurrent: Bool { mark.current != nil }

        /// Runs `body` marked as a delegate call.
        static func run(_ body: () -> Void) {
            let replaced = mark.set(UnsafeMutableRawPointer(bitPattern: 1))
            defer { mark.restore(replaced) }
            body()
        }
    #else
        /// Always `false`: Apple's URLSession may be called from its delegate queue.
        @usableFromInline
        static var isCurrent: Bool { false }
    #endif
}
