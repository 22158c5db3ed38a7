import Foundation
import SwiftConnect

/// Logging in and refreshing the access token. These calls carry no access token themselves.
enum AuthConnector: Connector {
    case login(username: String, password: String)
    case refresh(refreshToken: String)

    var baseURL: URL { DemoAPI.baseURL }

    var endpoint: String {
        switch self {
        case .login: return "/auth/login"
        case .refresh: return "/auth/refresh"
        }
    }

    var method: HTTPMethod { .post }

    var middleware: ConnectorMiddleware { .none }  // no token on the calls that get one

    var parameters: ParametersRepresentable? {
        switch self {
        case .login(let username, let password):
            return Parameter.jsonObject(value: ["username": username, "password": password])
        case .refresh(let refreshToken):
            return CompositeParameters(
                .form(key: "grant_type", value: "refresh_token"),
                .form(key: "refresh_token", value: refreshToken)
            )
        }
    }
}
