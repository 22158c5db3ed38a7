import Foundation
import SwiftConnect

/// The demo API's debug routes.
enum DebugConnector: Connector {
    /// Makes every access token expire now, as if time had passed.
    case expireTokens

    var baseURL: URL { DemoAPI.baseURL }
    var endpoint: String { "/debug/expire-tokens" }
    var method: HTTPMethod { .post }
    var middleware: ConnectorMiddleware { .none }
}
