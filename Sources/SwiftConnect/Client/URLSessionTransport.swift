import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default transport: one `URLSession` per `Connect`, with a delegate that makes it safe.
///
/// The delegate fixes what FoundationNetworking on Linux gets wrong:
/// - a `401` with a `Basic` or `Digest` challenge comes back as a normal response with its body
///   (unanswered, the task would wait forever);
/// - on a redirect to another origin, `Authorization`, `Cookie` and `Proxy-Authorization` are
///   removed (Linux forwards them);
/// - `307` and `308` keep the method and the body (Linux drops the body);
/// - an empty body is empty `Data`, never `nil`.
public final class URLSessionTransport: Transport {
    private let session: URLSession

    /// Creates a transport with its own session.
    public init(configuration: URLSessionConfiguration = .default) {
        let delegate = SessionDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // Lets tasks in flight finish, then releases the delegate (URLSession retains it until then).
        session.finishTasksAndInvalidate()
    }

    /// Sends `request`; cancelling the calling task cancels the data task.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let state = LockedBox(TaskState.idle)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: ConnectError.invalidResponse)
                    }
                }
                let cancelled = state.withLock { state -> Bool in
                    if case .cancelled = state { return true }
                    state = .running(task)
                    return false
                }
                task.resume()
                if cancelled { task.cancel() }
            }
        } onCancel: {
            let task = state.withLock { state -> URLSessionDataTask? in
                defer { state = .cancelled }
                if case .running(let task) = state { return task }
                return nil
            }
            task?.cancel()
        }
    }

    private enum TaskState: @unchecked Sendable {
        // @unchecked Sendable: URLSessionDataTask is thread-safe (cancel() may be called from any
        // thread) but not marked Sendable in FoundationNetworking.
        case idle
        case running(URLSessionDataTask)
        case cancelled
    }
}

/// Answers the session's redirect and authentication questions safely.
// @unchecked Sendable: stateless; URLSession calls it on its own serial delegate queue.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(
            RedirectSafety.request(
                following: response, from: task.currentRequest ?? task.originalRequest, proposed: request))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(RedirectSafety.disposition(for: challenge), nil)
    }

    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(RedirectSafety.disposition(for: challenge), nil)
    }
}

/// The rules the session delegate applies, kept pure so they can be tested on their own.
enum RedirectSafety {
    /// Headers never sent to another origin.
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// The request to send for a redirect: credentials removed across origins; method and body
    /// kept for 307 and 308.
    static func request(following response: HTTPURLResponse, from previous: URLRequest?, proposed: URLRequest)
        -> URLRequest
    {
        var request = proposed
        let status = response.statusCode
        if status == 307 || status == 308, let previous {
            request.httpMethod = previous.httpMethod
            if request.httpBody == nil, let body = previous.httpBody {
                request.httpBody = body
            }
            if let type = previous.value(forHTTPHeaderField: "Content-Type"),
                request.value(forHTTPHeaderField: "Content-Type") == nil
            {
                request.setValue(type, forHTTPHeaderField: "Content-Type")
            }
        }
        let from = response.url ?? previous?.url
        if !isSameOrigin(from, request.url) {
            for name in credentialHeaders {
                request.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return request
    }

    /// Whether two URLs share scheme, host and port (default ports made explicit).
    static func isSameOrigin(_ lhs: URL?, _ rhs: URL?) -> Bool {
        guard let lhs, let rhs else { return false }
        func origin(_ url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
        }
        return origin(lhs) == origin(rhs)
    }

    /// Server authentication challenges (Basic, Digest, …) are not answered, so the `401` and
    /// its body come back as a response; TLS trust gets the system's default handling.
    static func disposition(for challenge: URLAuthenticationChallenge) -> URLSession.AuthChallengeDisposition {
        switch challenge.protectionSpace.authenticationMethod {
        case NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodHTMLForm, NSURLAuthenticationMethodDefault:
            return .rejectProtectionSpace
        default:
            return .performDefaultHandling
        }
    }
}
