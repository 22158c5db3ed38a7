import Foundation

/// A body with nothing in it worth decoding: use it for `204 No Content` and other empty
/// successes, where any other type fails because there is no JSON to decode.
///
/// Decoding `Empty` never reads the body: whatever it holds, JSON or not, is ignored.
///
/// ```swift
/// connect.request(TodoConnector.delete(id: 1)).decoded(toType: Empty.self)
/// ```
public struct Empty: Decodable, Sendable, Equatable {
    /// Creates the empty value.
    public init() {}

    /// Accepts any JSON value and ignores it.
    public init(from decoder: any Decoder) throws {}
}

/// Decodes JSON bodies, at a key path if asked.
@usableFromInline
enum BodyDecoder {
    @TaskLocal static var keyPath: [String] = []

    /// `error`, with the response of `source` added when it is a decoding failure that has none:
    /// a body taken from a response (``Future/data``) and decoded afterwards.
    @usableFromInline
    static func failure(_ error: any Error, withResponseOf source: Future<Response>?) -> any Error {
        guard let source, case .decoding(let failure) = error as? ConnectError, failure.response == nil,
            case .success(let response) = source.outcome
        else { return error }
        return ConnectError.decoding(
            DecodingFailure(
                type: failure.type, keyPath: failure.keyPath, codingPath: failure.codingPath, reason: failure.reason,
                underlyingError: failure.underlyingError, response: response))
    }

    @usableFromInline
    static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T {
        if T.self == Empty.self, let empty = Empty() as? T { return empty }
        if isBlank(data) {
            // An optional type decodes a body with nothing in it (a `204`) as `nil`, as it does `null`.
            if keyPath == nil, let none = nullValue(of: T.self) { return none }
            throw failure(
                type, keyPath: keyPath,
                reason: "the response body is empty (use Empty for bodiless responses, or decodedIfPresent)",
                underlying: nil, response: response)
        }
        if decodesWhole(data, keyPath: keyPath) {
            return try decodeWhole(type, from: data, decoder: decoder, response: response)
        }
        return try decodeWalking(type, from: data, keyPath: keyPath, decoder: decoder, response: response)
    }

    /// ``decode(_:from:keyPath:decoder:response:)`` down the key path, or of a top-level `null`. A
    /// function of its own, so that the common path, which decodes the whole body, does not look
    /// up `KeyPathOutcome<T>`'s metadata on entry.
    private static func decodeWalking<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T {
        switch try locate(type, in: data, keyPath: keyPath, decoder: decoder, response: response) {
        case .value(let value):
            return value
        case .missing(let location, let path):
            throw failure(
                type, keyPath: keyPath, codingPath: path, reason: "no value at the key path: \(location)",
                underlying: nil, response: response)
        case .null(let path):
            // An optional type decodes `null` as `nil`, as JSONDecoder does.
            if let none = nullValue(of: T.self) { return none }
            let reason = keyPath == nil ? "the body is null" : "the value at the key path is null"
            throw failure(type, keyPath: keyPath, codingPath: path, reason: reason, underlying: nil, response: response)
        }
    }

    /// Decodes `type`, returning `nil` for an empty body or a missing or `null` key-path value.
    @usableFromInline
    static func decodeIfPresent<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T? {
        if T.self == Empty.self { return Empty() as? T }
        if isBlank(data) { return nil }
        if decodesWhole(data, keyPath: keyPath) {
            return try decodeWhole(type, from: data, decoder: decoder, response: response)
        }
        return try decodeWalkingIfPresent(type, from: data, keyPath: keyPath, decoder: decoder, response: response)
    }

    /// ``decodeIfPresent(_:from:keyPath:decoder:response:)`` down the key path (see
    /// ``decodeWalking(_:from:keyPath:decoder:response:)``).
    private static func decodeWalkingIfPresent<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T? {
        if case .value(let value) = try locate(type, in: data, keyPath: keyPath, decoder: decoder, response: response) {
            return value
        }
        return nil
    }

