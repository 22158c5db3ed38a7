import Foundation

/// Turns an error response (a status outside the acceptable range) into the error you want to see.
///
/// Implement ``handle(response:)`` — it receives the JSON object the server sent — and return your
/// error, or `nil` to treat the response as a success after all:
///
/// ```swift
/// struct APIErrorHandler: ErrorHandlerProtocol {
///     func handle(response: [String: Any]) -> Error? {
///         APIError(code: response["code"] as? String ?? "unknown")
///     }
/// }
/// let connect = Connect(middleware: ConnectMiddleware(), errorHandler: APIErrorHandler())
/// ```
///
/// The error you return reaches the future's observers unchanged. ``handle(response:)`` is asked
/// for every unacceptable status: with `[:]` when the body is empty or not a JSON object (an
/// array, text, HTML). Implement ``handle(_:)`` to see the whole ``Response``.
public protocol ErrorHandlerProtocol: Sendable {
    /// Returns the error for an error response's JSON object, or `nil` to accept the response.
    func handle(response: [String: Any]) -> Error?

    /// Like ``handle(response:)``, also given the status code. The default calls
    /// ``handle(response:)``.
    func handle(response: [String: Any], statusCode: Int) -> Error?

    /// Returns the error for a whole error response, or `nil` to accept it.
    ///
    /// The default parses the body as a JSON object and calls ``handle(response:statusCode:)``
    /// with it, or with `[:]` for any other body.
    func handle(_ response: Response) -> Error?
}

extension ErrorHandlerProtocol {
    /// Calls ``handle(response:)``.
    public func handle(response: [String: Any], statusCode: Int) -> Error? {
        handle(response: response)
    }

    /// Parses a JSON object body and calls ``handle(response:statusCode:)`` with it, or with `[:]`
    /// when the body is empty or not a JSON object: the handler decides for every unacceptable
    /// status, as the usage document promises.
    public func handle(_ response: Response) -> Error? {
        handle(response: ErrorHandler.jsonObject(in: response.data) ?? [:], statusCode: response.statusCode)
    }
}

/// The default error handler: reads the server's message from the first of `msg`, `message`,
/// `messge`, `error`, `err` and `detail` (in a JSON object, or in each object of a JSON array, whose
/// strings are messages too) and fails with ``ConnectError/unacceptableStatus(_:message:)``, which
/// carries the status code, the headers and the body too. (`messge` is the spelling the original
/// SwiftConnect documented; both spellings are read.)
///
/// Two standard shapes are read as well: an OAuth 2.0 error (RFC 6749 §5.2) gives its `error` code
/// and its `error_description` together (`invalid_token: The access token expired`), and RFC 9457
/// problem details (`application/problem+json`) give their `detail`, or their `title` when there
/// is no `detail`.
public struct ErrorHandler: ErrorHandlerProtocol {
    /// The keys looked up for the server's message, in order.
    ///
    /// An `application/problem+json` body with no message under any of them gives its `title`.
    public let messageKeys: [String]

    /// Creates a handler that reads the message from `messageKeys`, in order.
    public init(messageKeys: [String] = ["msg", "message", "messge", "error", "err", "detail"]) {
        self.messageKeys = messageKeys
    }

    /// Returns an ``ErrorMessage`` with the server's message (or a generic one).
    public func handle(response: [String: Any]) -> Error? {
        ErrorMessage(message: message(in: response) ?? "The server reported an error")
    }

    /// Fails with ``ConnectError/unacceptableStatus(_:message:)``, with the message found in a
    /// JSON body (an object, or an array of objects and strings), the `title` of RFC 9457 problem
    /// details without one, or a short plain-text body's text.
    public func handle(_ response: Response) -> Error? {
        let json = Self.json(in: response.data)
        let message = jsonMessage(in: json) ?? Self.problemTitle(of: json, in: response)
        return ConnectError.unacceptableStatus(response, message: message ?? ErrorHandler.textMessage(in: response))
    }

    /// The `title` of an `application/problem+json` body (RFC 9457), `json` parsed, which says
    /// what kind of problem it is when there is no `detail`; `nil` for any other body.
    private static func problemTitle(of json: Any?, in response: Response) -> String? {
        guard let contentType = response.headers["Content-Type"]?.lowercased(),
            contentType.hasPrefix("application/problem+json")
        else { return nil }
        return (json as? [String: Any])?["title"].flatMap(said)
    }

