/// What the demo API answers to an avatar upload.
public struct AvatarReceipt: Decodable, Sendable, Equatable {
    /// Whose avatar it is.
    public let userId: Int
    /// The uploaded file's name.
    public let filename: String
    /// The uploaded file's type.
    public let contentType: String
    /// The uploaded file's size.
    public let bytes: Int
    /// The text fields sent with it.
    public let fields: [String: String]
}