    /// What `null` decodes to as `type`, when it is an optional type (its `nil`); `nil` when it is
    /// not.
    private static func nullValue<T>(of type: T.Type) -> T? {
        guard let optional = T.self as? any NullDecodable.Type else { return nil }
        return optional.decodedNull as? T
    }

    static func isBlank(_ data: Data) -> Bool {
        firstSignificantByte(of: data) == nil
    }

    /// The first byte that is not JSON whitespace. Read through the raw bytes: `Data`'s own iterator
    /// costs a few hundred instructions to set up, and this runs twice per decoded response.
    private static func firstSignificantByte(of data: Data) -> UInt8? {
        data.withUnsafeBytes { bytes in bytes.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) } }
    }

    /// Whether the body decodes as a whole, without walking: there is no key path to walk, and the
    /// body is not a top-level `null`, which the walk reports as such.
    ///
    /// That path decodes `T` itself, sparing the task-local, the box and `KeyPathOutcome<T>`: these
    /// functions run unspecialised, where each use of a generic type looks up its metadata.
    private static func decodesWhole(_ data: Data, keyPath: String?) -> Bool {
        keyPath == nil && firstSignificantByte(of: data) != UInt8(ascii: "n")
    }

    /// Decodes the whole body as `type`.
    private static func decodeWhole<T: Decodable>(
        _ type: T.Type, from data: Data, decoder: JSONDecoder, response: Response?
    ) throws -> T {
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw failure(type, keyPath: nil, decoding: error, in: data, decoder: decoder, response: response)
        }
    }

    /// Walks the key path and decodes `type` there.
    private static func locate<T: Decodable>(
        _ type: T.Type, in data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> KeyPathOutcome<T> {
        let components =
            keyPath.map { $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init) } ?? []
        if components.contains(where: \.isEmpty) {
            throw failure(
                type, keyPath: keyPath, reason: "the key path has an empty component", underlying: nil,
                response: response)
        }
        do {
            return try $keyPath.withValue(components) {
                try decoder.decode(KeyPathBox<T>.self, from: data).outcome
            }
        } catch {
            throw failure(type, keyPath: keyPath, decoding: error, in: data, decoder: decoder, response: response)
        }
    }

    /// The failure for an error `decoder` threw decoding `data`.
    private static func failure(
        _ type: Any.Type, keyPath: String?, decoding error: any Error, in data: Data, decoder: JSONDecoder,
        response: Response?
    ) -> ConnectError {
        let decodingError = error as? DecodingError
        let reason = decodingError.map { describe($0, decoding: data, with: decoder) } ?? "\(error)"
        return failure(
            type, keyPath: keyPath, codingPath: decodingError.flatMap(codingPath(of:)), reason: reason,
            underlying: error, response: response)
    }

    private static func failure(
        _ type: Any.Type, keyPath: String?, codingPath: String? = nil, reason: String, underlying: (any Error)?,
        response: Response?
    ) -> ConnectError {
        .decoding(
            DecodingFailure(
                type: String(describing: type), keyPath: keyPath, codingPath: codingPath, reason: reason,
                underlyingError: underlying, response: response))
    }

    /// Where `error` happened, as ``DecodingFailure/codingPath`` gives it: the missing key
    /// included; `nil` at the top level.
    static func codingPath(of error: DecodingError) -> String? {
        var keys: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): keys = context.codingPath + [key]
        case .valueNotFound(_, let context), .typeMismatch(_, let context), .dataCorrupted(let context):
            keys = context.codingPath
        @unknown default: return nil
        }
        guard !keys.isEmpty else { return nil }
        return keys.map(text(of:)).joined(separator: ".")
    }

    /// A key as a path shows it: an index as its number.
    private static func text(of key: any CodingKey) -> String {
        key.intValue.map(String.init) ?? key.stringValue
    }

    /// The value at `codingPath` in a parsed JSON body; `nil` when the path leads nowhere. With
    /// `convertsSnakeCase`, a key of the path (`logStamps`) also finds the JSON key it was converted
    /// from (`log_stamps`).
    private static func value(at codingPath: [any CodingKey], in json: Any, convertsSnakeCase: Bool) -> Any? {
        var value: Any? = json
        for key in codingPath {
            switch value {
            case let object as [String: Any]:
                value =
                    object[key.stringValue]
                    ?? (convertsSnakeCase
                        ? object.first { camelCased($0.key) == key.stringValue }?.value : nil)
            case let array as [Any]:
                guard let index = key.intValue, array.indices.contains(index) else { return nil }
                value = array[index]
            default:
                return nil
            }
        }
        return value
    }

    /// `first_name` → `firstName`, as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase` does.
    static func camelCased(_ key: String) -> String {
        let parts = key.split(separator: "_", omittingEmptySubsequences: true)
        guard parts.count > 1, let first = parts.first else { return key }
        let leading = key.prefix { $0 == "_" }
        let trailing = String(key.reversed().prefix { $0 == "_" })
        return leading + first.lowercased() + parts.dropFirst().map { $0.capitalized }.joined() + trailing
    }

    /// Whether `value` is a JSON object or array.
    private static func isContainer(_ value: Any?) -> Bool {
        value is [String: Any] || value is [Any]
    }

    /// Whether `text` starts with a calendar date, `YYYY-MM-DD`, as ISO 8601 and RFC 3339 dates do.
    private static func startsWithDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(10))
        guard bytes.count == 10 else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 4 || index == 7
                ? byte == UInt8(ascii: "-") : (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    /// "key 'title' not found at 'data.item'" and the like, for an error `decoder` threw decoding
    /// `data`.
    static func describe(_ error: DecodingError, decoding data: Data, with decoder: JSONDecoder) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map(text(of:)).joined(separator: ".")
            return text.isEmpty ? "the top level" : "'\(text)'"
        }
        /// The body parsed, to look at a value the error names (read only on these error paths).
        func json() -> Any? { try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) }
        /// The value the error's path leads to in the parsed body, its keys converted as the
        /// decoder converts them.
        func found(at codingPath: [any CodingKey], in json: Any) -> Any? {
            var convertsSnakeCase = false
            if case .convertFromSnakeCase = decoder.keyDecodingStrategy { convertsSnakeCase = true }
            return Self.value(at: codingPath, in: json, convertsSnakeCase: convertsSnakeCase)
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "key '\(key.stringValue)' not found at \(path(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "expected \(type) but found null at \(path(context.codingPath))"
        case .typeMismatch(let type, let context):
            // "Expected to decode Double but found a string instead." says the type again.
            let detail = context.debugDescription
            let repeated = "Expected to decode \(type) but "
            var reason = "expected \(type) at \(path(context.codingPath))"
            if detail.hasPrefix(repeated) {
                let rest = detail.dropFirst(repeated.count)
                reason += " but \(rest.hasSuffix(".") ? rest.dropLast() : rest)"
            } else {
                reason += ": \(detail)"
            }
            // A `Date` decodes as a number of seconds unless the decoder is told otherwise, and the
            // error names only the number: the reason says so, for a `Double` found as a string
            // that starts with a date (`2024-01-31…`), not for a price sent as "12.5".
            if type == Double.self, case .deferredToDate = decoder.dateDecodingStrategy,
                let found = json().flatMap({ found(at: context.codingPath, in: $0) }) as? String,
                startsWithDate(found)
            {
                reason +=
                    " (if it is a Date: with the decoder's default dateDecodingStrategy, .deferredToDate,"
                    + " a Date is read as a number of seconds; set the JSONDecoder's dateDecodingStrategy,"
                    + " e.g. .iso8601)"
            }
            return reason
        case .dataCorrupted(let context):
            // The decoder reports a body that does not parse and a value its type refuses (an
            // unknown enum case, a date in another format) alike: a look at the body says which.
            let parsed = json()
            if context.codingPath.isEmpty, parsed == nil {
                // Where the parser stopped, where it says (Apple platforms).
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "the body is not valid JSON" + (detail.map { ": \($0)" } ?? "")
            }
            // The path should end at the refused value, but Foundation on Linux leaves its key out
            // for some (an ISO 8601 date in another format comes with the path of the object
            // holding it, or with none). An object's own `init(from:)` that refuses it (`lo > hi`)
            // gives the object's path too, rightly: a path to an object or an array is the place
            // or holds it.
            if let parsed, isContainer(found(at: context.codingPath, in: parsed)) {
                let place = context.codingPath.isEmpty ? "in the body" : "at or inside \(path(context.codingPath))"
                return "invalid value \(place): \(context.debugDescription)"
            }
            return "invalid value at \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

/// Any string or integer key.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// What a key path leads to.
private enum KeyPathOutcome<T> {
    case value(T)
    /// Nothing there; says where the walk stopped, e.g. "key 'item' not found at 'data'", and the
    /// path of what is missing (`data.item`).
    case missing(String, path: String)
    /// A `null` where the walk stopped, at this path (`nil`: the top level).
    case null(path: String?)
}

/// Walks `BodyDecoder.keyPath` (object keys, or indexes into arrays) and decodes `T` there, so the
/// decoder's strategies (dates, keys, …) apply as usual.
private struct KeyPathBox<T: Decodable>: Decodable {
    let outcome: KeyPathOutcome<T>

    private struct Skip: Decodable {}

    init(from decoder: any Decoder) throws {
        var current = decoder
        var walked: [String] = []
        func walkedPath() -> String? { walked.isEmpty ? nil : walked.joined(separator: ".") }
        func location() -> String { walkedPath().map { "'\($0)'" } ?? "the top level" }
        func path(to component: String) -> String { (walked + [component]).joined(separator: ".") }
        var components = BodyDecoder.keyPath
        // A top-level key with dots in its name (`"user.name"`) is found as it is, as
        // `ResponseValidator.requiredJSONKeys` finds it.
        if components.count > 1, let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            let whole = components.joined(separator: ".")
            if Self.key(whole, in: object) != nil { components = [whole] }
        }
        for component in components {
            // A `null` on the way ends the walk, wherever it is: the body itself, the value under a
            // key, an element of an array.
            if let single = try? current.singleValueContainer(), single.decodeNil() {
                outcome = .null(path: walkedPath())
                return
            }
            if let index = Int(component), var array = try? current.unkeyedContainer() {
                guard index >= 0, array.count.map({ index < $0 }) ?? true else {
                    outcome = .missing("index \(index) out of range at \(location())", path: path(to: component))
                    return
                }
                for _ in 0..<index { _ = try array.decode(Skip.self) }
                current = try array.superDecoder()
            } else {
                let object = try current.container(keyedBy: AnyCodingKey.self)
                guard let key = Self.key(component, in: object) else {
                    outcome = .missing("key '\(component)' not found at \(location())", path: path(to: component))
                    return
                }
                current = try object.superDecoder(forKey: key)
            }
            walked.append(component)
        }
        let single = try current.singleValueContainer()
        outcome =
            single.decodeNil()
            ? .null(path: walkedPath()) : .value(try single.decode(T.self))
    }

    /// The key as written in the JSON, or, when the decoder converts snake_case keys, as converted.
    private static func key(_ component: String, in object: KeyedDecodingContainer<AnyCodingKey>) -> AnyCodingKey? {
        let exact = AnyCodingKey(stringValue: component)
        if object.contains(exact) { return exact }
        let converted = AnyCodingKey(stringValue: BodyDecoder.camelCased(component))
        return object.contains(converted) ? converted : nil
    }
}

/// Optional types: what `null` decodes to when one is asked for.
private protocol NullDecodable {
    static var decodedNull: Self { get }
}

extension Optional: NullDecodable {
    static var decodedNull: Self { nil }
}
