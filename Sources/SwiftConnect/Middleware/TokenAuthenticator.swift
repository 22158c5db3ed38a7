import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An access token and, if known, when it expires.
public struct AccessToken: Hashable, Sendable {
    /// The token itself, e.g. a JWT.
    public let value: String
    /// When it stops working, if the server said.
    public let expiresAt: Date?

    /// Creates a token.
    public init(_ value: String, expiresAt: Date? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }

    /// Whether the token has expired, or will within `leeway` seconds of `date`.
    public func isExpired(at date: Date, leeway: TimeInterval = 0) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(date) <= leeway
    }
}

/// Gets a new access token: from a refresh token, by logging in again, from the keychain …
public protocol TokenRefresher: Sendable {
    /// Returns a fresh token. `expired` is the token that stopped working, `nil` when there was none.
    func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken
}

/// Bearer authentication with token refresh: the Backchat "token hook" and a refresher in one
/// middleware.
///
/// Each request is sent with the current token. A token known to have expired is refreshed before
/// sending. When requests come back `401`, **one** refresh runs however many requests failed at
/// once; the others wait for it and are all retried with the new token. If the refresh fails, they
/// all fail with its error. At most `maximumRefreshes` refreshes run per `refreshWindow`, so a
/// server that keeps answering `401` cannot cause a refresh loop: past the limit, the `401` is
/// returned as it is.
///
/// ```swift
/// let authenticator = TokenAuthenticator(token: AccessToken("initial")) { expired in
///     try await refreshSession(replacing: expired)
/// }
/// let connect = Connect(middleware: authenticator, errorHandler: ErrorHandler())
/// ```
///
/// Connectors whose calls must go without a token (the login itself) opt out with
/// `var middleware: ConnectorMiddleware { .none }`; an `authorizationToken` of `nil` does not. A
/// connector that sets the token's header itself — its own `authorizationToken` — is sent with
/// its own credentials (``adapt(_:)``).
public final class TokenAuthenticator: ConnectMiddlewareProtocol {
    private let store: TokenStore
    private let header: @Sendable (AccessToken) -> HTTPHeader
    /// The name of the header `header` makes, lowercased.
    private let headerName: String
    private let leeway: TimeInterval
    private let retriesPerRequest: Int
    private let now: @Sendable () -> Date

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - token: The token to start with; `nil` asks the refresher for one on the first request.
    ///   - refresher: Gets new tokens.
    ///   - header: The header carrying a token; `Authorization: Bearer <token>` by default. Whatever
    ///     its name, it is a credential: never sent to another origin, redacted in debug output.
    ///   - leeway: A token expiring within this many seconds is refreshed before sending.
    ///   - maximumRefreshes: Refreshes allowed per `refreshWindow`.
    ///   - refreshWindow: The window, in seconds, over which refreshes are counted.
    ///   - retriesPerRequest: How many times one request is re-sent after a refresh.
    ///   - now: The current date (replace it in tests).
    public init(
        token: AccessToken? = nil,
        refresher: any TokenRefresher,
        header: @escaping @Sendable (AccessToken) -> HTTPHeader = { .authorization(bearerToken: $0.value) },
        leeway: TimeInterval = 10,
        maximumRefreshes: Int = 3,
        refreshWindow: TimeInterval = 60,
        retriesPerRequest: Int = 1,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        store = TokenStore(
            token: token, refresher: refresher, maximumRefreshes: maximumRefreshes, window: refreshWindow, now: now)
        self.header = header
        headerName = header(AccessToken("")).name.lowercased()
        self.leeway = leeway
        self.retriesPerRequest = retriesPerRequest
        self.now = now
    }

    /// Creates an authenticator whose refresher is a closure.
    ///
    /// - Parameters:
    ///   - token: The token to start with; `nil` asks `refresh` for one on the first request.
    ///   - header: The header carrying a token; `Authorization: Bearer <token>` by default. Whatever
    ///     its name, it is a credential: never sent to another origin, redacted in debug output.
    ///   - leeway: A token expiring within this many seconds is refreshed before sending.
    ///   - maximumRefreshes: Refreshes allowed per `refreshWindow`.
    ///   - refreshWindow: The window, in seconds, over which refreshes are counted.
    ///   - retriesPerRequest: How many times one request is re-sent after a refresh.
    ///   - refresh: Gets a new token, given the one it replaces (`nil` for the first).
    public convenience init(
        token: AccessToken? = nil,
        header: @escaping @Sendable (AccessToken) -> HTTPHeader = { .authorization(bearerToken: $0.value) },
        leeway: TimeInterval = 10,
        maximumRefreshes: Int = 3,
        refreshWindow: TimeInterval = 60,
        retriesPerRequest: Int = 1,
        refresh: @escaping @Sendable (AccessToken?) async throws -> AccessToken
    ) {
        self.init(
            token: token, refresher: ClosureTokenRefresher(refresh: refresh), header: header, leeway: leeway,
            maximumRefreshes: maximumRefreshes, refreshWindow: refreshWindow, retriesPerRequest: retriesPerRequest)
    }

