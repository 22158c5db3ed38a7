import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one error type SwiftConnect produces, with a case per stage of the request pipeline.
///
/// Errors that an ``ErrorHandlerProtocol`` returns reach you unchanged; everything the library
/// itself detects is a `ConnectError`:
///
/// ```swift
/// switch error as? ConnectError {
/// case .unacceptableStatus(let response, let message)?:
///     print(response.statusCode, message ?? "")
/// case .cancelled?:
///     break  // the user navigated away
/// default:
///     print(error)
/// }
/// ```
public enum ConnectError: Error, Sendable {
    /// The connector could not be turned into a valid request; nothing was sent.
    case invalidRequest(InvalidRequestReason)
    /// The request could not be sent or its response not received (no connection, timeout, …).
    /// The underlying error is usually a `URLError`.
    case transport(underlying: any Error)
    /// The server answered with a status outside the acceptable range (200..<300 by default).
    /// `message` is what the error handler read from the body (`msg`, `message`, `messge`, `error`, `err`,
    /// `detail`; see ``ErrorHandler``).
    case unacceptableStatus(Response, message: String?)
    /// The response body could not be decoded into the type asked for.
    case decoding(DecodingFailure)
    /// A ``ResponseValidator`` rejected a successful response.
    case validationFailed(Response, underlying: any Error)
    /// The request was cancelled: by `Future.cancel()`, by `Connect.cancelAllRequests()`, or by
    /// cancelling the task that awaited it. Never a failure of the server or the network.
    case cancelled
    /// The server's answer was not an HTTP response.
    case invalidResponse
    /// The server redirected more times in a row than the redirect policy follows (ten by default;
    /// ``RedirectPolicy/follow(maximumHops:)``); the last redirect response is kept.
    case tooManyRedirects(Response)
    /// The work behind the future was dropped without completing it (its ``Promise`` was released).
    case abandoned
    /// An uploaded file did not deliver the content measured when the request was built: it
    /// changed size, disappeared or failed to read while it was being sent (or a stream ended
    /// before its declared length). The upload was aborted, so the server never received a
    /// complete body. `detail` says what happened.
    case uploadSourceChanged(File, detail: String)

    /// Whether this is a cancellation rather than a failure.
    public var isCancellation: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// Whether `error` says that work was cancelled: ``cancelled``, a `CancellationError` or a
    /// cancelled `URLError`.
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? ConnectError { return error.isCancellation }
        return URLError.code(of: error) == .cancelled
    }

    /// The response, where the server sent one.
    public var response: Response? {
        switch self {
        case .unacceptableStatus(let response, _), .tooManyRedirects(let response), .validationFailed(let response, _):
            return response
        case .decoding(let failure): return failure.response
        default: return nil
        }
    }

    /// The HTTP status code, where the server sent a response.
    public var statusCode: Int? { response?.statusCode }

    /// The response body, where the server sent a response.
    public var responseBody: Data? { response?.data }

    /// The error this one wraps, if any.
    public var underlyingError: (any Error)? {
        switch self {
        case .transport(let underlying), .validationFailed(_, let underlying): return underlying
        case .decoding(let failure): return failure.underlyingError
        case .invalidRequest(.encodingFailed(let underlying)), .invalidRequest(.parametersFailed(let underlying)):
            return underlying
        default: return nil
        }
    }
}

