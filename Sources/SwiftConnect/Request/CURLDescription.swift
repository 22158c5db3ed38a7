import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Debug descriptions of requests and responses, with credentials redacted.
enum DebugDescription {
    static let redacted = "<redacted>"

    /// Header names whose values are never printed.
    static func isSensitive(headerName name: String) -> Bool {
        let lower = name.lowercased()
        if ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lower) { return true }
        return isSensitive(name: lower)
    }

    /// Query or header names that look like secrets: `token`, `secret`, `password`, API keys.
    static func isSensitive(name: String) -> Bool {
        let lower = name.lowercased()
        return ["token", "secret", "password", "passwd", "api_key", "apikey", "api-key", "signature", "session"]
            .contains { lower.contains($0) }
    }

    /// The request as a `curl` command, credentials redacted, in the usage document's layout.
    static func curl(_ request: URLRequest) -> String {
        var lines = ["$ curl -v"]
        lines.append("-X \(request.httpMethod ?? "GET")")
        let headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
        for (name, value) in headers {
            let shown = isSensitive(headerName: name) ? redacted : value
            lines.append("-H \(quoted("\(name): \(shown)"))")
        }
        if let body = request.httpBody, !body.isEmpty {
            if let text = String(data: body, encoding: .utf8) {
                lines.append("-d \(quoted(redactedBody(text, contentType: request.value(forHTTPHeaderField: "Content-Type"))))")
            } else {
                lines.append("--data-binary <\(body.count) bytes>")
            }
        }
        lines.append(quoted(request.url.map(redactedURL) ?? ""))
        let separator = "======================================="
        return separator + "\n" + lines.joined(separator: " \\\n    ") + "\n" + separator
    }

    /// The URL with any password and any secret-looking query value redacted.
    static func redactedURL(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        if components.password != nil { components.password = redacted }
        if let items = components.percentEncodedQueryItems, items.contains(where: { isSensitive(name: $0.name) }) {
            components.percentEncodedQueryItems = items.map { item in
                isSensitive(name: item.name) ? URLQueryItem(name: item.name, value: redacted) : item
            }
        }
        return components.string ?? url.absoluteString
    }

    /// Form bodies get secret-looking fields redacted; JSON bodies get secret-looking keys redacted.
    static func redactedBody(_ text: String, contentType: String?) -> String {
        let type = contentType?.lowercased() ?? ""
        if type.hasPrefix("application/x-www-form-urlencoded") {
            return text.split(separator: "&", omittingEmptySubsequences: false).map { field in
                let name = field.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                return isSensitive(name: name.removingPercentEncoding ?? name) ? "\(name)=\(redacted)" : String(field)
            }.joined(separator: "&")
        }
        if type.hasPrefix("application/json"), let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data),
            let cleaned = try? JSONSerialization.data(withJSONObject: redactJSON(object), options: [.sortedKeys]),
            let cleanedText = String(data: cleaned, encoding: .utf8)
        {
            return cleanedText
        }
        return text
    }

    private static func redactJSON(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            var result: [String: Any] = [:]
            for (key, element) in object {
                result[key] = isSensitive(name: key) ? redacted : redactJSON(element)
            }
            return result
        case let array as [Any]:
            return array.map(redactJSON)
        default:
            return value
        }
    }

    /// Double-quoted for a POSIX shell.
    static func quoted(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\\"$`".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return "\"\(escaped)\""
    }

    /// Status, elapsed time, headers (redacted) and the body, pretty-printed when it is JSON.
    static func response(_ response: Response, elapsed: TimeInterval) -> String {
        let milliseconds = Int((elapsed * 1000).rounded())
        var text = "\(response.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: response.statusCode))"
        text += " in \(milliseconds) ms — \(response.request.httpMethod ?? "GET") "
        text += response.url.map(redactedURL) ?? ""
        for header in response.headers {
            text += "\n\(header.name): \(isSensitive(headerName: header.name) ? redacted : header.value)"
        }
        text += "\n\n" + body(response.data)
        return text
    }

    /// Error description for a request that produced no response.
    static func failure(_ request: URLRequest, error: any Error, elapsed: TimeInterval) -> String {
        let milliseconds = Int((elapsed * 1000).rounded())
        let url = request.url.map(redactedURL) ?? ""
        return "\(request.httpMethod ?? "GET") \(url) failed after \(milliseconds) ms: \(error)"
    }

    static func body(_ data: Data) -> String {
        if data.isEmpty { return "<empty body>" }
        if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let pretty = try? JSONSerialization.data(
                withJSONObject: redactJSON(object), options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed]),
            let text = String(data: pretty, encoding: .utf8)
        {
            return text
        }
        if let text = String(data: data.prefix(64 * 1024), encoding: .utf8) {
            return data.count > 64 * 1024 ? text + "\n… (\(data.count) bytes in all)" : text
        }
        return "<\(data.count) bytes of binary data>"
    }
}
