import Foundation
import SwiftConnect

/// A user's avatar, sent with `Connect.upload` as `multipart/form-data`: the image under the key
/// `avatar`, and a text field `caption`.
enum AvatarConnector: Connector {
    case upload(userId: Int, caption: String)

    var baseURL: URL { DemoAPI.baseURL }

    var endpoint: String {
        switch self {
        case .upload: return "/users/{userId}/avatar"
        }
    }

    var method: HTTPMethod { .post }

    var parameters: ParametersRepresentable? {
        switch self {
        case .upload(let userId, let caption):
            return CompositeParameters(
                .path(key: "userId", value: "\(userId)"),
                .form(key: "caption", value: caption)
            )
        }
    }
}