    /// The current token.
    public var token: AccessToken? {
        get async { await store.token }
    }

    /// Replaces the token, e.g. after logging in or out.
    ///
    /// A refresh running meanwhile does not overwrite it, and the requests waiting on that refresh
    /// send the token set; with `nil` (logging out), they fail with ``TokenRefreshCancelled``
    /// instead of sending the refreshed token, or one set or refreshed after the logout (the next
    /// session's). Requests made after this call do not wait for that
    /// refresh: they send the token set, or, with `nil`, refresh for a token of their own.
    public func setToken(_ token: AccessToken?) async {
        await store.setToken(token)
    }

    /// How many refreshes have run.
    public var refreshCount: Int {
        get async { await store.refreshCount }
    }

    /// Sets the token header, refreshing first if the token is missing or about to expire.
    ///
    /// A request whose connector sets that header itself — its own `authorizationToken` (a
    /// `.basic` login, say), or the header in its `headers` — goes as it is: its credentials are
    /// the connector's choice, and no refresh runs for it. Headers from elsewhere (the
    /// configuration's `defaultHeaders`, the session's, the connector's parameters, an adapter
    /// before this one) are replaced. Called outside a `Connect` (directly, in a test), it sets the
    /// header whatever the request carries.
    ///
    /// A token in an `Authorization: Bearer` header (the default) is sent without the spaces around
    /// it, and checked as ``AuthorizationToken/bearer(token:)`` is.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)`` with ``InvalidRequestReason/invalidHeader(name:)``
    ///   for a token with CR, LF or another control character, which the header cannot carry; for a
    ///   bearer token, ``InvalidRequestReason/emptyToken`` if it is empty and
    ///   ``InvalidRequestReason/invalidBearerToken`` if it has a space or tab inside (a `Bearer ` of
    ///   its own, say).
    public func adapt(_ request: URLRequest) async throws -> URLRequest {
        if ConnectorHeaders.names.contains(headerName) { return request }
        let token = try await store.validToken(leeway: leeway)
        var request = request
        // A token comes from a server's reply; `setValue` would drop one with CR or LF silently.
        // Refused, it is refreshed before the next request rather than refused again and again
        // (nothing is sent, so no `401` would ever ask for a refresh).
        let header: HTTPHeader
        do {
            header = try Self.checked(self.header(token))
        } catch {
            await store.discard(token)
            throw error
        }
        request.setValue(header.value, forHTTPHeaderField: header.name)
        return request
    }

    /// `header`, refused if it cannot be sent; a bearer token in it is checked and trimmed as a
    /// build does ``AuthorizationToken/bearer(token:)``'s.
    private static func checked(_ header: HTTPHeader) throws -> HTTPHeader {
        var checked = header
        if HTTPHeaders.namesMatch(header.name, "Authorization"), header.value.hasPrefix("Bearer ") {
            checked = try HTTPHeader.checkedBearer(String(header.value.dropFirst("Bearer ".count)))
        }
        guard checked.isValid else { throw ConnectError.invalidRequest(.invalidHeader(name: header.name)) }
        return checked
    }

