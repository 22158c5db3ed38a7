import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Debug descriptions of requests and responses, with credentials redacted.
enum DebugDescription {
    static let redacted = "<redacted>"

    /// Whether a header, query item, form field or JSON key holds a credential: `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, a name containing `token`, `secret`,
    /// `password`, an API key, a signature or a session, or one of `credentialHeaders`
    /// (lowercased): the names a request's own credentials were sent under. Word by word (split at
    /// `-`, `_`, `.` and camel case), also a name with the word `auth` (`X-Auth-Key`),
    /// `authentication…`, `authoriz…` or `credential(s)`, or one that ends in the word `key` after
    /// another word (`Ocp-Apim-Subscription-Key`, `X-Access-Key`, `clientKey`) — but not `author`,
    /// `keyword` or a lone `key`, unless `inURL`: a URL's `?key=` is how many APIs take their API
    /// key (Google's, for one), where a body's `"key"` is as often an object's name. So is a name
    /// whose last word is `verifier` (`code_verifier`, `oauth_verifier`), `assertion`
    /// (`client_assertion`, but not `client_assertion_type`), `passcode`, `otp` (`X-OTP`, but not
    /// `otp_enabled`), `pin` (`user_pin`, but not `pin_code`) or `sig` (a signed URL's `?sig=`),
    /// `jwt` (`X-JWT`, but not `jwt_alg`) or `bearer`. Never the names of ``publicHeaders``
    /// (unless among `credentialHeaders`).
    static func isSensitive(name: String, credentialHeaders: Set<String> = [], inURL: Bool = false) -> Bool {
        let lower = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lower) { return true }
        if !credentialHeaders.isEmpty, credentialHeaders.contains(lower) { return true }
        if publicHeaders.contains(lower) { return false }
        if ["token", "secret", "password", "passwd", "api_key", "apikey", "api-key", "signature", "session"]
            .contains(where: { lower.contains($0) })
        {
            return true
        }
        let words = words(of: name)
        if words.last == "key", words.count > 1 || inURL { return true }
        if let last = words.last,
            ["verifier", "assertion", "passcode", "otp", "pin", "sig", "jwt", "bearer"].contains(last)
        {
            return true
        }
        return words.contains { word in
            word == "auth" || word == "credential" || word == "credentials" || word.hasPrefix("authenticat")
                || word.hasPrefix("authoriz")
        }
    }

    /// Headers whose names look secret but whose values are not, and are what a 401 or a refused
    /// cross-origin request is debugged with: a server's challenge (`WWW-Authenticate: Bearer
    /// error="invalid_token", error_description="The access token expired"`, RFC 6750 §3, and its
    /// proxy's twin), and CORS's `Access-Control-Allow-Credentials: true`.
    static let publicHeaders: Set<String> = [
        "www-authenticate", "proxy-authenticate", "access-control-allow-credentials",
    ]

    /// Whether the field whose ``fieldKey(_:)`` is `key`, among fields whose keys are `siblings`,
    /// holds an OAuth authorization code: a `code` beside one of ``authorizationCodeSiblings`` —
    /// the callback's query (`?code=…&state=…`) or the token request's form or JSON — or a
    /// `device_code`. Names are compared word by word, so `redirectUri` and `deviceCode` count. A
    /// `code` among other fields (`?code=US`) is shown.
    static func isAuthorizationCode(key: String, siblings: Set<String>) -> Bool {
        if key == "device_code" { return true }
        return key == "code" && !siblings.isDisjoint(with: authorizationCodeSiblings)
    }

    /// The fields that come with an OAuth authorization code: in the callback (RFC 6749 §4.1.2,
    /// RFC 9207's `iss`, OpenID's `session_state`, the `scope` some providers add) and in the token
    /// request (§4.1.3, PKCE's `code_verifier`).
    static let authorizationCodeSiblings: Set<String> = [
        "state", "iss", "session_state", "scope", "grant_type", "redirect_uri", "client_id", "code_verifier",
    ]

    /// A name's words joined by `_`: `redirectUri`, `Redirect-URI` and `redirect_uri` are one key.
    static func fieldKey(_ name: String) -> String {
        words(of: name).joined(separator: "_")
    }

    /// The lowercased words of a name: split at anything but letters and digits, and where a
    /// lowercase letter or digit is followed by an uppercase one (`subscriptionKey`).
    static func words(of name: String) -> [String] {
        var words: [String] = []
        var word = ""
        var previousIsLowerOrDigit = false
        for scalar in name.unicodeScalars {
            guard scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) else {
                if !word.isEmpty { words.append(word) }
                word = ""
                previousIsLowerOrDigit = false
                continue
            }
            if scalar.properties.isUppercase, previousIsLowerOrDigit, !word.isEmpty {
                words.append(word)
                word = ""
            }
            word += String(scalar).lowercased()
            previousIsLowerOrDigit = !scalar.properties.isUppercase
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// The request as a `curl` command, credentials redacted, in the usage document's layout.
    ///
    /// A text body longer than ``shownBodyLimit`` bytes (once redacted) is cut there, as a
    /// response body is, and a line after the command says so: the command then sends only that
    /// much of it. A `Content-Length` header is left out: curl sends its own for the body it
    /// sends. `framed`: between two lines of `=`, as debug output logs it.
    ///
    /// The command replays the request as sent, where curl's options read text their own way: a
    /// `HEAD` is `--head` (`-X HEAD` would wait for a body that never comes), a header with an
    /// empty value is `-H "Name;"` (`-H "Name:"` removes the header), and a body starting with `@`
    /// is `--data-raw` (`-d "@…"` would send a local file instead).
    static func curl(_ request: URLRequest, credentialHeaders: Set<String> = [], framed: Bool = true) -> String {
        var lines = ["$ curl -v"]
        let method = request.httpMethod ?? "GET"
        lines.append(method == "HEAD" ? "--head" : "-X \(method)")
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
        // No `Content-Length`: curl counts the body it sends, which is not the request's when the
        // body is cut or, for an upload, left out; a length of its own would make it wait for bytes
        // that never come.
        for (name, value) in headers where !HTTPHeaders.namesMatch(name, "Content-Length") {
            let shown = isSensitive(name: name, credentialHeaders: credentialHeaders) ? redacted : value
            lines.append("-H \(quoted(shown.isEmpty ? "\(name);" : "\(name): \(shown)"))")
        }
        var note = ""
        if let body = request.httpBody, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8) {
                let contentType = request.value(forHTTPHeaderField: "Content-Type")
                let cleaned = redactedBody(text, contentType: contentType, credentialHeaders: credentialHeaders)
                let (shown, isCut) = shownPart(Data(cleaned.utf8)) ?? (cleaned, false)
                let option = shown.hasPrefix("@") ? "--data-raw" : "-d"
                lines.append("\(option) \(quoted(shown))")
                if isCut {
                    note = "\n# body cut: \(option) holds \(shown.utf8.count) of its \(body.count) bytes"
                }
            } else {
                lines.append("--data-binary <\(body.count) bytes>")
            }
        }
        lines.append(quoted(request.url.map(redactedURL) ?? ""))
        let command = lines.joined(separator: " \\\n    ") + note
        guard framed else { return command }
        let separator = "======================================="
        return separator + "\n" + command + "\n" + separator
    }

    /// The URL with any password and any secret-looking query value redacted, and so the values
    /// of a fragment of `name=value` pairs (`#access_token=…&state=…`, where an OAuth implicit
    /// grant returns its token). Works on the text, so nothing is re-encoded and nothing can trap.
    static func redactedURL(_ url: URL) -> String {
        redactedURL(url.absoluteString)
    }

    /// The same for the text of a URL, which may be relative or not a URL at all.
    static func redactedURL(_ text: String) -> String {
        var (text, query, fragment) = parts(ofURL: text)
        if let schemeEnd = text.range(of: "://") {
            let authority = text[schemeEnd.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@") {
                if let colon = authority[..<at].firstIndex(of: ":") {
                    text.replaceSubrange(authority.index(after: colon)..<at, with: redacted)
                } else if at > authority.startIndex {
                    // A user name without a password is how a token rides in a URL
                    // (`https://ghp_…@host`): that name is the secret.
                    text.replaceSubrange(authority.startIndex..<at, with: redacted)
                }
            }
        }
        if let query { text += "?" + redactedFields(query, inURL: true) }
        // A fragment of fields (`#access_token=…`) is read like a query; an anchor (`#top`) is not.
        if fragment.contains("=") { fragment = "#" + redactedFields(String(fragment.dropFirst()), inURL: true) }
        return text + fragment
    }

    /// A URL's text before its query, its query (without `?`; `nil` when there is no `?`), and its
    /// fragment (with `#`; empty when there is none).
    static func parts(ofURL text: String) -> (head: String, query: String?, fragment: String) {
        var head = Substring(text)
        var fragment = ""
        if let hash = head.firstIndex(of: "#") {
            fragment = String(head[hash...])
            head = head[..<hash]
        }
        guard let question = head.firstIndex(of: "?") else { return (String(head), nil, fragment) }
        return (String(head[..<question]), String(head[head.index(after: question)...]), fragment)
    }

    /// `name=value&…` with the values of secret-looking names (and `credentialHeaders`) redacted.
    /// An OAuth authorization code is redacted too (``isAuthorizationCode(key:siblings:)``).
    /// `inURL` for a URL's query or fragment, where a lone `key` is a credential too.
    static func redactedFields(_ encoded: String, credentialHeaders: Set<String> = [], inURL: Bool = false) -> String {
        let fields = encoded.split(separator: "&", omittingEmptySubsequences: false).map { field in
            // Empty pieces kept: in `=value` the name is empty, not `value`.
            let name =
                field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let decoded = name.removingPercentEncoding ?? name
            return (field: field, name: name, decoded: decoded, key: fieldKey(decoded))
        }
        let keys = Set(fields.map(\.key))
        return fields.map { field in
            isSensitive(name: field.decoded, credentialHeaders: credentialHeaders, inURL: inURL)
                || isAuthorizationCode(key: field.key, siblings: keys)
                ? "\(field.name)=\(redacted)" : String(field.field)
        }.joined(separator: "&")
    }

    /// A body that is a JSON object or array gets secret-looking keys redacted whatever its
    /// declared type — `application/json`, `+json` types such as `application/merge-patch+json`,
    /// a form type, or none — as response bodies do. Other form bodies get secret-looking fields
    /// redacted. Names in `credentialHeaders` count as secret-looking.
    static func redactedBody(_ text: String, contentType: String?, credentialHeaders: Set<String> = []) -> String {
        if let cleaned = redactedJSON(text, credentialHeaders: credentialHeaders) { return cleaned }
        if isForm(contentType) { return redactedFields(text, credentialHeaders: credentialHeaders) }
        if let lines = redactedJSONLines(Data(text.utf8), credentialHeaders: credentialHeaders) { return lines }
        return holdsJSON(text) ? redactedJSONText(text, credentialHeaders: credentialHeaders) : text
    }

    /// Whether `contentType` is `application/x-www-form-urlencoded`, with or without parameters.
    private static func isForm(_ contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    /// `text` compact, keys sorted, secret-looking keys redacted, if it is a JSON object or array;
    /// otherwise `nil`.
    private static func redactedJSON(_ text: String, credentialHeaders: Set<String>) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
            let cleaned = try? JSONSerialization.data(
                withJSONObject: redactJSON(object, credentialHeaders: credentialHeaders),
                options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(data: cleaned, encoding: .utf8)
    }

    private static func redactJSON(_ value: Any, credentialHeaders: Set<String>) -> Any {
        switch value {
        case let object as [String: Any]:
            let entries = object.map { (name: $0.key, key: fieldKey($0.key), element: $0.value) }
            let keys = Set(entries.map(\.key))
            var result: [String: Any] = [:]
            for entry in entries {
                // An authorization code is a string; a number (`"code": 42`) is an error's or a status's.
                result[entry.name] =
                    isSensitive(name: entry.name, credentialHeaders: credentialHeaders)
                        || (entry.element is String && isAuthorizationCode(key: entry.key, siblings: keys))
                    ? redacted : redactJSON(entry.element, credentialHeaders: credentialHeaders)
            }
            return result
        case let array as [Any]:
            return array.map { redactJSON($0, credentialHeaders: credentialHeaders) }
        case let string as String where holdsJSON(string):
            // JSON as a value — httpbin's echo of the request body in `data` — hides what the body
            // itself would: redacted inside, shown compact, still as a string.
            return redactedJSON(string, credentialHeaders: credentialHeaders)
                ?? redactedJSONText(string, credentialHeaders: credentialHeaders)
        case let string as String where isURL(string):
            // A URL as a value — an echo of the request, a link — hides what the request line
            // hides: a password in its authority, secret-looking query values.
            return redactedURL(string)
        default:
            return value
        }
    }

    /// Whether `text` may hold a JSON object or array: its first character but whitespace is `{`
    /// or `[`. Cheap, so that other strings are never parsed; one that only looks like JSON fails
    /// to parse and is shown as it is.
    private static func holdsJSON(_ text: String) -> Bool {
        guard let first = text.first(where: { !$0.isWhitespace }) else { return false }
        return first == "{" || first == "["
    }

    /// Whether `text` is a URL and nothing else: a scheme's `://`, no whitespace, and `URL` takes
    /// it. Prose that mentions a URL is left as it is.
    private static func isURL(_ text: String) -> Bool {
        text.contains("://") && !text.contains(where: \.isWhitespace) && URL(string: text) != nil
    }

    /// Double-quoted for a POSIX shell. Scalar by scalar: a shell reads bytes, and a `"`, `$` or
    /// `` ` `` followed by a combining mark is one `Character` with it, which a comparison of
    /// characters would leave unescaped (`"\u{301}; cmd` ended the word and ran `cmd`).
    static func quoted(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if "\\\"$`".unicodeScalars.contains(scalar) { escaped.append("\\") }
            escaped.append(scalar)
        }
        return "\"\(String(escaped))\""
    }

    /// Status, elapsed time, headers (redacted) and the body, pretty-printed when it is JSON.
    /// `credentialHeaders` are redacted as headers and as keys of the body (an echo of the request).
    static func response(_ response: Response, elapsed: TimeInterval, credentialHeaders: Set<String> = []) -> String {
        let milliseconds = Int((elapsed * 1000).rounded())
        var text = "\(response.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: response.statusCode))"
        text += " in \(milliseconds) ms — \(response.request.httpMethod ?? "GET") "
        text += response.url.map(redactedURL) ?? ""
        for header in response.headers {
            text += "\n\(header.name): \(shownValue(of: header, credentialHeaders: credentialHeaders))"
        }
        text +=
            "\n\n"
            + body(response.data, contentType: response.headers["Content-Type"], credentialHeaders: credentialHeaders)
        return text
    }

    /// A response header's value as debug output shows it: redacted under a secret-looking name,
    /// and the URLs in `Location`, `Content-Location`, `Link` and `Refresh` redacted as the request
    /// line is (a redirect to an implicit-grant callback carries its token in `Location`).
    static func shownValue(of header: HTTPHeader, credentialHeaders: Set<String> = []) -> String {
        if isSensitive(name: header.name, credentialHeaders: credentialHeaders) { return redacted }
        switch header.name.lowercased() {
        case "location", "content-location": return redactedURL(header.value)
        case "link": return redactedLinks(header.value)
        case "refresh": return redactedRefresh(header.value)
        default: return header.value
        }
    }

    /// A `Link` header's value (`<https://…>; rel="next", <…>; rel="prev"`) with the URL between
    /// each `<` and `>` redacted; the parameters as they were.
    private static func redactedLinks(_ value: String) -> String {
        var result = ""
        var rest = value[...]
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open] + redactedURL(String(rest[rest.index(after: open)..<close])) + ">"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// A `Refresh` header's value (`5; url=https://…`, the URL perhaps quoted) with its URL
    /// redacted.
    private static func redactedRefresh(_ value: String) -> String {
        guard let key = value.range(of: "url=", options: .caseInsensitive) else { return value }
        var url = value[key.upperBound...]
        var (opening, closing) = ("", "")
        if let first = url.first, first == "'" || first == "\"" {
            opening = String(first)
            url = url.dropFirst()
            if url.last == first {
                closing = opening
                url = url.dropLast()
            }
        }
        return value[..<key.upperBound] + opening + redactedURL(String(url)) + closing
    }

    /// Error description for a request that produced no response.
    static func failure(_ request: URLRequest, error: any Error, elapsed: TimeInterval) -> String {
        let milliseconds = Int((elapsed * 1000).rounded())
        let url = request.url.map(redactedURL) ?? ""
        return "\(request.httpMethod ?? "GET") \(url) failed after \(milliseconds) ms: \(error)"
    }

    /// A response body as debug output shows it: JSON pretty-printed with secret-looking keys
    /// redacted, whatever `contentType` says; a form (`application/x-www-form-urlencoded`) with
    /// secret-looking fields redacted, as a form request body is; other text as it is; binary data
    /// by its size. No more than ``shownBodyLimit`` bytes of the text are shown.
    static func body(_ data: Data, contentType: String? = nil, credentialHeaders: Set<String> = []) -> String {
        if data.isEmpty { return "<empty body>" }
        if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let pretty = try? JSONSerialization.data(
                withJSONObject: redactJSON(object, credentialHeaders: credentialHeaders),
                options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]),
            let text = shown(pretty, of: data)
        {
            return text
        }
        if isForm(contentType), let text = String(data: data, encoding: .utf8) {
            let cleaned = redactedFields(text, credentialHeaders: credentialHeaders)
            return shown(Data(cleaned.utf8), of: data) ?? cleaned  // UTF-8 in, cut where a character starts
        }
        if let lines = redactedJSONLines(data, credentialHeaders: credentialHeaders) {
            return shown(Data(lines.utf8), of: data) ?? lines
        }
        if let text = String(data: data, encoding: .utf8), holdsJSON(text) {
            let cleaned = redactedJSONText(text, credentialHeaders: credentialHeaders)
            return shown(Data(cleaned.utf8), of: data) ?? cleaned
        }
        return shown(data, of: data) ?? "<\(data.count) bytes of binary data>"
    }

    /// A body of JSON lines (NDJSON, JSON Lines: one JSON value a line, as streaming and export
    /// APIs answer), each line redacted as a JSON body is; `nil` unless every line that is not blank
    /// is JSON — a value `JSONSerialization` reads, or a line that holds an object or array it
    /// does not (``redactedJSONText(_:credentialHeaders:)``).
    private static func redactedJSONLines(_ data: Data, credentialHeaders: Set<String>) -> String? {
        guard data.contains(UInt8(ascii: "\n")), String(data: data, encoding: .utf8) != nil else { return nil }
        var lines: [String] = []
        // Split as bytes: to `String`, a CR LF is one character, which a split at LF misses.
        for bytes in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let line = String(decoding: bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes, as: UTF8.self)
            if line.allSatisfy(\.isWhitespace) {
                lines.append(line)
            } else if let redacted = redactedJSON(line, credentialHeaders: credentialHeaders) {
                lines.append(redacted)
            } else if holdsJSON(line) || isJSONValue(line) {
                // A string, number or literal line (a string may hold JSON), or an object or array
                // `JSONSerialization` does not read: redacted as written.
                lines.append(redactedJSONText(line, credentialHeaders: credentialHeaders))
            } else {
                return nil
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Whether `text` is one JSON value, a string, number or literal included.
    private static func isJSONValue(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }

    /// `text`, JSON that `JSONSerialization` does not read — a number too large for a `Double`, a
    /// lone surrogate escape, a body cut short or otherwise malformed, a JSON lines string — with
    /// the value of every secret-looking key (as ``redactJSON(_:credentialHeaders:)`` finds them)
    /// replaced by `"<redacted>"`, and a string holding JSON or a URL redacted as in a parsed body.
    /// Read token by token, not parsed: whatever can be read is redacted, and everything else is
    /// shown as written. A value runs to its closing quote or bracket, else to the next `,`, `}`,
    /// `]` or line end; one left open runs to the end of the text.
    static func redactedJSONText(_ text: String, credentialHeaders: Set<String>) -> String {
        let bytes = Array(text.utf8)
        let count = bytes.count
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "\r")
        }
        func skipSpace(from index: Int) -> Int {
            var index = index
            while index < count, isSpace(bytes[index]) { index += 1 }
            return index
        }
        /// The index after the string that starts at `start` (a `"`).
        func stringEnd(from start: Int) -> Int {
            var index = start + 1
            while index < count {
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 2
                } else if bytes[index] == UInt8(ascii: "\"") {
                    return index + 1
                } else {
                    index += 1
                }
            }
            return count
        }
        /// The index after the value that starts at `start`.
        func valueEnd(from start: Int) -> Int {
            guard start < count else { return count }
            switch bytes[start] {
            case UInt8(ascii: "\""):
                return stringEnd(from: start)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                var index = start
                while index < count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        index = stringEnd(from: index)
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return index + 1 }
                    default:
                        break
                    }
                    index += 1
                }
                return count
            default:
                var end = start
                while end < count, !",}]\n\r".utf8.contains(bytes[end]) { end += 1 }
                while end > start, isSpace(bytes[end - 1]) { end -= 1 }
                return end
            }
        }
        /// Whether the byte at `index` is escaped: an odd number of backslashes before it.
        func isEscaped(_ index: Int) -> Bool {
            var backslashes = 0
            while index - backslashes > 0, bytes[index - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
            return backslashes % 2 == 1
        }
        /// The string token `bytes[start..<end]`, unescaped.
        func decoded(_ start: Int, _ end: Int) -> String {
            let token = Data(bytes[start..<end])
            if let string = (try? JSONSerialization.jsonObject(with: token, options: [.fragmentsAllowed])) as? String {
                return string
            }
            // A lone surrogate, or a string left open: its escapes read one by one (a lone
            // surrogate as U+FFFD), so that `\u0074oken` is still `token`.
            let isClosed = end - start >= 2 && bytes[end - 1] == UInt8(ascii: "\"") && !isEscaped(end - 1)
            return unescaped(bytes[(start + 1)..<(isClosed ? end - 1 : end)])
        }
        /// Whether a `"` at `index` starts a key: a colon follows its string.
        func keyEnd(at index: Int) -> (stringEnd: Int, colon: Int)? {
            let end = stringEnd(from: index)
            let colon = skipSpace(from: end)
            return colon < count && bytes[colon] == UInt8(ascii: ":") ? (end, colon) : nil
        }

        // The keys' names, by where they start: every key's, for the siblings an authorization code
        // is told by, read once here for the pass that writes the output too.
        var names: [Int: String] = [:]
        var index = 0
        while index < count {
            guard bytes[index] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            let end = stringEnd(from: index)
            if keyEnd(at: index) != nil { names[index] = decoded(index, end) }
            index = end
        }
        let keys = Set(names.values.map(fieldKey))

        var output: [UInt8] = []
        output.reserveCapacity(count)
        index = 0
        while index < count {
            guard bytes[index] == UInt8(ascii: "\"") else {
                output.append(bytes[index])
                index += 1
                continue
            }
            if let (end, colon) = keyEnd(at: index) {
                // Not in `names` when the first pass started no string here (a redacted value
                // ended somewhere it read through): read now.
                let name = names[index] ?? decoded(index, end)
                let valueStart = skipSpace(from: colon + 1)
                let isString = valueStart < count && bytes[valueStart] == UInt8(ascii: "\"")
                if isSensitive(name: name, credentialHeaders: credentialHeaders)
                    || (isString && isAuthorizationCode(key: fieldKey(name), siblings: keys))
                {
                    output.append(contentsOf: bytes[index..<valueStart])
                    output.append(contentsOf: "\"\(redacted)\"".utf8)
                    index = valueEnd(from: valueStart)
                } else {
                    output.append(contentsOf: bytes[index..<end])
                    index = end
                }
                continue
            }
            // A string value: one that holds JSON or a URL is redacted as in a parsed body.
            let end = stringEnd(from: index)
            let value = decoded(index, end)
            if let cleaned = redactJSON(value, credentialHeaders: credentialHeaders) as? String, cleaned != value,
                let encoded = try? JSONSerialization.data(
                    withJSONObject: cleaned, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            {
                output.append(contentsOf: encoded)
            } else {
                output.append(contentsOf: bytes[index..<end])
            }
            index = end
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The text of a JSON string's contents, its escapes read one by one; a lone surrogate, or an
    /// escape cut short, becomes U+FFFD.
    private static func unescaped(_ bytes: ArraySlice<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        var plain: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: plain, as: UTF8.self).unicodeScalars)
            plain.removeAll()
        }
        func hex(at index: Int) -> UInt32? {
            guard index + 4 <= bytes.endIndex else { return nil }
            return UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.endIndex else {
                plain.append(bytes[index])
                index += 1
                continue
            }
            flush()
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): scalars.append("\u{8}")
            case UInt8(ascii: "f"): scalars.append("\u{C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                guard let unit = hex(at: index) else {
                    scalars.append("\u{FFFD}")
                    continue
                }
                index += 4
                if (0xD800..<0xDC00).contains(unit), bytes[index...].starts(with: "\\u".utf8),
                    let low = hex(at: index + 2), (0xDC00..<0xE000).contains(low)
                {
                    index += 6
                    scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
                } else {
                    scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                }
            default: scalars.append(Unicode.Scalar(escape))
            }
        }
        flush()
        return String(scalars)
    }

    /// How much of a body debug output shows: 64 KiB of its text, pretty-printed or not.
    static let shownBodyLimit = 64 * 1024

    /// `text`'s first ``shownBodyLimit`` bytes, cut where a character starts, and how long `body`
    /// is in all when that is not the whole of it; `nil` if `text` is not UTF-8.
    private static func shown(_ text: Data, of body: Data) -> String? {
        guard let (shown, isCut) = shownPart(text) else { return nil }
        return isCut ? shown + "\n… (\(body.count) bytes in all)" : shown
    }

    /// `text`'s first ``shownBodyLimit`` bytes, cut where a character starts, and whether that
    /// left anything out; `nil` if `text` is not UTF-8.
    private static func shownPart(_ text: Data) -> (text: String, isCut: Bool)? {
        guard text.count > shownBodyLimit else { return String(data: text, encoding: .utf8).map { ($0, false) } }
        var end = text.startIndex + shownBodyLimit
        while end > text.startIndex, text[end] & 0xC0 == 0x80 { end -= 1 }  // not inside a character
        return String(data: text[..<end], encoding: .utf8).map { ($0, true) }
    }
}
