/// Which middleware a connector's requests go through.
///
/// ```swift
/// var middleware: ConnectorMiddleware {
///     switch self {
///     case .login: return .none          // no token on the login call itself
///     case .upload: return .adding([UploadSigner()])
///     default: return .inherited
///     }
/// }
/// ```
public struct ConnectorMiddleware: Sendable {
    /// Whether the `Connect`'s middleware runs.
    public let usesClientMiddleware: Bool
    /// Middleware run after the client's (or alone).
    public let additional: [any ConnectMiddlewareProtocol]

    /// The `Connect`'s middleware, and nothing else. The default.
    public static let inherited = ConnectorMiddleware(usesClientMiddleware: true, additional: [])

    /// No middleware at all: no adapters, no retries.
    public static let none = ConnectorMiddleware(usesClientMiddleware: false, additional: [])

    /// The `Connect`'s middleware, then `middleware`.
    public static func adding(_ middleware: [any ConnectMiddlewareProtocol]) -> ConnectorMiddleware {
        ConnectorMiddleware(usesClientMiddleware: true, additional: middleware)
    }

    /// Only `middleware`, instead of the `Connect`'s.
    public static func only(_ middleware: [any ConnectMiddlewareProtocol]) -> ConnectorMiddleware {
        ConnectorMiddleware(usesClientMiddleware: false, additional: middleware)
    }

    /// The middleware to run, given the client's.
    func resolved(with client: any ConnectMiddlewareProtocol) -> any ConnectMiddlewareProtocol {
        switch (usesClientMiddleware, additional.isEmpty) {
        case (true, true): return client
        case (true, false): return ConnectMiddleware([client] + additional)
        case (false, _): return ConnectMiddleware(additional)
        }
    }
}
