import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes a request before it is sent: adds a header, signs it, appends an API key, logs it.
///
/// Adapters run on every attempt, so a retried request is adapted afresh (a fresh token).
/// Throwing fails the request with your error, and nothing is sent. The request returned is held to
/// the rules a build enforces (a header with an invalid name or a CR or LF in its value fails the
/// attempt with ``ConnectError/invalidRequest(_:)``; spaces around a value are trimmed). On Linux,
/// `URLRequest.setValue(_:forHTTPHeaderField:)` drops a value with CR or LF without a word, leaving
/// the header unset: check a value you did not write yourself before setting it.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send in place of `request`.
    func adapt(_ request: URLRequest) async throws -> URLRequest
}

/// Decides whether a failed request is sent again.
public protocol RequestRetrier: Sendable {
    /// Returns whether and when to retry `attempt`.
    func retry(_ attempt: FailedAttempt) async -> RetryResult
}

/// Everything known about an attempt that failed, for a ``RequestRetrier``.
public struct FailedAttempt: Sendable {
    /// The request as built from the connector, before adapters (they run again on a retry).
    /// After a ``RetryResult/redirect(to:)``, it has the URL it was redirected to.
    public let request: URLRequest
    /// Why it failed: a ``ConnectError`` (a validator's error arrives as
    /// ``ConnectError/validationFailed(_:underlying:)``), your error handler's error, or what an
    /// adapter or interceptor of yours threw, as it was thrown.
    public let error: any Error
    /// The response, if the server sent one; its `request` is the request as sent.
    public let response: Response?
    /// How many times the request has been sent so far: 1 after the first try.
    public let number: Int
    /// The status of each earlier attempt, oldest first (`nil` where there was no response).
    public let earlierStatusCodes: [Int?]
    /// Whether sending the request again is safe: its method is idempotent (GET, HEAD, PUT,
    /// DELETE, OPTIONS, TRACE, QUERY), unless the connector said otherwise.
    public let isIdempotent: Bool

    /// Creates a description of a failed attempt (for testing retriers).
    public init(
        request: URLRequest, error: any Error, response: Response?, number: Int, isIdempotent: Bool,
        earlierStatusCodes: [Int?] = []
    ) {
        self.request = request
        self.error = error
        self.response = response
        self.number = number
        self.isIdempotent = isIdempotent
        self.earlierStatusCodes = earlierStatusCodes
    }

    /// The HTTP status, if there was a response.
    public var statusCode: Int? { response?.statusCode }

    /// The transport error's `URLError` code, if the request failed without a response: a
    /// `URLError`'s, or an `NSError`'s in `NSURLErrorDomain` (which a transport of your own may
    /// throw, and which on Linux is no `URLError` to `as?`).
    public var urlErrorCode: URLError.Code? {
        if case .transport(let underlying)? = error as? ConnectError { return URLError.code(of: underlying) }
        return URLError.code(of: error)
    }
}

/// A retrier's answer.
public enum RetryResult: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after `delay` seconds.
    case retryWithDelay(TimeInterval)
    /// Send the same request to another URL (the Decree-style error handler's "redirect"). The
    /// adapters run again, but credential headers — theirs included —, credential query items they
    /// add (`api_key`, `access_token`, …) and a user and password in the URL are only ever sent to
    /// the origin the first request went to: the one it was built for, or the one the adapters
    /// moved it to. The query of the URL given here goes as it is. A URL that is not an
    /// absolute `http` or `https` URL with a host fails the request with
    /// ``InvalidRequestReason/unsupportedURL(_:)``, and nothing more is sent.
    case redirect(to: URL)
    /// Don't retry; fail with the original error.
    case doNotRetry
    /// Don't retry; fail with this error instead.
    case doNotRetryWithError(any Error)
}

/// Looks at each response before it is validated: maps an error body to your error, accepts a
/// response the status range would reject, or lets it through (the RestBird post-middleware).
public protocol ResponseInterceptor: Sendable {
    /// Returns what to do with `response`; throwing fails the request with your error.
    func intercept(_ response: Response) async throws -> InterceptorDecision
}

/// What a ``ResponseInterceptor`` decided.
public enum InterceptorDecision: Sendable {
    /// Carry on: status check, error handler, validators.
    case proceed
    /// Treat the response as a success whatever its status (validators still run).
    case accept
}

/// The middleware `Connect` runs every request through: it adapts requests, intercepts
/// responses, and decides retries. Every requirement has a default, so implement only what you
/// need.
public protocol ConnectMiddlewareProtocol: RequestAdapter, RequestRetrier, ResponseInterceptor {}

