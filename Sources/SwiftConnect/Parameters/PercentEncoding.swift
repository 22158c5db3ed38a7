import Foundation

/// RFC 3986 percent-encoding, byte by byte (no `URLComponents`, which is slow on Linux and leaves
/// `+`, `&` and `=` alone in query values).
enum PercentEncoding {

    /// Encodes every byte of `string` that is not in `kept`. With `keepingEscapes`, an existing
    /// `%XX` escape is kept as it is.
    static func encode(_ string: String, keepingEscapes: Bool = false, keeping kept: ASCIISet) -> String {
        if string.utf8.allSatisfy(kept.contains) { return string }
        return UTF8Writer.string { output in
            append(string, keepingEscapes: keepingEscapes, keeping: kept, to: &output)
        }
    }

    /// Appends `string` to `output`, encoding every byte that is not in `kept` (see
    /// ``encode(_:keepingEscapes:keeping:)``).
    @inline(__always)
    static func append(
        _ string: String, keepingEscapes: Bool = false, keeping kept: ASCIISet, to output: inout UTF8Writer
    ) {
        string.withUTF8Bytes { append($0, keepingEscapes: keepingEscapes, keeping: kept, to: &output) }
    }

    /// Appends `bytes` to `output`, encoding every byte that is not in `kept`.
    ///
    /// Byte by byte: the names, values and path values of a URL are short, and copying each run
    /// of kept bytes as a block cost a copy call per run, more than the bytes themselves (about
    /// 360 instructions of a path-and-query build).
    ///
    /// Never inlined: one copy of the loop serves every caller. Inlined where a query item's name
    /// is written, it saved no instructions and made the code a request runs through longer (10
    /// more cache lines of 64 bytes), which costs time in instruction-cache misses.
    @inline(never)
    static func append(
        _ bytes: UnsafeBufferPointer<UInt8>, keepingEscapes: Bool, keeping kept: ASCIISet, to output: inout UTF8Writer
    ) {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if kept.contains(byte) {
                output.append(byte)
                index += 1
            } else if keepingEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2])
            {
                output.append(byte)
                output.append(bytes[index + 1])
                output.append(bytes[index + 2])
                index += 3
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
                index += 1
            }
        }
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
    /// fills exactly one segment. `.` and `..` are encoded too (`%2E`), but that does not keep them
    /// from being dot-segments to a server that decodes before it resolves them: request building
    /// refuses them (``isDots(_:)``).
    static func pathValue(_ value: String) -> String {
        UTF8Writer.string { appendPathValue(value, to: &$0) }
    }

    /// Whether `value` is `.` or `..` (or empty), read from its bytes: no other string is
    /// canonically equivalent to them. Only values made of dots can make a dot-segment, with or
    /// without the dots beside their slot, and only if they are `.` or `..`: a value with any other
    /// character puts it, encoded or not, into its segment.
    static func isDots(_ value: String) -> Bool {
        value.withUTF8Bytes(isDots)
    }

    /// ``isDots(_:)`` of a value's UTF-8 bytes.
    @inline(__always)
    private static func isDots(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") }
    }

    /// Appends ``pathValue(_:)`` of `value` to `output`: what request building writes.
    static func appendPathValue(_ value: String, to output: inout UTF8Writer) {
        value.withUTF8Bytes { bytes in
            guard isDots(bytes) else {
                append(bytes, keepingEscapes: false, keeping: .unreserved, to: &output)
                return
            }
            for _ in bytes {
                output.append(UInt8(ascii: "%"))
                output.append(UInt8(ascii: "2"))
                output.append(UInt8(ascii: "E"))
            }
        }
    }

    /// A query name or value: everything but unreserved characters is encoded.
    static func queryComponent(_ component: String) -> String {
        encode(component, keeping: .unreserved)
    }

    /// `name=value&name2=value2`, each part encoded as a query component.
    static func queryString(_ items: [URLQueryItem]) -> String {
        if items.isEmpty { return "" }
        return UTF8Writer.string { output in appendQueryString(items, to: &output) }
    }

    /// Appends ``queryString(_:)`` of `items` to `output`.
    static func appendQueryString(_ items: [URLQueryItem], to output: inout UTF8Writer) {
        let start = output.count
        for item in items { appendQueryItem(name: item.name, value: item.value, to: &output, joinedAfter: start) }
    }

    /// Appends one item of a query string that started at `output`'s byte `start`: an `&` first
    /// unless the string is still empty (so an item that encodes to nothing at the start gets no
    /// `&`, as when the items are joined).
    @inline(__always)
    static func appendQueryItem(name: String, value: String?, to output: inout UTF8Writer, joinedAfter start: Int) {
        if output.count != start { output.append(UInt8(ascii: "&")) }
        append(name, keeping: .unreserved, to: &output)
        if let value {
            output.append(UInt8(ascii: "="))
            append(value, keeping: .unreserved, to: &output)
        }
    }

    /// An `application/x-www-form-urlencoded` body: as a query string, every reserved character
    /// encoded (`%20` for spaces, which every form decoder accepts).
    static func formEncoded(_ fields: [URLQueryItem]) -> String {
        queryString(fields)
    }
}
