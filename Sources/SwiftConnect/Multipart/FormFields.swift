import Foundation

/// Turns a connector's body parameters into multipart text fields, for uploads.
///
/// - `.form(key:value:)` fields are sent as they are, in order.
/// - A `.jsonObject(value:)` becomes one field per top-level member, in the order the encoder
///   wrote them (`JSONEncoder`'s is unspecified unless its `outputFormatting` has `.sortedKeys`), each
///   value as the text it has in the JSON: strings unquoted and unescaped; numbers exactly as
///   written (`3`, `2.5`, `1e-07`); `true` and `false` as those words; nested objects and arrays
///   as their JSON text. Members whose value is `null` are left out.
enum FormFields {
    /// Why a JSON body cannot become fields.
    struct NotAnObject: Error, CustomStringConvertible {
        var description: String {
            "an upload sends a JSON parameter as form fields, so it must encode to a JSON object"
        }
    }

    /// The fields for `body`.
    ///
    /// - Throws: ``InvalidRequestReason/multipleBodies`` for a raw `.data` body (the files are
    ///   the body); ``InvalidRequestReason/encodingFailed(underlying:)`` for JSON that is not an
    ///   object.
    static func fields(from body: RequestBody?) throws -> [(name: String, value: String)] {
        switch body {
        case nil:
            return []
        case .form(let items)?:
            return items.map { ($0.name, $0.value ?? "") }
        case .json(let data)?:
            do {
                return try fields(fromJSONObject: data)
            } catch {
                throw ConnectError.invalidRequest(.encodingFailed(underlying: error))
            }
        case .data?:
            throw ConnectError.invalidRequest(.multipleBodies)
        }
    }

    /// One field per member of the JSON object in `json`.
    static func fields(fromJSONObject json: Data) throws -> [(name: String, value: String)] {
        let bytes = [UInt8](json)
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "{")) else { throw NotAnObject() }
        var fields: [(name: String, value: String)] = []
        scanner.skipWhitespace()
        if scanner.consume(UInt8(ascii: "}")) { return fields }
        while true {
            scanner.skipWhitespace()
            let keyRange = try scanner.skipValue()
            let name = try decodeString(bytes[keyRange])
            scanner.skipWhitespace()
            guard scanner.consume(UInt8(ascii: ":")) else { throw NotAnObject() }
            scanner.skipWhitespace()
            let valueRange = try scanner.skipValue()
            let raw = bytes[valueRange]
            switch raw.first {
            case UInt8(ascii: "\""): fields.append((name, try decodeString(raw)))
            case UInt8(ascii: "n"): break  // null: no field
            default: fields.append((name, String(decoding: raw, as: UTF8.self)))
            }
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: ",")) { continue }
            guard scanner.consume(UInt8(ascii: "}")) else { throw NotAnObject() }
            return fields
        }
    }

    private static func decodeString(_ literal: ArraySlice<UInt8>) throws -> String {
        guard literal.first == UInt8(ascii: "\"") else { throw NotAnObject() }
        return try JSONDecoder().decode(String.self, from: Data(literal))
    }

    /// Just enough of a JSON scanner to find where each value starts and ends; the input comes
    /// from `JSONEncoder`, so it is valid JSON.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Skips one value (string, number, literal, object or array) and returns its range.
        mutating func skipValue() throws -> Range<Int> {
            let start = index
            guard index < bytes.count else { throw NotAnObject() }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                try skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                repeat {
                    guard index < bytes.count else { throw NotAnObject() }
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        try skipString()
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    index += 1
                } while depth > 0
            default:
                while index < bytes.count, !",}] \t\r\n".utf8.contains(bytes[index]) { index += 1 }
            }
            guard index > start else { throw NotAnObject() }
            return start..<index
        }

        private mutating func skipString() throws {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return
                default: index += 1
                }
            }
            throw NotAnObject()
        }
    }
}
