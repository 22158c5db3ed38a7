import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whether and how `Connect` follows redirects.
///
/// ```swift
/// configuration.redirectPolicy = .doNotFollow
/// configuration.redirectPolicy = .decide { redirect in
///     redirect.proposedRequest.url?.host == "cdn.example.com" ? .follow : .stop
/// }
/// ```
///
/// Whatever the policy, a followed redirect obeys the safety rules: `303` (and `POST` on
/// `301`/`302`) becomes `GET` without a body (a `HEAD` stays `HEAD`), `307`/`308` keep method
/// and body, and credential headers never go to another origin. A redirect that is not followed
/// comes back as the response.
public struct RedirectPolicy: Sendable {
    enum Kind: Sendable {
        case follow
        case doNotFollow
        case decide(@Sendable (Redirect) async -> RedirectDecision)
    }

    let kind: Kind
    /// Redirects followed in a row before failing with ``ConnectError/tooManyRedirects(_:)``.
    public let maximumHops: Int

    /// Follows up to ten redirects in a row. The default.
    public static let follow = RedirectPolicy(kind: .follow, maximumHops: 10)

    /// Follows up to `maximumHops` redirects in a row; one more fails the request with
    /// ``ConnectError/tooManyRedirects(_:)``. With `0` or less, any redirect fails so (to get the
    /// `3xx` as the response, use ``doNotFollow``). The count is yours: nothing caps it further,
    /// so a large one follows a redirect loop until the request is cancelled or times out.
    public static func follow(maximumHops: Int) -> RedirectPolicy {
        RedirectPolicy(kind: .follow, maximumHops: maximumHops)
    }

    /// Never follows: the `3xx` response is the result (and, outside the acceptable statuses,
    /// goes to the error handler).
    public static let doNotFollow = RedirectPolicy(kind: .doNotFollow, maximumHops: 0)

    /// Asks `decide` about each redirect, up to `maximumHops` in a row.
    public static func decide(
        maximumHops: Int = 10, _ decide: @escaping @Sendable (Redirect) async -> RedirectDecision
    ) -> RedirectPolicy {
        RedirectPolicy(kind: .decide(decide), maximumHops: maximumHops)
    }
}

/// A redirect about to be followed, for ``RedirectPolicy/decide(maximumHops:_:)``.
public struct Redirect: Sendable {
    /// The redirect response.
    public let response: Response
    /// The request that would be sent next, the safety rules already applied.
    public let proposedRequest: URLRequest
    /// Which redirect in a row this is, from 1.
    public let hop: Int

    /// Creates a redirect — to call a ``RedirectPolicy/decide(maximumHops:_:)`` closure of your
    /// own in a test. `Connect` makes the redirects it asks about itself.
    public init(response: Response, proposedRequest: URLRequest, hop: Int) {
        self.response = response
        self.proposedRequest = proposedRequest
        self.hop = hop
    }
}

/// What to do with a redirect.
public enum RedirectDecision: Sendable {
    /// Send the proposed request.
    case follow
    /// Send this request instead, as it is — except that credential headers (`Authorization`,
    /// `Cookie`, `Proxy-Authorization`, API keys, …) and a user and password in its URL are
    /// removed when it goes to another origin than the first request went to (the one it was built
    /// for, or the one the adapters moved it to). A request
    /// the build would refuse (a URL that is not an absolute `http` or `https` URL with a host, an
    /// invalid or body-framing header, a NaN, zero or negative timeout, a method that is not a
    /// token, a body on GET or HEAD) fails with ``ConnectError/invalidRequest(_:)`` instead.
    case followWith(URLRequest)
    /// Don't follow; the redirect response is the result.
    case stop
}
