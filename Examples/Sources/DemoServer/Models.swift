import Hummingbird

/// A todo, as the API sends it.
struct TodoItem: Codable, Sendable, ResponseEncodable {
    let userId: Int
    let id: Int
    var title: String
    var completed: Bool
}

/// The body of `POST /todos`.
struct NewTodoBody: Decodable, Sendable {
    let title: String
    let completed: Bool?
}

/// The body of `PUT /users/{userId}/todos/{todoId}`: what to change.
struct TodoChangesBody: Decodable, Sendable {
    let title: String?
    let completed: Bool?
}

/// The body of `POST /auth/login`.
struct LoginBody: Decodable, Sendable {
    let username: String
    let password: String
}

/// The form of `POST /auth/refresh`.
struct RefreshForm: Decodable, Sendable {
    let grantType: String
    let refreshToken: String

    enum CodingKeys: String, CodingKey {
        case grantType = "grant_type"
        case refreshToken = "refresh_token"
    }
}

/// What login and refresh answer.
struct TokenReply: Encodable, Sendable, ResponseEncodable {
    let accessToken: String
    let refreshToken: String
    let tokenType: String
    let expiresIn: Double
    let userId: Int
}

/// What `POST /users/{userId}/avatar` answers.
struct AvatarReceipt: Encodable, Sendable, ResponseEncodable {
    let userId: Int
    let filename: String
    let contentType: String
    let bytes: Int
    let fields: [String: String]
}
