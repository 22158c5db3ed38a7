import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP header: a name and a value.
///
/// ```swift
/// var headers: [HTTPHeader] {
///     [.accept("application/json"), HTTPHeader(name: "X-Client", value: "demo")]
/// }
/// ```
///
/// Names compare case-insensitively when headers are looked up in ``HTTPHeaders``. A name that
/// is not a valid token, or a value containing a control character other than tab (bytes
/// 0x00–0x1F and DEL, as RFC 9110 counts them: CR, LF, NUL, …; other non-ASCII text goes out as
/// UTF-8), fails the request with
/// ``InvalidRequestReason/invalidHeader(name:)`` before anything is sent; so does
/// `Content-Length` or `Transfer-Encoding`, with ``InvalidRequestReason/reservedHeader(name:)``:
/// the transport frames the body itself. Spaces and tabs around a value are not part of it
/// (RFC 9110 §5.5) and are left out: a value of only spaces is sent empty (URLSession would drop
/// the header instead), and a body's `Content-Type` that is empty fails with
/// ``InvalidRequestReason/invalidHeader(name:)``.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The header's name, e.g. `"Content-Type"`.
    public let name: String
    /// The header's value.
    public let value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`.
    public var description: String { "\(name): \(value)" }

    /// Whether the name is a valid RFC 9110 token and the value has no control character but tab
    /// (RFC 9110 §5.5: CR, LF and NUL would split or cut the header; the others are not allowed
    /// either, and servers and proxies disagree on what to do with them).
    var isValid: Bool {
        ASCIISet.isToken(name)
            && !value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }

    /// The value without the spaces and tabs around it (RFC 9110 §5.5: they are not part of a
    /// field value). libcurl takes `Name: ` as "remove this header", so a value of spaces alone
    /// would silently drop the header, and with it URLSession's own `Accept` or `User-Agent`.
    var trimmedValue: String { Self.trimmed(value) }

    /// `text` without the spaces and tabs around it, as ``trimmedValue`` trims a value.
    static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, isWhitespace(first) || isWhitespace(last) else {
            return text
        }
        let start = utf8.firstIndex { !isWhitespace($0) } ?? utf8.endIndex
        let end = utf8.lastIndex { !isWhitespace($0) }.map(utf8.index(after:)) ?? start
        return start < end ? String(text[start..<end]) : ""
    }

    /// Whether `byte` is whitespace around a field value: a space or a tab (RFC 9110 §5.6.3).
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// Whether the header frames the body: `Content-Length` or `Transfer-Encoding`, any case.
    var isFraming: Bool {
        isContentLength || (name.utf8.count == 17 && name.lowercased() == "transfer-encoding")
    }

    /// Whether the header is `Content-Length`, any case.
    var isContentLength: Bool {
        name.utf8.count == 14 && name.lowercased() == "content-length"
    }
}

extension HTTPHeader {
    /// `Accept: value`.
    public static func accept(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept", value: value)
    }

    /// `Accept-Charset: value`.
    public static func acceptCharset(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Charset", value: value)
    }

    /// `Accept-Encoding: value`.
    public static func acceptEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Encoding", value: value)
    }

    /// `Accept-Language: value`.
    public static func acceptLanguage(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Language", value: value)
    }

    /// `Authorization: value`, sent as given.
    public static func authorization(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Authorization", value: value)
    }

    /// `Authorization: Bearer token`.
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// `Authorization: Bearer token`, the token without the spaces around it, checked as a build
    /// checks ``AuthorizationToken/bearer(token:)``.
    ///
    /// - Throws: ``InvalidRequestReason/emptyToken`` for a token of nothing or spaces,
    ///   ``InvalidRequestReason/invalidBearerToken`` for one with a space or tab inside (RFC 6750's
    ///   b64token has none: most often a token given with its own `Bearer `). A token with a line
    ///   break or another control character gives a header that is not ``isValid``, for the caller
    ///   to report as such.
    static func checkedBearer(_ token: String) throws -> HTTPHeader {
        let bare = trimmed(token)
        if bare.isEmpty { throw ConnectError.invalidRequest(.emptyToken) }
        let header = authorization(bearerToken: bare)
        if header.isValid, bare.utf8.contains(where: isWhitespace) {
            throw ConnectError.invalidRequest(.invalidBearerToken)
        }
        return header
    }

    /// `Authorization: Basic base64(username:password)`. The username must not contain a colon
    /// (RFC 7617: the server splits at the first one); ``AuthorizationToken/basic(username:password:)``
    /// checks that when a request is built.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        let credential = Data("\(username):\(password)".utf8).base64EncodedString()
        return authorization("Basic \(credential)")
    }

    /// `Content-Disposition: value`.
    public static func contentDisposition(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Disposition", value: value)
    }

    /// `Content-Type: value`.
    public static func contentType(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Type", value: value)
    }

    /// `User-Agent: value`.
    public static func userAgent(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "User-Agent", value: value)
    }
}