extension ConnectMiddlewareProtocol {
    /// Returns `request` unchanged.
    public func adapt(_ request: URLRequest) async throws -> URLRequest { request }
    /// Never retries.
    public func retry(_ attempt: FailedAttempt) async -> RetryResult { .doNotRetry }
    /// Lets every response through.
    public func intercept(_ response: Response) async throws -> InterceptorDecision { .proceed }
}

/// The standard middleware: a list of adapters run in order, interceptors asked in order until one
/// accepts, and retriers asked in order until one answers something other than
/// ``RetryResult/doNotRetry``. With none, it passes requests through and never retries.
///
/// Middlewares compose: pass other middlewares (a ``TokenAuthenticator``, a ``RetryPolicy``
/// wrapped with `retriers:`) and they run in the order given.
public final class ConnectMiddleware: ConnectMiddlewareProtocol {
    /// The adapters, run in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public let retriers: [any RequestRetrier]
    /// The interceptors, asked in order.
    public let interceptors: [any ResponseInterceptor]

    /// Creates a middleware from adapters, retriers and interceptors; each defaults to none.
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any ResponseInterceptor] = []
    ) {
        self.adapters = adapters
        self.retriers = retriers
        self.interceptors = interceptors
    }

    /// Creates a middleware that runs each of `middlewares` in order: all their adapters, then
    /// their interceptors and retriers in the same order.
    public convenience init(_ middlewares: [any ConnectMiddlewareProtocol]) {
        self.init(adapters: middlewares, retriers: middlewares, interceptors: middlewares)
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
    public func retry(_ attempt: FailedAttempt) async -> RetryResult {
        for retrier in retriers {
            let result = await retrier.retry(attempt)
            if case .doNotRetry = result { continue }
            return result
        }
        return .doNotRetry
    }

    /// `.accept` if any interceptor accepts; the first error thrown fails the request.
    public func intercept(_ response: Response) async throws -> InterceptorDecision {
        for interceptor in interceptors {
            if case .accept = try await interceptor.intercept(response) { return .accept }
        }
        return .proceed
    }
}

/// Middleware that sends credentials under header names of its own choosing, which a name alone
/// would not mark as credentials (`X-Access`): they get the protection of `Authorization` — never
/// sent to another origin, redacted in debug output.
protocol CredentialHeaderNaming {
    /// The names, lowercased.
    var credentialHeaderNames: Set<String> { get }
}

extension ConnectMiddleware: CredentialHeaderNaming {
    /// Those of the adapters that name any (a ``TokenAuthenticator`` among them).
    var credentialHeaderNames: Set<String> {
        var names: Set<String> = []
        for case let naming as CredentialHeaderNaming in adapters { names.formUnion(naming.credentialHeaderNames) }
        return names
    }
}

/// An adapter made from a closure: a pre-middleware for logging or signing.
///
/// ```swift
/// let logging = ClosureAdapter { request in
///     print("→", request.httpMethod ?? "", request.url?.absoluteString ?? "")
///     return request
/// }
/// ```
public struct ClosureAdapter: RequestAdapter {
    private let body: @Sendable (URLRequest) async throws -> URLRequest

    /// Creates an adapter that runs `body`.
    public init(_ body: @escaping @Sendable (URLRequest) async throws -> URLRequest) {
        self.body = body
    }

    /// Runs the closure.
    public func adapt(_ request: URLRequest) async throws -> URLRequest {
        try await body(request)
    }
}

/// An interceptor made from a closure: a post-middleware.
public struct ClosureInterceptor: ResponseInterceptor {
    private let body: @Sendable (Response) async throws -> InterceptorDecision

    /// Creates an interceptor that runs `body`.
    public init(_ body: @escaping @Sendable (Response) async throws -> InterceptorDecision) {
        self.body = body
    }

    /// Runs the closure.
    public func intercept(_ response: Response) async throws -> InterceptorDecision {
        try await body(response)
    }
}

/// A retrier made from a closure.
public struct ClosureRetrier: RequestRetrier {
    private let body: @Sendable (FailedAttempt) async -> RetryResult

    /// Creates a retrier that runs `body`.
    public init(_ body: @escaping @Sendable (FailedAttempt) async -> RetryResult) {
        self.body = body
    }

    /// Runs the closure.
    public func retry(_ attempt: FailedAttempt) async -> RetryResult {
        await body(attempt)
    }
}
