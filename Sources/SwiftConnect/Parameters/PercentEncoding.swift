import Foundation

/// RFC 3986 percent-encoding, byte by byte (no `URLComponents`, which is slow on Linux and leaves
/// `+`, `&` and `=` alone in query values).
enum PercentEncoding {
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
        default: return ASCII.isAlphanumeric(byte)
        }
    }

    /// "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="
    static func isSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="):
            return true
        default:
            return false
        }
    }

    /// Characters a developer-written path may keep: pchar and "/".
    static func isPathLiteral(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || isSubDelimiter(byte) || byte == UInt8(ascii: ":")
            || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "/")
    }

    /// Characters a developer-written query may keep: pchar, "/" and "?".
    static func isQueryLiteral(_ byte: UInt8) -> Bool {
        isPathLiteral(byte) || byte == UInt8(ascii: "?")
    }

    /// Encodes every byte of `string` for which `keep` is false. With `keepingEscapes`, an
    /// existing `%XX` escape is kept as it is.
    static func encode(_ string: String, keepingEscapes: Bool = false, keep: (UInt8) -> Bool) -> String {
        if string.utf8.allSatisfy(keep) { return string }
        var output: [UInt8] = []
        append(string, keepingEscapes: keepingEscapes, keep: keep, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `string` to `output`, encoding every byte for which `keep` is false (see
    /// ``encode(_:keepingEscapes:keep:)``).
    static func append(
        _ string: String, keepingEscapes: Bool = false, keep: (UInt8) -> Bool, to output: inout [UInt8]
    ) {
        var string = string
        string.withUTF8 { bytes in
            output.reserveCapacity(output.count + bytes.count * 3)
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if keep(byte) {
                    output.append(byte)
                } else if keepingEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                    isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
                {
                    output.append(contentsOf: bytes[index...index + 2])
                    index += 3
                    continue
                } else {
                    output.append(UInt8(ascii: "%"))
                    output.append(hex[Int(byte >> 4)])
                    output.append(hex[Int(byte & 0x0F)])
                }
                index += 1
            }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }

    /// A path parameter's value: everything but unreserved characters is encoded, so the value
    /// fills exactly one segment. `.` and `..` are encoded too, so they are never dot-segments.
    static func pathValue(_ value: String) -> String {
        if value == "." || value == ".." {
            return String(repeating: "%2E", count: value.count)
        }
        return encode(value, keep: isUnreserved)
    }

    /// A query name or value: everything but unreserved characters is encoded.
    static func queryComponent(_ component: String) -> String {
        encode(component, keep: isUnreserved)
    }

    /// `name=value&name2=value2`, each part encoded as a query component.
    static func queryString(_ items: [URLQueryItem]) -> String {
        if items.isEmpty { return "" }
        var output: [UInt8] = []
        for item in items {
            if !output.isEmpty { output.append(UInt8(ascii: "&")) }
            append(item.name, keep: isUnreserved, to: &output)
            if let value = item.value {
                output.append(UInt8(ascii: "="))
                append(value, keep: isUnreserved, to: &output)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// An `application/x-www-form-urlencoded` body: as a query string, every reserved character
    /// encoded (`%20` for spaces, which every form decoder accepts).
    static func formEncoded(_ fields: [URLQueryItem]) -> String {
        queryString(fields)
    }
}
