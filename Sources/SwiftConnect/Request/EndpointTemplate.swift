/// An endpoint such as `/users/{userId}/todos/{todoId}?expand=true`, parsed into literal text and
/// `{slot}`s, in its path and query parts.
///
/// Literal text is percent-encoded here, once, rather than each time a request is built: a
/// path literal keeps pchar and `/`, a query literal also `?`, and both keep well-formed `%XX`
/// escapes.
///
/// A class, immutable: every request of an endpoint gets the cache's one instance, for one retain
/// rather than one per array.
final class EndpointTemplate: Sendable {
    enum Piece: Equatable, Sendable {
        /// Literal text, percent-encoded; never empty.
        case literal(String)
        /// A `{name}` slot.
        case slot(String)
    }

    /// The path part, before any `?`.
    let path: [Piece]
    /// The query part, after the first `?` (empty when there is none).
    let query: [Piece]
    /// Every slot name, in order of appearance.
    let slots: [String]
    /// The number of different slot names (a name may fill more than one slot).
    let distinctSlotCount: Int
    /// Whether the path starts with `/` (its first piece is a literal that does).
    let pathStartsWithSlash: Bool
    /// Whether the query starts with `&` (its first piece is a literal that does): it then follows
    /// the base URL's query without another.
    let queryStartsWithAmpersand: Bool
    /// Whether the query ends with `&` (its last piece is a literal that does): query items then
    /// follow it without another.
    let queryEndsWithAmpersand: Bool

    /// Parses `endpoint`.
    ///
    /// The delimiters are ASCII, so the scan runs over UTF-8 bytes and slices the string at them:
    /// no per-character work, no string built a character at a time.
    ///
    /// - Throws: ``InvalidRequestReason/malformedEndpoint(_:detail:)`` for an unclosed `{`, a
    ///   stray `}`, an empty or nested slot, a `#` fragment, or a `.` or `..` path segment.
    init(_ endpoint: String) throws {
        func malformed(_ detail: String) -> ConnectError {
            .invalidRequest(.malformedEndpoint(endpoint, detail: detail))
        }
        var path: [Piece] = []
        var query: [Piece] = []
        var slots: [String] = []
        var inQuery = false
        let utf8 = endpoint.utf8
        var literalStart = utf8.startIndex
        var slotStart: String.Index?

        func append(_ piece: Piece) {
            if inQuery { query.append(piece) } else { path.append(piece) }
        }
        func flushLiteral(upTo end: String.Index) {
            guard literalStart < end else { return }
            let encoded = PercentEncoding.encode(
                String(endpoint[literalStart..<end]), keepingEscapes: true,
                keeping: inQuery ? .queryLiteral : .pathLiteral)
            append(.literal(encoded))
        }

        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            let next = utf8.index(after: index)
            if let start = slotStart {
                switch byte {
                case UInt8(ascii: "}"):
                    guard start < index else { throw malformed("empty slot {}") }
                    let name = String(endpoint[start..<index])
                    append(.slot(name))
                    slots.append(name)
                    slotStart = nil
                    literalStart = next
                case UInt8(ascii: "{"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                    throw malformed("unclosed slot {\(endpoint[start..<index])")
                default:
                    break
                }
            } else {
                switch byte {
                case UInt8(ascii: "{"):
                    flushLiteral(upTo: index)
                    slotStart = next
                case UInt8(ascii: "}"):
                    throw malformed("'}' without '{'")
                case UInt8(ascii: "#"):
                    throw malformed("an endpoint cannot carry a #fragment")
                case UInt8(ascii: "?") where !inQuery:
                    flushLiteral(upTo: index)
                    inQuery = true
                    literalStart = next
                default:
                    break
                }
            }
            index = next
        }
        if let start = slotStart { throw malformed("unclosed slot {\(endpoint[start...])") }
        flushLiteral(upTo: utf8.endIndex)
        if Self.hasDotSegment(endpoint) {
            throw malformed("a '.' or '..' path segment would leave the base URL's path")
        }
        self.path = path
        self.query = query
        self.slots = slots
        distinctSlotCount = Set(slots).count
        pathStartsWithSlash = Self.isLiteral(path.first) { $0.first == UInt8(ascii: "/") }
        queryStartsWithAmpersand = Self.isLiteral(query.first) { $0.first == UInt8(ascii: "&") }
        queryEndsWithAmpersand = Self.isLiteral(query.last) { $0.last == UInt8(ascii: "&") }
    }

    /// Whether `piece` is a literal whose text passes `test`.
    private static func isLiteral(_ piece: Piece?, where test: (String.UTF8View) -> Bool) -> Bool {
        guard case .literal(let text)? = piece else { return false }
        return test(text.utf8)
    }

    /// Whether the path part of `endpoint` has a segment that is `.` or `..`, also written `%2E`.
    /// URLSession (libcurl) removes dot-segments before sending (RFC 3986 §5.2.4), so `../x`
    /// would climb out of the base URL's path: `/api/v1` and `../../x` go to `/x`. A path value
    /// `.` or `..` is refused when the request is built
    /// (``InvalidRequestReason/dotSegmentPathValue(key:)``).
    static func hasDotSegment(_ endpoint: String) -> Bool {
        let path = endpoint.utf8.prefix { $0 != UInt8(ascii: "?") }
        return path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains { segment in
            let decoded = String(decoding: segment, as: UTF8.self).replacingOccurrences(of: "%2E", with: ".")
                .replacingOccurrences(of: "%2e", with: ".")
            return decoded == "." || decoded == ".."
        }
    }
}