extension ConnectError: LocalizedError, CustomStringConvertible {
    /// A readable, single-line description of what went wrong.
    public var description: String {
        switch self {
        case .invalidRequest(let reason):
            return "Invalid request (nothing was sent): \(reason)"
        case .transport(let underlying):
            return "Transport error: \(Self.transportDescription(of: underlying))"
        case .unacceptableStatus(let response, let message):
            // Passwords and secret-looking query values redacted, as in debug output: errors get
            // printed and logged.
            let url = response.request.url.map(DebugDescription.redactedURL) ?? ""
            let target = response.request.httpMethod.map { "\($0) \(url)" }
            var text = "Unacceptable status \(response.statusCode)"
            if let target { text += " for \(target)" }
            // The server's text, on this one line: its line breaks would split it (and could start
            // a forged line in a log).
            let line = message?.split(whereSeparator: \.isNewline).joined(separator: " ") ?? ""
            if !line.isEmpty { text += ": \(line)" }
            return text
        case .decoding(let failure):
            return failure.description
        case .validationFailed(let response, let underlying):
            return "The response (status \(response.statusCode)) failed validation: \(underlying)"
        case .cancelled:
            return "The request was cancelled"
        case .invalidResponse:
            return "The server's answer was not an HTTP response"
        case .tooManyRedirects(let response):
            return "Too many redirects; the last one went to "
                + (response.headers["Location"].map { OneLine.escaped(DebugDescription.redactedURL($0)) } ?? "?")
        case .abandoned:
            return "The operation was dropped before it completed"
        case .uploadSourceChanged(let file, let detail):
            // Not "changed": the detail says what happened (a stream that could not be made, a read
            // that failed, a size that changed).
            return "The upload was aborted while file \(OneLine.escaped(file.description)) was being sent: "
                + OneLine.escaped(detail)
        }
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }

    /// The underlying error's own description — but for a `URLError` that has none, as
    /// FoundationNetworking gives a timeout ("The operation could not be completed. (NSURLErrorDomain
    /// error -1001.)"): what its code means, the code, and the URL it names (redacted).
    ///
    /// A Swift error of a transport's own (a `StubTransport` closure's) that is no
    /// `LocalizedError` has no localized description ("The operation could not be completed.
    /// (MyApp.Offline error 1.)"): its `description` is used, or, with none, what Swift prints
    /// for it (`Offline()`). Foundation's errors keep their localized description: their
    /// `description` lists their `userInfo`, URLs unredacted.
    static func transportDescription(of error: any Error) -> String {
        guard let urlError = URLError.bridged(error), urlError.userInfo[NSLocalizedDescriptionKey] == nil else {
            // Through `Any`: from `any Error`, the compiler takes the cast to succeed always (by NSError).
            if !(error is LocalizedError), !(error is CustomNSError), !(type(of: error) is NSError.Type) {
                // Its `description`, or with none, what Swift prints for it (`Offline()`).
                return String(describing: error)
            }
            return error.localizedDescription
        }
        var text = "\(meaning(of: urlError.code)) (NSURLErrorDomain error \(urlError.code.rawValue))"
        if let url = urlError.failingURL { text += " for \(DebugDescription.redactedURL(url))" }
        return text
    }

    private static func meaning(of code: URLError.Code) -> String {
        switch code {
        case .timedOut: return "The request timed out"
        case .cannotFindHost, .dnsLookupFailed: return "The server's host name could not be found"
        case .cannotConnectToHost: return "Could not connect to the server"
        case .networkConnectionLost: return "The network connection was lost"
        case .notConnectedToInternet: return "There is no network connection"
        case .secureConnectionFailed: return "A secure connection to the server could not be made"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid:
            return "The server's certificate is not trusted"
        case .badServerResponse, .cannotParseResponse: return "The server's response could not be read"
        case .zeroByteResource: return "The server sent no data"
        case .userAuthenticationRequired: return "The server asked for credentials"
        case .httpTooManyRedirects: return "Too many redirects"
        case .badURL: return "The URL is malformed"
        case .unsupportedURL: return "The URL is not supported"
        case .cancelled: return "The request was cancelled"
        default: return "The request failed"
        }
    }
}

