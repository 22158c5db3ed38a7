import Foundation

/// A body with nothing in it worth decoding: use it for `204 No Content` and other empty
/// successes, where any other type fails because there is no JSON to decode.
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
enum BodyDecoder {
    @TaskLocal static var keyPath: [String] = []

    static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T {
        guard let value = try decodeIfPresent(type, from: data, keyPath: keyPath, decoder: decoder, response: response)
        else {
            let reason: String
            if data.isEmpty {
                reason = "the response body is empty (use Empty for bodiless responses, or decodedIfPresent)"
            } else {
                reason = "the value at the key path is null"
            }
            throw failure(type, keyPath: keyPath, reason: reason, underlying: nil, response: response)
        }
        return value
    }

    /// Decodes `type`, returning `nil` for an empty body or a missing or `null` key-path value.
    static func decodeIfPresent<T: Decodable>(
        _ type: T.Type, from data: Data, keyPath: String?, decoder: JSONDecoder, response: Response?
    ) throws -> T? {
        if T.self == Empty.self { return Empty() as? T }
        if data.isEmpty || data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return nil
        }
        let components = keyPath.map { $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init) } ?? []
        if components.contains(where: \.isEmpty) {
            throw failure(type, keyPath: keyPath, reason: "the key path has an empty component", underlying: nil, response: response)
        }
        do {
            return try $keyPath.withValue(components) {
                try decoder.decode(KeyPathBox<T>.self, from: data).value
            }
        } catch let error as DecodingError {
            throw failure(type, keyPath: keyPath, reason: describe(error), underlying: error, response: response)
        } catch {
            throw failure(type, keyPath: keyPath, reason: "\(error)", underlying: error, response: response)
        }
    }

    private static func failure(
        _ type: Any.Type, keyPath: String?, reason: String, underlying: (any Error)?, response: Response?
    ) -> ConnectError {
        .decoding(
            DecodingFailure(
                type: String(describing: type), keyPath: keyPath, reason: reason,
                underlyingError: underlying, response: response))
    }

    /// "key 'title' not found at 'data.item'" and the like.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "the top level" : "'\(text)'"
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "key '\(key.stringValue)' not found at \(path(context.codingPath))"
        case .valueNotFound(let type, let context):
            return "expected \(type) but found null at \(path(context.codingPath))"
        case .typeMismatch(let type, let context):
            return "expected \(type) at \(path(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "invalid JSON at \(path(context.codingPath)): \(context.debugDescription)"
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

/// Walks `BodyDecoder.keyPath` (object keys, or indexes into arrays) and decodes `T` there, so the
/// decoder's strategies (dates, keys, …) apply as usual. A missing or null value gives `nil`.
private struct KeyPathBox<T: Decodable>: Decodable {
    let value: T?

    private struct Skip: Decodable {}

    init(from decoder: any Decoder) throws {
        var current = decoder
        for component in BodyDecoder.keyPath {
            if let index = Int(component), var array = try? current.unkeyedContainer() {
                guard index >= 0, array.count.map({ index < $0 }) ?? true else {
                    value = nil
                    return
                }
                for _ in 0..<index { _ = try array.decode(Skip.self) }
                current = try array.superDecoder()
            } else {
                let object = try current.container(keyedBy: AnyCodingKey.self)
                let key = AnyCodingKey(stringValue: component)
                guard object.contains(key), try !object.decodeNil(forKey: key) else {
                    value = nil
                    return
                }
                current = try object.superDecoder(forKey: key)
            }
        }
        let single = try current.singleValueContainer()
        value = single.decodeNil() ? nil : try single.decode(T.self)
    }
}
