/// What logging in or refreshing answers.
public struct Tokens: Decodable, Sendable {
    /// Sent as `Authorization: Bearer …` with every API call.
    public let accessToken: String
    /// Gets the next access token, once.
    public let refreshToken: String
    /// How long the access token lives, in seconds.
    public let expiresIn: Double
    /// Who logged in.
    public let userId: Int
}
