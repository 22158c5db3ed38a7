import Foundation

/// Checks a successful response before it is delivered; throwing fails the request with
/// ``ConnectError/validationFailed(_:underlying:)``.
///
/// Set service-wide validators in ``ConnectConfiguration/validators``; a connector can replace
/// them with its own `validators`.
///
/// ```swift
/// configuration.validators = [
///     .requiredJSONKeys(["status", "data.id"]),
///     .basicResponse(ServiceEnvelope.self) { envelope in
///         guard envelope.status == "ok" else { throw ServiceError.status(envelope.status) }
///     },
/// ]
/// ```
public struct ResponseValidator: Sendable {
    /// The check, given the response and the decoder for JSON: the `Connect` configuration's when
    /// a request runs it.
    private let check: @Sendable (Response, JSONDecoder) throws -> Void

    /// A validator over the whole response.
    public init(_ check: @escaping @Sendable (Response) throws -> Void) {
        self.check = { response, _ in try check(response) }
    }

    private init(decoding check: @escaping @Sendable (Response, JSONDecoder) throws -> Void) {
        self.check = check
    }

    /// Runs the check; a ``basicResponse(_:decoder:validate:)`` given no decoder decodes with a
    /// plain `JSONDecoder`.
    public func validate(_ response: Response) throws {
        try check(response, JSONDecoder())
    }

    /// Runs the check as a request does: JSON is decoded with `decoder`, the configuration's,
    /// unless the validator was given its own.
    func validate(_ response: Response, decoder: JSONDecoder) throws {
        try check(response, decoder)
    }

    /// A validator over the body alone (the Backchat response data validator).
    public static func data(_ check: @escaping @Sendable (Data) throws -> Void) -> ResponseValidator {
        ResponseValidator { try check($0.data) }
    }

    /// Requires each key — or dot-separated key path, such as `data.id` or `items.0.id` (a number
    /// indexes an array, as in `decoded(toType:keyPath:)`) — to be present in the JSON object body;
    /// throws ``MissingJSONKeys`` naming those that are not. A top-level key that has dots in its
    /// name (`"user.name"`) is found as it is. Every component counts, empty ones too: `a..b` is
    /// `b` under the key `""` under `a`, never `a.b`, and `""` alone is the key `""`.
    public static func requiredJSONKeys(_ keys: [String]) -> ResponseValidator {
        ResponseValidator { response in
            let object = try? JSONSerialization.jsonObject(with: response.data)
            let missing = keys.filter { key in
                if let dictionary = object as? [String: Any], dictionary[key] != nil { return false }
                var current: Any? = object
                for component in key.split(separator: ".", omittingEmptySubsequences: false) {
                    if let dictionary = current as? [String: Any] {
                        current = dictionary[String(component)]
                    } else if let array = current as? [Any], let index = Int(component), array.indices.contains(index) {
                        current = array[index]
                    } else {
                        current = nil
                    }
                }
                return current == nil
            }
            if !missing.isEmpty { throw MissingJSONKeys(keys: missing) }
        }
    }

    /// Requires every body to decode as `Basic` — the fields every reply of the service has
    /// (the Decree basic response) — and then passes it to `validate`.
    ///
    /// - Parameters:
    ///   - type: The fields every body must decode as.
    ///   - decoder: Decodes the body; `nil` (the default) uses the `Connect` configuration's
    ///     `jsonDecoder`, as `decoded(toType:)` does.
    ///   - validate: Checks the decoded fields; what it throws fails the request as
    ///     ``ConnectError/validationFailed(_:underlying:)``.
    public static func basicResponse<Basic: Decodable & Sendable>(
        _ type: Basic.Type, decoder: JSONDecoder? = nil,
        validate: @escaping @Sendable (Basic) throws -> Void = { _ in }
    ) -> ResponseValidator {
        ResponseValidator(decoding: { response, configured in
            let basic: Basic
            do {
                basic = try response.decoded(toType: Basic.self, decoder: decoder ?? configured)
            } catch ConnectError.decoding(let failure) where BodyDecoder.isBlank(response.data) {
                // The decoder's advice (`Empty`, `decodedIfPresent`) is for a call, not for a
                // validator every response of the service meets.
                throw ConnectError.decoding(
                    DecodingFailure(
                        type: failure.type, keyPath: nil, codingPath: nil,
                        reason: "the response body is empty, and a basicResponse validator requires every body to "
                            + "decode (give a connector whose responses have no body validators: [])",
                        underlyingError: nil, response: failure.response))
            }
            try validate(basic)
        })
    }
}

/// The keys ``ResponseValidator/requiredJSONKeys(_:)`` did not find.
public struct MissingJSONKeys: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The missing keys or key paths.
    public let keys: [String]

    /// Creates the error for `keys`, as ``ResponseValidator/requiredJSONKeys(_:)`` reports them —
    /// to compare with one caught, or to test code of your own that handles it.
    public init(keys: [String]) {
        self.keys = keys
    }

    /// A readable explanation.
    public var description: String { "Missing JSON keys: \(keys.joined(separator: ", "))" }

    /// Same as ``description``, also as `localizedDescription`.
    public var errorDescription: String? { description }
}
