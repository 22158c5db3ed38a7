/// An HTTP request method; an open set with the standard methods as static members.
///
/// ```swift
/// let method: HTTPMethod = .put
/// let custom = HTTPMethod(rawValue: "PROPFIND")
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method's name as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its wire name. Names are case-sensitive; an invalid token is
    /// reported as ``InvalidRequestReason/invalidMethod(_:)`` when a request is built.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `CONNECT`
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE`
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET`
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH`
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST`
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY`
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE`
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2):
    /// GET, HEAD, PUT, DELETE, OPTIONS, TRACE and QUERY, as URLSession sends them (`"get"` is GET).
    public var isIdempotent: Bool {
        switch sent {
        case .get, .head, .put, .delete, .options, .trace, .query: return true
        default: return false
        }
    }

    /// Whether a request with this method may carry a body. GET and HEAD may not, in whatever case
    /// they are given (URLSession sends `"get"` as GET), nor TRACE (RFC 9110 §9.3.8: a client must
    /// not send content with it) or CONNECT.
    public var allowsBody: Bool {
        let sent = sent
        return sent != .get && sent != .head && sent != .trace && sent != .connect
    }

    /// Whether a request can be sent with this method, as URLSession sends it: a token (RFC 9110
    /// §9.1; a space or a line break would rewrite the request line), and not CONNECT, whose
    /// target is a `host:port` (RFC 9110 §9.3.6) that a URL's path cannot give: it opens a
    /// proxy's tunnel, which URLSession does itself.
    ///
    /// The usual methods are answered by comparing strings, which costs next to nothing when they
    /// are equal; reading their bytes and comparing them with CONNECT cost about 170 instructions
    /// a request built.
    var isSendable: Bool {
        switch rawValue {
        case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS": return true
        default: return ASCIISet.isToken(rawValue) && self != .connect
        }
    }

    /// The method as URLSession sends it. Names are case-sensitive (RFC 9110), but URLSession
    /// writes GET, HEAD, POST, PUT, DELETE and CONNECT in uppercase whatever case they are given
    /// in, so `HTTPMethod(rawValue: "get")` goes out as `GET`. Requests are built, checked and
    /// retried by this method, so what is checked is what is sent.
    var sent: HTTPMethod {
        switch rawValue {
        case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT": return self
        default: break
        }
        // Method names are tokens, as header names are: the same ASCII-case comparison.
        for method in [HTTPMethod.get, .head, .post, .put, .delete, .connect]
        where HTTPHeaders.namesMatch(rawValue, method.rawValue) {
            return method
        }
        return self
    }

    /// The wire name.
    public var description: String { rawValue }
}