/// Why a connector could not be turned into a request. Nothing was sent.
///
/// New reasons may be added as the library learns to catch more mistakes before sending: a
/// `switch` over them should end with `default:`.
public enum InvalidRequestReason: Sendable, Equatable, CustomStringConvertible {
    /// The base URL is not an absolute `http` or `https` URL with a host, and a port from 1 to
    /// 65535 if it names one; or it has a `{slot}`, which only an endpoint can have.
    case invalidBaseURL(String)
    /// The endpoint template is malformed (an unclosed `{`, an empty `{}` …).
    case malformedEndpoint(String, detail: String)
    /// The endpoint has a `{slot}` that no path parameter fills.
    case missingPathValue(slot: String)
    /// A path parameter names a slot the endpoint does not have.
    case unusedPathParameter(key: String)
    /// Two path parameters fill the same slot.
    case duplicatePathParameter(key: String)
    /// A path parameter's value is empty, which would leave an empty path segment.
    case emptyPathValue(key: String)
    /// A path parameter's value makes a path segment `.` or `..` (the value alone, or with the
    /// dots beside its slot). Encoded as `%2E`, it is still a step up the path to a server or proxy
    /// that decodes before it resolves dot-segments (RFC 3986 §6.2.2, and every WHATWG URL parser),
    /// so no encoding keeps it in its segment.
    case dotSegmentPathValue(key: String)
    /// More than one body was given (a JSON object, form fields and raw data are exclusive).
    case multipleBodies
    /// The method does not allow a body (GET, HEAD, TRACE; CONNECT is refused as
    /// ``invalidMethod(_:)`` before that).
    case bodyNotAllowed(method: String)
    /// The method is not a valid HTTP token, or is CONNECT, which opens a proxy's tunnel (its
    /// target is a `host:port`, not a URL's path) and cannot be sent as a request.
    case invalidMethod(String)
    /// A header name is not a valid token, or its value contains a control character other than
    /// tab; or a body's `Content-Type` is empty.
    case invalidHeader(name: String)
    /// A header frames the body — `Content-Length` or `Transfer-Encoding` — which the transport
    /// sets from the body itself. Set by hand, it could cut the body short, or send its rest as the
    /// start of another request on the same connection.
    case reservedHeader(name: String)
    /// The body could not be encoded (for example a `Double.nan` in a JSON body).
    case encodingFailed(underlying: any Error)
    /// A ``ParametersRepresentable`` of your own threw `underlying` while it applied its
    /// parameters (an API key it could not find, say).
    case parametersFailed(underlying: any Error)
    /// The username of ``AuthorizationToken/basic(username:password:)`` contains a colon, which
    /// Basic authentication cannot carry (RFC 7617): the server would read what follows it as the
    /// password.
    case invalidBasicUsername
    /// The token of an ``AuthorizationToken`` (`.bearer`, `.custom`, or `.header`'s value) is
    /// empty or only spaces, or a `.basic` username and password are both empty: the header would
    /// go out as `Authorization: Bearer` (or `Basic Og==`) with no credentials. A call without
    /// credentials returns `nil` as its token.
    case emptyToken
    /// The token of ``AuthorizationToken/bearer(token:)`` has a space or tab inside it, which
    /// RFC 6750's token cannot hold: most often a token given with its own `Bearer ` in front,
    /// which would go out as `Authorization: Bearer Bearer …`.
    case invalidBearerToken
    /// The pieces did not form a valid URL.
    case invalidURL(String)
    /// A URL chosen after the build — by an adapter, a retrier's `.redirect(to:)` or a redirect
    /// policy's `.followWith` — is not an absolute `http` or `https` URL with a host.
    case unsupportedURL(String)
    /// A file to upload does not exist.
    case fileNotFound(URL)
    /// A file to upload cannot be read: a directory, a device, a URL that is not a `file://` URL,
    /// or a file this process lacks permission to read.
    case fileNotReadable(URL)
    /// A multipart part's field name (a file's `key` or a form field's name) is empty or
    /// contains NUL.
    case invalidPartName(String)
    /// A file's name contains NUL.
    case invalidFileName(String)
    /// A file's media type is empty or is not printable ASCII (CR, LF and other control
    /// characters would break the part's headers).
    case invalidMimeType(String)
    /// A multipart boundary given in ``UploadOptions`` is not 1–70 RFC 2046 characters, or
    /// occurs in a field value or in a file given as `Data`.
    case invalidBoundary(String)
    /// The multipart body would be longer than `Int64.max` bytes: a stream's declared `length`
    /// may be any `UInt64`. Names the last file counted when the limit was passed.
    case bodyTooLarge(String)
    /// A timeout (the connector's, the configuration's, or one an adapter set) is NaN, zero or
    /// negative: no request can wait that long. See ``ConnectConfiguration/timeoutInterval``.
    case invalidTimeout(TimeInterval)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .invalidBaseURL(let url):
            if RequestBuilder.hasSlot(url) {
                return
                    "base URL '\(OneLine.escaped(DebugDescription.redactedURL(url)))' has a {slot}, which nothing fills: "
                    + "slots belong in the endpoint"
            }
            return
                "base URL '\(OneLine.escaped(DebugDescription.redactedURL(url)))' must be an absolute http or https URL with a host"
        case .malformedEndpoint(let endpoint, let detail):
            // An endpoint's own query may carry a key (`/geo?appid=…`): redacted as a URL's is.
            return "endpoint '\(OneLine.escaped(DebugDescription.redactedURL(endpoint)))' is malformed: \(detail)"
        case .missingPathValue(let slot):
            return "no path parameter fills the slot {\(OneLine.escaped(slot))}"
        case .unusedPathParameter(let key):
            return "path parameter '\(OneLine.escaped(key))' has no {\(OneLine.escaped(key))} slot in the endpoint"
        case .duplicatePathParameter(let key):
            return "path parameter '\(OneLine.escaped(key))' is given more than once"
        case .emptyPathValue(let key):
            return "path parameter '\(OneLine.escaped(key))' is empty"
        case .dotSegmentPathValue(let key):
            return
                "path parameter '\(OneLine.escaped(key))' makes a '.' or '..' path segment, which servers read as a step up the path"
        case .multipleBodies:
            return "more than one body was given (JSON object, form fields and raw data are exclusive)"
        case .bodyNotAllowed(let method):
            return "\(OneLine.escaped(method)) requests cannot carry a body"
        case .invalidMethod(let method):
            if HTTPMethod(rawValue: method).sent == .connect {
                return
                    "'\(OneLine.escaped(method))' opens a proxy's tunnel to a host and port: it cannot be sent as a request"
            }
            return "'\(OneLine.escaped(method))' is not a valid HTTP method"
        case .invalidHeader(let name):
            return
                "header '\(OneLine.escaped(name))' has an invalid name or value: a name that is not a token, a control character (CR, LF, NUL, …) in the value, or an empty Content-Type for a body"
        case .reservedHeader(let name):
            return "header '\(OneLine.escaped(name))' frames the body, which the transport does itself: leave it out"
        case .encodingFailed(let underlying):
            return "the body could not be encoded: \(underlying)"
        case .parametersFailed(let underlying):
            return "the connector's parameters could not be applied: \(underlying)"
        case .invalidBasicUsername:
            return "a Basic authentication username must not contain ':' (RFC 7617)"
        case .emptyToken:
            return "the authorization token is empty (return nil for a call without credentials)"
        case .invalidBearerToken:
            return "a Bearer token must not contain a space or tab (RFC 6750): give the token alone, without 'Bearer '"
        case .invalidURL(let url):
            return "'\(OneLine.escaped(DebugDescription.redactedURL(url)))' is not a valid URL"
        case .unsupportedURL(let url):
            return
                "'\(OneLine.escaped(DebugDescription.redactedURL(url)))' is not an absolute http or https URL with a host"
        case .fileNotFound(let url):
            return "no file to upload at \(Self.shown(file: url))"
        case .fileNotReadable(let url):
            return "\(Self.shown(file: url)) is not a regular file this process can read"
        case .invalidPartName(let name):
            return "multipart field name '\(OneLine.escaped(name))' is empty or contains NUL"
        case .invalidFileName(let name):
            return "file name '\(OneLine.escaped(name))' contains NUL"
        case .invalidMimeType(let type):
            return "media type '\(OneLine.escaped(type))' is empty or not printable ASCII"
        case .invalidBoundary(let boundary):
            return
                "multipart boundary '\(OneLine.escaped(boundary))' is not 1 to 70 RFC 2046 characters, or occurs in a field"
        case .bodyTooLarge(let name):
            return "file '\(OneLine.escaped(name))' makes the multipart body longer than \(Int64.max) bytes"
        case .invalidTimeout(let seconds):
            return "timeout \(seconds) s is not a positive number of seconds"
        }
    }

    /// A file's path, or a URL that is not a file URL, redacted as any URL in a description.
    private static func shown(file url: URL) -> String {
        OneLine.escaped(url.isFileURL ? url.path : DebugDescription.redactedURL(url))
    }

    /// Reasons are equal when they have the same case and values; `encodingFailed` and
    /// `parametersFailed` compare only the case.
    public static func == (lhs: InvalidRequestReason, rhs: InvalidRequestReason) -> Bool {
        switch (lhs, rhs) {
        case (.encodingFailed, .encodingFailed), (.parametersFailed, .parametersFailed): return true
        // Compared by value: their descriptions redact passwords and secret query values, which
        // would make different URLs equal.
        case (.invalidBaseURL(let left), .invalidBaseURL(let right)), (.invalidURL(let left), .invalidURL(let right)),
            (.unsupportedURL(let left), .unsupportedURL(let right)):
            return left == right
        case (.malformedEndpoint(let left, let leftDetail), .malformedEndpoint(let right, let rightDetail)):
            return left == right && leftDetail == rightDetail
        case (.fileNotFound(let left), .fileNotFound(let right)),
            (.fileNotReadable(let left), .fileNotReadable(let right)):
            return left == right
        default: return lhs.description == rhs.description
        }
    }
}

