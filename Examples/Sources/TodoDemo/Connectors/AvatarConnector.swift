import Foundation
import SwiftConnect

/// A user's avatar: uploaded as `multipart/form-data`, a file `avatar` and text fields.
enum AvatarConnector: Connector {
    case upload(userId: Int)

    var baseURL: URL { DemoAPI.baseURL }

    var endpoint: String {
        switch self {
        case .upload: return "/users/{userId}/avatar"
        }
    }

    var method: HTTPMethod { .post }

    var parameters: ParametersRepresentable? {
        switch self {
        case .upload(let userId): return Parameter.path(key: "userId", value: "\(userId)")
        }
    }
}
