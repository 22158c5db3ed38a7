import Foundation

/// A `Decodable` that tells where it is decoded: decoding it calls the closure of the decoder that
/// ``decoder(calling:)`` made, on the decoding thread, and reads nothing from the body.
struct DecodingProbe: Decodable, Sendable {
    private static let record = CodingUserInfoKey(rawValue: "DecodingProbe.record")!

    /// A decoder that calls `body` each time it decodes a `DecodingProbe`.
    static func decoder(calling body: @escaping @Sendable () -> Void) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[record] = body
        return decoder
    }

    init(from decoder: any Decoder) throws {
        (decoder.userInfo[Self.record] as? @Sendable () -> Void)?()
    }
}