/// Details of a body that could not be decoded.
public struct DecodingFailure: Sendable, CustomStringConvertible {
    /// The type that was asked for.
    public let type: String
    /// The dot-separated key path decoded from, as asked for (`decoded(toType:keyPath:)`), if any.
    public let keyPath: String?
    /// Where in the body decoding failed: the dot-separated path from the body's top, array
    /// indices as numbers, ending with the missing key when a key was missing (`data.item.title`,
    /// `items.3.id`). `nil` when it failed at the top level: a body that is empty, is not JSON, or
    /// is not the kind of value the type decodes from. A value its type refuses may come with the
    /// path of the object holding it: its own `init(from:)` refused it there, or the decoder's path
    /// stopped short (on Linux, an ISO 8601 date in another format comes with the path of the
    /// object holding it, or none); ``reason`` then says "at or inside" that object.
    public let codingPath: String?
    /// What went wrong, in words (the coding path where the decoder stopped, a missing key …).
    public let reason: String
    /// The decoder's own error, if there was one.
    public let underlyingError: (any Error)?
    /// The response whose body failed to decode, when it came from a request.
    public let response: Response?

    /// Creates a failure — to test code of your own that handles ``ConnectError/decoding(_:)``.
    /// The library makes its own from the decoder's error.
    public init(
        type: String, keyPath: String?, codingPath: String? = nil, reason: String, underlyingError: (any Error)?,
        response: Response?
    ) {
        self.type = type
        self.keyPath = keyPath
        self.codingPath = codingPath
        self.reason = reason
        self.underlyingError = underlyingError
        self.response = response
    }

