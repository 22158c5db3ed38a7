/// A connector whose calls may need credentials.
///
/// Return a token for authenticated routes and `nil` for public ones; the library sets the
/// header, so nothing is hard-coded in `headers`:
///
/// ```swift
/// extension TodoConnector: AuthorizedConnector {
///     var authorizationToken: AuthorizationToken? { .bearer(token: Session.token) }
/// }
/// ```
///
/// It refines `SendableMetatype`, as ``Connector`` does, so that a type conforming in a module
/// whose default isolation is the main actor stays nonisolated.
public protocol AuthorizedConnector: SendableMetatype {
    /// The credentials to send, or `nil` for an unauthenticated call.
    var authorizationToken: AuthorizationToken? { get }
}

/// Credentials an ``AuthorizedConnector`` sends.
public enum AuthorizationToken: Hashable, Sendable {
    /// `Authorization: Bearer <token>`. An empty token (or one of spaces) fails the build with
    /// ``InvalidRequestReason/emptyToken``, as an empty `.custom` token or `.header` value does;
    /// one with a space or tab inside (a `Bearer ` of its own in front, say) with
    /// ``InvalidRequestReason/invalidBearerToken``.
    case bearer(token: String)
    /// `Authorization: Basic <base64(username:password)>`. A username with a colon fails the
    /// build with ``InvalidRequestReason/invalidBasicUsername``: the server would split it there.
    /// An empty username with an empty password fails with ``InvalidRequestReason/emptyToken``;
    /// either alone may be empty (an API key sent as the username, say).
    case basic(username: String, password: String)
    /// `Authorization: <token>`, the value sent as given.
    case custom(token: String)
    /// A header of the API's own, e.g. `X-API-Key: <value>`.
    case header(name: String, value: String)

    /// The header carrying these credentials, as a request sends it (a bearer token without the
    /// spaces around it).
    public var header: HTTPHeader {
        switch self {
        case .bearer(let token): return .authorization(bearerToken: HTTPHeader.trimmed(token))
        case .basic(let username, let password): return .authorization(username: username, password: password)
        case .custom(let token): return .authorization(token)
        case .header(let name, let value): return HTTPHeader(name: name, value: value)
        }
    }
}