    /// On a `401`, refreshes (once for all requests rejected with the same token) and retries.
    ///
    /// Only a `401` that rejected the token: one from a redirect's hop that the token never reached
    /// (another origin) is not retried, nor one for a request that came with credentials of its
    /// own (``adapt(_:)``). Nor is a request that is not idempotent when the `401`
    /// answered another request than the one sent — the `GET` a `303` turned a `POST` into, or a
    /// hop to another origin: the server may have acted on the request already.
    public func retry(_ attempt: FailedAttempt) async -> RetryResult {
        let refreshRetries = attempt.earlierStatusCodes.filter { $0 == 401 }.count
        guard attempt.statusCode == 401, refreshRetries < retriesPerRequest, let response = attempt.response,
            !ConnectorHeaders.names.contains(headerName),
            let rejected = response.request.value(forHTTPHeaderField: headerName)
        else {
            return .doNotRetry
        }
        let answered = response.request
        if !attempt.isIdempotent,
            answered.httpMethod != attempt.request.httpMethod
                || !RedirectSafety.isSameOrigin(answered.url, attempt.request.url)
        {
            return .doNotRetry
        }
        do {
            let renewed = try await store.token(afterRejecting: rejected) { self.header($0).value }
            return renewed == nil ? .doNotRetry : .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }
}

/// Holds the token and runs at most one refresh at a time.
private actor TokenStore {
    private(set) var token: AccessToken?
    private(set) var refreshCount = 0
    /// The refresh running, and the `generation` it started in; after a `setToken`, the older
    /// refresh until a newer one starts.
    private var refreshing: (task: Task<AccessToken, any Error>, generation: Int)?
    private var recentRefreshes: [Date] = []
    /// Bumped by `setToken`, so a refresh that started before it does not overwrite it.
    private var generation = 0
    /// The `generation` the last `setToken(nil)` (logging out) began: a refresh that started
    /// before it brings its waiters no token, not even one a later login set.
    private var loggedOutGeneration = -1
    /// The last failed refresh: requests rejected with the same token just after it fail with its
    /// error instead of starting another refresh.
    private var lastFailure: (replacing: AccessToken?, error: any Error, at: Date)?
    /// A token the header could not carry (``discard(_:)``), refreshed before it is used again.
    private var unusable: AccessToken?
    /// How long a failed refresh answers for the token it tried to replace.
    private let failureGrace: TimeInterval = 2
    private let refresher: any TokenRefresher
    private let maximumRefreshes: Int
    private let window: TimeInterval
    private let now: @Sendable () -> Date

    init(
        token: AccessToken?, refresher: any TokenRefresher, maximumRefreshes: Int, window: TimeInterval,
        now: @escaping @Sendable () -> Date
    ) {
        self.token = token
        self.refresher = refresher
        self.maximumRefreshes = maximumRefreshes
        self.window = window
        self.now = now
    }

    func setToken(_ token: AccessToken?) {
        self.token = token
        generation += 1
        if token == nil { loggedOutGeneration = generation }
        lastFailure = nil
    }

    /// Takes `rejected` for expired if it is still the current token: the next request refreshes
    /// it (the refresher is told it replaces `rejected`).
    func discard(_ rejected: AccessToken) {
        if token == rejected { unusable = rejected }
    }

    /// The refresh a request needing a token waits for: the one running, unless `setToken` was
    /// called since it started. That refresh can only bring the token set (``result(of:)``), which
    /// is there already: a request made after `setToken` does not wait for it.
    private var currentRefresh: (task: Task<AccessToken, any Error>, generation: Int)? {
        guard let refreshing, refreshing.generation == generation else { return nil }
        return refreshing
    }

    /// A token fit to send: the current one, or a refreshed one if it is missing, expiring or
    /// discarded.
    func validToken(leeway: TimeInterval) async throws -> AccessToken {
        if let refreshing = currentRefresh { return try await result(of: refreshing) }
        if let token = usableToken(leeway: leeway) { return token }
        if let renewed = try await refresh() { return renewed }
        // The refresh limit is reached. A token within its leeway has not expired yet: send it
        // rather than nothing.
        if let token = usableToken(leeway: 0) { return token }
        throw TokenRefreshLimitReached()
    }

    /// The current token, unless it is missing, discarded, or expires within `leeway`.
    private func usableToken(leeway: TimeInterval) -> AccessToken? {
        guard let token, token != unusable, !token.isExpired(at: now(), leeway: leeway) else { return nil }
        return token
    }

    /// What a request waiting on `refreshing` sends: the refreshed token, unless `setToken` was
    /// called while the refresh ran (``tokenSet(since:)``).
    private func result(of refreshing: (task: Task<AccessToken, any Error>, generation: Int)) async throws
        -> AccessToken
    {
        let outcome = await refreshing.task.result
        if generation != refreshing.generation { return try tokenSet(since: refreshing.generation) }
        return try outcome.get()
    }

    /// What the requests waiting on a refresh send when `setToken` was called while it ran: the
    /// token set, which wins over the refresh's token or error (the refresh does not overwrite
    /// it). `setToken(nil)` — logging out — fails them with ``TokenRefreshCancelled``: the
    /// refreshed token belongs to the session logged out of, and is neither sent nor kept; nor is
    /// a token set or refreshed after the logout, which belongs to a session of its own.
    /// `started`: the generation the refresh started in.
    private func tokenSet(since started: Int) throws -> AccessToken {
        guard let token, loggedOutGeneration <= started else {
            throw TokenRefreshCancelled(underlying: CancellationError())
        }
        return token
    }

    /// The token to retry with after the server rejected `rejectedValue`: the current one if
    /// somebody already refreshed, else a refreshed one; `nil` when the refresh limit is reached.
    func token(afterRejecting rejectedValue: String?, headerValue: (AccessToken) -> String) async throws
        -> AccessToken?
    {
        if let refreshing = currentRefresh { return try await result(of: refreshing) }
        if let token, headerValue(token) != rejectedValue { return token }
        return try await refresh()
    }

    private func refresh() async throws -> AccessToken? {
        let current = now()
        if let failure = lastFailure, failure.replacing == token, current.timeIntervalSince(failure.at) < failureGrace {
            throw failure.error
        }
        recentRefreshes.removeAll { current.timeIntervalSince($0) >= window }
        guard recentRefreshes.count < maximumRefreshes else { return nil }
        recentRefreshes.append(current)
        refreshCount += 1
        let expired = token
        let startedGeneration = generation
        let refresher = self.refresher
        let task = Task {
            do {
                return try await refresher.refreshToken(replacing: expired)
            } catch {
                // A refresh cancelled — its login request caught by `cancelAllRequests()`, say — says
                // nothing about the token: the next request tries again. Its error must not pass for
                // the cancellation of the requests waiting on it, which nobody cancelled: each of
                // them, this one's and those awaiting `refreshing`, gets the same error.
                if ConnectError.isCancellation(error) { throw TokenRefreshCancelled(underlying: error) }
                throw error
            }
        }
        refreshing = (task, startedGeneration)
        // A refresh started after a `setToken` that came during this one has taken its place.
        defer { if refreshing?.generation == startedGeneration { refreshing = nil } }
        let outcome = await task.result
        if generation != startedGeneration { return try tokenSet(since: startedGeneration) }
        do {
            let renewed = try outcome.get()
            token = renewed
            lastFailure = nil
            return renewed
        } catch {
            // A cancelled refresh is not remembered: the next request tries again.
            if !(error is TokenRefreshCancelled) { lastFailure = (expired, error, now()) }
            throw error
        }
    }
}

/// Thrown to the requests waiting for a token refresh that was cancelled — the refresher's own
/// request caught by ``Connect/cancelAllRequests()``, for instance — rather than the cancellation
/// itself: those requests were not cancelled. Also thrown to them when
/// ``TokenAuthenticator/setToken(_:)`` set no token (logging out) while the refresh ran: the
/// refreshed token is neither sent nor kept. The next request that needs a token refreshes again.
public struct TokenRefreshCancelled: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What the refresher threw: ``ConnectError/cancelled``, a `CancellationError` or a cancelled
    /// `URLError`; a `CancellationError` when logging out ended the refresh.
    public let underlying: any Error

    /// Creates the error with what the refresher threw — to test code of your own that handles it.
    public init(underlying: any Error) {
        self.underlying = underlying
    }

    /// A readable explanation.
    public var description: String { "The access token could not be refreshed: the refresh was cancelled" }

    /// Same as ``description``, also as `localizedDescription`.
    public var errorDescription: String? { description }
}

/// Thrown when a token is needed before sending but the refresh limit has been reached.
public struct TokenRefreshLimitReached: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// Creates the error — to test code of your own that handles it.
    public init() {}

    /// A readable explanation.
    public var description: String { "The access token could not be refreshed: too many refreshes in a short time" }

    /// Same as ``description``, also as `localizedDescription`.
    public var errorDescription: String? { description }
}

private struct ClosureTokenRefresher: TokenRefresher {
    let refresh: @Sendable (AccessToken?) async throws -> AccessToken

    func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken {
        try await refresh(expired)
    }
}

extension TokenAuthenticator: CredentialHeaderNaming {
    /// The header the token goes in, whatever it is called (`header:`).
    var credentialHeaderNames: Set<String> { [headerName] }
}
