import Foundation

/// RFC 3986 percent-encoding, byte by byte (no `URLComponents`, which is slow on Linux and leaves
/// `+`, `&` and `=` alone in query values).
enum PercentEncoding {

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
        return UTF8Writer.string { output in
            append(string, keepingEscapes: keepingEscapes, keep: keep, to: &output)
        }
    }

    /// Appends `string` to `output`, encoding every byte for which `keep` is false (see
    /// ``encode(_:keepingEscapes:keep:)``).
    @inline(__always)
    static func append(
        _ string: String, keepingEscapes: Bool = false, keep: (UInt8) -> Bool, to output: inout UTF8Writer
    ) {
        var string = string
        string.withUTF8 { append($0, keepingEscapes: keepingEscapes, keep: keep, to: &output) }
    }

    /// Appends `bytes` to `output`, encoding every byte for which `keep` is false. Runs of kept
    /// bytes are copied whole.
    static func append(
        _ bytes: UnsafeBufferPointer<UInt8>, keepingEscapes: Bool, keep: (UInt8) -> Bool, to output: inout UTF8Writer
    ) {
        var runStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if keep(byte) {
                index += 1
                continue
            }
            if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            if keepingEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
            {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index...index + 2]))
                index += 3
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
                index += 1
            }
            runStart = index
        }
        if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
    }

    /// The uppercase hex digit for `nibble` (0...15).
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") - 10 + nibble
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
        UTF8Writer.string { appendPathValue(value, to: &$0) }
    }

    /// Appends ``pathValue(_:)`` of `value` to `output`: what request building writes.
    static func appendPathValue(_ value: String, to output: inout UTF8Writer) {
        if value == "." || value == ".." {
            for _ in value.utf8 {
                output.append(UInt8(ascii: "%"))
                output.append(UInt8(ascii: "2"))
                output.append(UInt8(ascii: "E"))
            }
        } else {
            append(value, keep: isUnreserved, to: &output)
        }
    }

    /// A query name or value: everything but unreserved characters is encoded.
    static func queryComponent(_ component: String) -> String {
        encode(component, keep: isUnreserved)
    }

    /// `name=value&name2=value2`, each part encoded as a query component.
    static func queryString(_ items: [URLQueryItem]) -> String {
        if items.isEmpty { return "" }
        return UTF8Writer.string { output in appendQueryString(items, to: &output) }
    }

    /// Appends ``queryString(_:)`` of `items` to `output`.
    static func appendQueryString(_ items: [URLQueryItem], to output: inout UTF8Writer) {
        // As the items are joined: an item that encodes to nothing at the start gets no `&`.
        let start = output.count
        for item in items {
            if output.count != start { output.append(UInt8(ascii: "&")) }
            append(item.name, keep: isUnreserved, to: &output)
            if let value = item.value {
                output.append(UInt8(ascii: "="))
                append(value, keep: isUnreserved, to: &output)
            }
        }
    }

    /// Whether ``queryString(_:)`` of `items` is empty: every item has an empty name and no value.
    static func queryStringIsEmpty(_ items: [URLQueryItem]) -> Bool {
        items.allSatisfy { $0.name.isEmpty && $0.value == nil }
    }

    /// An `application/x-www-form-urlencoded` body: as a query string, every reserved character
    /// encoded (`%20` for spaces, which every form decoder accepts).
    static func formEncoded(_ fields: [URLQueryItem]) -> String {
        queryString(fields)
    }
}
