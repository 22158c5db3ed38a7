import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes a request before it is sent: adds a header, signs it, appends an API key.
///
/// Adapters run on every attempt, so a retried request is adapted afresh (a fresh token).
/// Throwing fails the request with your error, and nothing is sent.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send in place of `request`.
    func adapt(_ request: URLRequest) async throws -> URLRequest
}

/// Decides whether a failed request is sent again.
public protocol RequestRetrier: Sendable {
    /// Returns whether and when to retry.
    ///
    /// - Parameters:
    ///   - request: The request as built from the connector (adapters run again on a retry).
    ///   - error: Why it failed: a ``ConnectError`` or your error handler's error.
    ///   - response: The response, if the server sent one.
    ///   - attempt: How many times the request has been sent so far (1 after the first try).
    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, attempt: Int) async
        -> RetryResult
}

/// A retrier's answer.
public enum RetryResult: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after `delay` seconds.
    case retryWithDelay(TimeInterval)
    /// Don't retry; fail with the original error.
    case doNotRetry
    /// Don't retry; fail with this error instead.
    case doNotRetryWithError(any Error)
}

/// Adapts and retries requests: the pair of protocols `Connect` runs every request through.
public protocol ConnectMiddlewareProtocol: RequestAdapter, RequestRetrier {}

/// The standard middleware: runs its adapters in order, then asks its retriers in order until one
/// answers something other than ``RetryResult/doNotRetry``. With none, it passes requests through
/// untouched and never retries.
///
/// ```swift
/// struct APIKeyAdapter: RequestAdapter {
///     func adapt(_ request: URLRequest) async throws -> URLRequest {
///         var request = request
///         request.setValue("secret", forHTTPHeaderField: "X-API-Key")
///         return request
///     }
/// }
/// let connect = Connect(middleware: ConnectMiddleware(adapters: [APIKeyAdapter()]), errorHandler: ErrorHandler())
/// ```
public final class ConnectMiddleware: ConnectMiddlewareProtocol {
    /// The adapters, run in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public let retriers: [any RequestRetrier]

    /// Creates a middleware from adapters and retriers; both default to none.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// Runs every adapter in order.
    public func adapt(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        for adapter in adapters {
            request = try await adapter.adapt(request)
        }
        return request
    }

    /// The first answer other than ``RetryResult/doNotRetry``, or `doNotRetry`.
    public func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, attempt: Int) async
        -> RetryResult
    {
        for retrier in retriers {
            let result = await retrier.retry(request, dueTo: error, response: response, attempt: attempt)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }
}
