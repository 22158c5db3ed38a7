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
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session.
    public init(configuration: URLSessionConfiguration = .default) {
        delegate = SessionDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        // Lets tasks in flight finish, then releases the delegate (URLSession retains it until then).
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; cancelling the calling task cancels the data task.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let cancellation = LockedBox(CancellationState.idle)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request)
                delegate.register(task, continuation: continuation)
                let cancelled = cancellation.withLock { state -> Bool in
                    if case .cancelled = state { return true }
                    state = .running(task)
                    return false
                }
                task.resume()
                if cancelled { task.cancel() }
            }
        } onCancel: {
            let task = cancellation.withLock { state -> URLSessionTask? in
                defer { state = .cancelled }
                if case .running(let task) = state { return task }
                return nil
            }
            task?.cancel()
        }
    }

    private enum CancellationState {
        case idle
        case running(URLSessionTask)
        case cancelled
    }
}

/// Collects each task's response and body, and answers redirects and challenges.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: its only mutable state is `tasks`, a LockedBox.
    typealias Continuation = CheckedContinuation<(Data, HTTPURLResponse), any Error>

    private struct Record {
        let continuation: Continuation
        var response: HTTPURLResponse?
        var data = Data()
        var challengeCancelled = false
    }

    private let tasks = LockedBox([Int: Record]())

    func register(_ task: URLSessionTask, continuation: Continuation) {
        tasks.withLock { $0[task.taskIdentifier] = Record(continuation: continuation) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        tasks.withLock { $0[dataTask.taskIdentifier]?.response = response as? HTTPURLResponse }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        tasks.withLock { $0[dataTask.taskIdentifier]?.data.append(data) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Never let URLSession follow: the 3xx comes back, and Connect follows it safely.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard RedirectSafety.isServerAuthentication(challenge.protectionSpace.authenticationMethod) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #if canImport(FoundationNetworking)
            // Linux: `.rejectProtectionSpace` and `.performDefaultHandling` hang or lose the response;
            // cancel the challenge and return the buffered 401 when the task completes.
            tasks.withLock { $0[task.taskIdentifier]?.challengeCancelled = true }
            completionHandler(.cancelAuthenticationChallenge, nil)
        #else
            completionHandler(.rejectProtectionSpace, nil)
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let record = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if record.challengeCancelled {
            if let response = record.response {
                record.continuation.resume(returning: (record.data, response))
            } else {
                record.continuation.resume(throwing: URLError(.userAuthenticationRequired))
            }
        } else if let error {
            record.continuation.resume(throwing: error)
        } else if let response = record.response {
            record.continuation.resume(returning: (record.data, response))
        } else {
            record.continuation.resume(throwing: ConnectError.invalidResponse)
        }
    }
}
