import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

    /// Runs the check; a ``basicResponse(_:decoder:validate:)`` given no decoder decodes with the
    /// decoder of the request `response` answered (the connector's, else the configuration's), or
    /// a plain `JSONDecoder` for a response made by hand.
    public func validate(_ response: Response) throws {
        try check(response, response.decoder ?? JSONDecoder())
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

    /// Requires the response's `Content-Type` to be one of `acceptable` (Alamofire's
    /// `validate(contentType:)`); throws ``UnacceptableContentType`` otherwise.
    ///
    /// Each acceptable entry is a media type, `type/subtype`, compared without its parameters and
    /// ignoring case: `text/plain; charset=utf-8` accepts `text/plain`. A `*` stands for any type or
    /// subtype (`application/*`, `*/*`), and `*+json` for any subtype with that structured suffix
    /// (`application/*+json` accepts `application/problem+json` and `application/vnd.api+json`).
    /// An entry that is not `type/subtype` accepts nothing.
    ///
    /// A response without a body (a `204`, the answer to a `HEAD`) passes, as it has nothing to
    /// describe; one with a body but no `Content-Type`, or one that is not `type/subtype`, passes
    /// only `*/*`.
    ///
    /// ```swift
    /// configuration.validators = [.contentType(["application/json", "application/*+json"])]
    /// ```
    public static func contentType(_ acceptable: [String]) -> ResponseValidator {
        let patterns = acceptable.map(MediaType.init)
        return ResponseValidator { response in
            guard !response.data.isEmpty else { return }
            let received = response.httpResponse.value(forHTTPHeaderField: "Content-Type")
            let type = received.map(MediaType.init)
            let accepted = patterns.contains { pattern in
                pattern.acceptsAnything || type.map(pattern.accepts) == true
            }
            if !accepted { throw UnacceptableContentType(acceptable: acceptable, received: received) }
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
        // Boxed for the closure: Apple's Foundation makes `JSONDecoder` `Sendable` only from
        // macOS 13 and iOS 16.
        let decoder = decoder.map(SendableCoder.init)
        return ResponseValidator(decoding: { response, configured in
            let basic: Basic
            do {
                basic = try response.decoded(toType: Basic.self, decoder: decoder?.coder ?? configured)
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

/// The media type of a `Content-Type` value, or of a pattern ``ResponseValidator/contentType(_:)``
/// accepts: its type and subtype, lowercased, without parameters; both empty when it is not
/// `type/subtype`.
private struct MediaType {
    let type: Substring
    let subtype: Substring

    init(_ text: String) {
        let essence = text.prefix { $0 != ";" }.lowercased()
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            (type, subtype) = ("", "")
            return
        }
        (type, subtype) = (Substring(parts[0]), Substring(parts[1]))
    }

    /// Whether this pattern is `*/*`, which accepts a missing or malformed type too.
    var acceptsAnything: Bool { type == "*" && subtype == "*" }

    /// Whether `other`, a received type, is one this pattern accepts.
    func accepts(_ other: MediaType) -> Bool {
        guard !type.isEmpty, !other.type.isEmpty, type == "*" || type == other.type else { return false }
        if subtype == "*" || subtype == other.subtype { return true }
        // `*+json`: any subtype with that structured suffix (RFC 6838, 4.2.8).
        guard subtype.hasPrefix("*+"), subtype.count > 2 else { return false }
        let suffix = subtype.dropFirst()
        return other.subtype.count > suffix.count && other.subtype.hasSuffix(suffix)
    }
}

/// A response whose `Content-Type` ``ResponseValidator/contentType(_:)`` does not accept.
public struct UnacceptableContentType: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The media types the validator accepts, as given to it.
    public let acceptable: [String]
    /// The response's `Content-Type`, as received; `nil` when it had none.
    public let received: String?

    /// Creates the error, as ``ResponseValidator/contentType(_:)`` reports it — to compare with one
    /// caught, or to test code of your own that handles it.
    public init(acceptable: [String], received: String?) {
        self.acceptable = acceptable
        self.received = received
    }

    /// A readable explanation.
    public var description: String {
        let got = received.map { "Content-Type \($0)" } ?? "no Content-Type"
        return "Unacceptable content type: \(got), expected \(acceptable.joined(separator: " or "))"
    }

    /// Same as ``description``, also as `localizedDescription`.
    public var errorDescription: String? { description }
}