    /// The message in a parsed JSON body: an object's (``message(in:)``), or, for an array such as
    /// Salesforce's `[{"message": "…", "errorCode": "…"}]`, those of its objects and its strings,
    /// joined with `; `.
    private func jsonMessage(in json: Any?) -> String? {
        switch json {
        case let object as [String: Any]: return message(in: object)
        case let array as [Any]: return Self.joinedMessages(of: array, readingObjects: message(in:))
        default: return nil
        }
    }

    /// The server's message in `json`: the first message key holding a string, a string inside a
    /// nested object (`{"error": {"message": "…"}}`), or strings in an array, joined. Blank strings
    /// (`""`, spaces) say nothing and are passed over, so the next key is read. An `error` string
    /// with an `error_description` beside it (OAuth 2.0, RFC 6749 §5.2) gives both:
    /// `invalid_token: The access token expired`.
    public func message(in json: [String: Any]) -> String? {
        for key in messageKeys {
            guard let value = json[key] else { continue }
            guard let text = Self.text(of: value, keys: messageKeys) else { continue }
            // OAuth's `error` is a code; the words that explain it are in `error_description`.
            if key == "error", value is String, let description = json["error_description"].flatMap(Self.said) {
                return "\(text): \(description)"
            }
            return text
        }
        return nil
    }

    private static func text(of value: Any, keys: [String]) -> String? {
        switch value {
        case let string as String:
            return said(string)
        case let object as [String: Any]:
            return keys.lazy.compactMap { key in object[key].flatMap(said) }.first
        case let array as [Any]:
            return joinedMessages(of: array) { text(of: $0, keys: keys) }
        default:
            return nil
        }
    }

    /// The messages of `array`'s objects (as `readObject` reads them) and its strings, joined with
    /// `; `; `nil` when there is none.
    private static func joinedMessages(of array: [Any], readingObjects readObject: ([String: Any]) -> String?)
        -> String?
    {
        let messages = array.compactMap { element -> String? in
            if let object = element as? [String: Any] { return readObject(object) }
            return said(element)
        }
        return messages.isEmpty ? nil : messages.joined(separator: "; ")
    }

    /// `value` if it is a string that says something; `nil` for anything else, `""` and spaces
    /// included.
    private static func said(_ value: Any) -> String? {
        guard let string = value as? String, !string.allSatisfy(\.isWhitespace) else { return nil }
        return string
    }

    static func jsonObject(in data: Data) -> [String: Any]? {
        json(in: data) as? [String: Any]
    }

    /// The JSON value of a body; `nil` for an empty body or one that is not JSON.
    private static func json(in data: Data) -> Any? {
        guard !data.isEmpty else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }

    /// A short `text/plain` body, trimmed; `nil` for anything else. Read in the charset its
    /// `Content-Type` names: UTF-8 (the default), US-ASCII, ISO-8859-1 (`latin1`), windows-1252,
    /// UTF-16 or UTF-32.
    static func textMessage(in response: Response) -> String? {
        guard let contentType = response.headers["Content-Type"]?.lowercased(),
            contentType.hasPrefix("text/plain"), response.data.count <= 1024,
            let text = String(data: response.data, encoding: encoding(of: contentType))
        else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The encoding a lowercased `Content-Type`'s `charset` parameter names, among the few that
    /// plain-text error bodies come in; UTF-8 for any other, or none.
    private static func encoding(of contentType: String) -> String.Encoding {
        guard let range = contentType.range(of: "charset=") else { return .utf8 }
        let charset = contentType[range.upperBound...].prefix { $0 != ";" }
            .trimmingCharacters(in: CharacterSet(charactersIn: "\" \t"))
        switch charset {
        case "iso-8859-1", "latin1", "iso_8859-1", "l1": return .isoLatin1
        case "windows-1252", "cp1252": return .windowsCP1252
        case "us-ascii", "ascii": return .ascii
        case "utf-16": return .utf16  // a byte order mark says which; without one, big-endian (RFC 2781)
        case "utf-16le": return .utf16LittleEndian
        case "utf-16be": return .utf16BigEndian
        case "utf-32": return .utf32
        case "utf-32le": return .utf32LittleEndian
        case "utf-32be": return .utf32BigEndian
        default: return .utf8
        }
    }
}

/// An error carrying only the server's message; what ``ErrorHandler/handle(response:)`` returns
/// when called directly.
public struct ErrorMessage: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The server's message.
    public let message: String

    /// Creates an error with `message`.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// The message, also as `localizedDescription`.
    public var errorDescription: String? { message }
}
