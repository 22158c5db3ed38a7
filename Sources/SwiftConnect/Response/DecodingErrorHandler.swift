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
    private var decoder: JSONDecoder? { box?.coder }
    /// Boxed: Apple's Foundation makes `JSONDecoder` `Sendable` only from macOS 13 and iOS 16.
    private let box: SendableCoder<JSONDecoder>?
    private let fallback: any ErrorHandlerProtocol

    /// Creates a handler decoding `type` with `decoder`, and `fallback` for other bodies.
    ///
    /// - Parameters:
    ///   - type: The error body's type, thrown as the request's error when a body decodes as it.
    ///   - decoder: Decodes error bodies; `nil` (the default) uses the `Connect` configuration's
    ///     `jsonDecoder`, as `decoded(toType:)` does (a plain `JSONDecoder` when ``handle(_:)`` is
    ///     called directly).
    ///   - fallback: Handles the bodies that do not decode as `type`.
    public init(
        _ type: Body.Type, decoder: JSONDecoder? = nil, fallback: any ErrorHandlerProtocol = ErrorHandler()
    ) {
        box = decoder.map(SendableCoder.init)
        self.fallback = fallback
    }

    /// Asks the fallback (only called directly; the pipeline calls ``handle(_:)``).
    public func handle(response: [String: Any]) -> Error? {
        fallback.handle(response: response)
    }

    /// The decoded body, or the fallback's error when the body does not decode.
    public func handle(_ response: Response) -> Error? {
        handle(response, configurationDecoder: decoder ?? JSONDecoder())
    }
}

extension DecodingErrorHandler: ConfigurationDecodingErrorHandler {
    func handle(_ response: Response, configurationDecoder: JSONDecoder) -> Error? {
        if let body = try? (decoder ?? configurationDecoder).decode(Body.self, from: response.data) { return body }
        // A typed fallback decodes with the configuration's decoder too, unless it has its own.
        if let typed = fallback as? ConfigurationDecodingErrorHandler {
            return typed.handle(response, configurationDecoder: configurationDecoder)
        }
        return fallback.handle(response)
    }
}

/// An error handler that decodes with the `Connect` configuration's decoder when it was given
/// none of its own: the pipeline hands it over.
protocol ConfigurationDecodingErrorHandler {
    func handle(_ response: Response, configurationDecoder: JSONDecoder) -> Error?
}
