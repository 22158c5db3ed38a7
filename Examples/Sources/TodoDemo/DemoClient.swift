import Foundation
import SwiftConnect
import Synchronization

/// The app's connection to the demo API: a `Connect` whose requests carry the current access token,
/// refreshed when it expires.
public final class DemoClient: Sendable {
    /// Sends the API calls, each with the access token.
    public let connect: Connect
    /// Holds the access token and refreshes it: once, however many requests find it expired.
    public let authenticator: TokenAuthenticator
    private let refresher: SessionRefresher
    private let debugResponse: Bool

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - configuration: The `Connect` configuration (logger, callback queue, …).
    ///   - interceptors: Middleware that looks at every response before the error handler does.
    ///   - debugResponse: Logs every request as cURL and every response.
    public init(
        configuration: ConnectConfiguration = ConnectConfiguration(),
        interceptors: [any ResponseInterceptor] = [],
        debugResponse: Bool = false
    ) {
        refresher = SessionRefresher(
            connect: Connect(configuration: configuration), debugResponse: debugResponse)
        authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        connect = Connect(
            middleware: ConnectMiddleware([authenticator, ConnectMiddleware(interceptors: interceptors)]),
            errorHandler: ErrorHandler(),
            configuration: configuration
        )
        self.debugResponse = debugResponse
    }

    /// Logs in; later requests carry the access token.
    ///
    /// - Throws: `ConnectError.unacceptableStatus` with the server's message on a wrong password.
    public func logIn(username: String, password: String) async throws -> Tokens {
        let tokens = try await connect.request(
            AuthConnector.login(username: username, password: password), debugResponse: debugResponse
        )
        .decoded(toType: Tokens.self)
        .value
        refresher.remember(tokens)
        await authenticator.setToken(tokens.access)
        return tokens
    }
}

/// Gets a new access token with the refresh token of the last login or refresh.
final class SessionRefresher: TokenRefresher {
    private let connect: Connect
    private let debugResponse: Bool
    private let refreshToken = Mutex<String?>(nil)

    init(connect: Connect, debugResponse: Bool) {
        self.connect = connect
        self.debugResponse = debugResponse
    }

    func remember(_ tokens: Tokens) {
        refreshToken.withLock { $0 = tokens.refreshToken }
    }

    func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken {
        guard let refreshToken = refreshToken.withLock({ $0 }) else { throw NotLoggedIn() }
        let tokens = try await connect.request(
            AuthConnector.refresh(refreshToken: refreshToken), debugResponse: debugResponse
        )
        .decoded(toType: Tokens.self)
        .value
        remember(tokens)
        return tokens.access
    }
}

/// A request needed an access token before anybody logged in.
public struct NotLoggedIn: Error, CustomStringConvertible {
    /// A readable explanation.
    public var description: String { "Not logged in" }
}

extension Tokens {
    /// The access token and when it expires.
    var access: AccessToken {
        AccessToken(accessToken, expiresAt: Date().addingTimeInterval(expiresIn))
    }
}