    /// A readable explanation naming the type, the key path and the reason.
    public var description: String {
        // On one line: the reason quotes keys and values the server chose.
        var text = "Could not decode \(type)"
        if let keyPath { text += " at key path '\(OneLine.escaped(keyPath))'" }
        text += ": \(OneLine.escaped(reason))"
        if let response { text += " (status \(response.statusCode), \(response.data.count) bytes)" }
        return text
    }
}

extension URLError {
    /// The code of `error` if it is a `URLError`, or an `NSError` in `NSURLErrorDomain`: on Linux,
    /// `as? URLError` does not bridge such an `NSError`, as it does on Apple platforms.
    static func code(of error: any Error) -> URLError.Code? {
        bridged(error)?.code
    }

    /// `error` as a `URLError`: itself, or an `NSError` in `NSURLErrorDomain` with its code and
    /// `userInfo`; `nil` for any other error.
    static func bridged(_ error: any Error) -> URLError? {
        if let urlError = error as? URLError { return urlError }
        // Through `Any`: from `any Error`, the compiler takes a cast to NSError to succeed always.
        guard let error = (error as Any) as? NSError, error.domain == NSURLErrorDomain,
            let code = URLError.Code(rawValue: error.code)
        else { return nil }
        return URLError(code, userInfo: error.userInfo)
    }
}
