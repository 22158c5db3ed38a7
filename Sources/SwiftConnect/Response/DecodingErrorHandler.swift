import Foundation

/// An error handler that decodes error bodies into your own error type — the typed error
/// response of Decree.
///
/// ```swift
/// struct APIFailure: Decodable, Error {
///     let message: String
///     let code: Int
/// }
/// let connect = Connect(errorHandler: DecodingErrorHandler(APIFailure.self))
/// ```
///
/// The decoded value is the error observers receive. A body that does not decode goes to
/// `fallback` (the default ``ErrorHandler``), so the status and body are never lost.
public struct DecodingErrorHandler<Body: Decodable & Error>: ErrorHandlerProtocol {
    private let decoder: JSONDecoder
    private let fallback: any ErrorHandlerProtocol

    /// Creates a handler decoding `type` with `decoder`, and `fallback` for other bodies.
    public init(
        _ type: Body.Type, decoder: JSONDecoder = JSONDecoder(), fallback: any ErrorHandlerProtocol = ErrorHandler()
    ) {
        self.decoder = decoder
        self.fallback = fallback
    }

    /// Asks the fallback (only called directly; the pipeline calls ``handle(_:)``).
    public func handle(response: [String: Any]) -> Error? {
        fallback.handle(response: response)
    }

    /// The decoded body, or the fallback's error when the body does not decode.
    public func handle(_ response: Response) -> Error? {
        (try? decoder.decode(Body.self, from: response.data)) ?? fallback.handle(response)
    }
}
