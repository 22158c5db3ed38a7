import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How `Connect` follows redirects: the rules browsers follow, without leaking credentials.
///
/// - `301`, `302` turn `POST` into `GET`; `303` turns anything but `HEAD` into `GET`; the body and
///   its headers go.
/// - `307`, `308` keep the method and the body.
/// - On a hop to another origin (scheme, host or port), `Authorization`, `Cookie`,
///   `Proxy-Authorization` and other credential headers (`X-API-Key`, …) are removed, and so is a
///   user and password in the URL; a `Host` header set by hand is left out too, so that the
///   transport writes the new URL's.
enum RedirectSafety {
    /// The statuses that are followed.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Whether a header is never sent to another origin: `Authorization`, `Cookie`,
    /// `Proxy-Authorization`, and any header whose name says it carries a credential (`X-API-Key`,
    /// `X-Auth-Token`, …), the same rule debug output redacts by.
    ///
    /// `credentialHeaders` adds names, lowercased, that carry a credential for this request: the
    /// header of the connector's `AuthorizationToken.header(name:value:)` or of a
    /// ``TokenAuthenticator``'s `header:`, whatever it is called.
    static func isCredential(_ headerName: String, credentialHeaders: Set<String> = []) -> Bool {
        DebugDescription.isSensitive(name: headerName, credentialHeaders: credentialHeaders)
    }
    /// Headers describing a body, removed with it when a redirect turns the request into a `GET`:
    /// RFC 9110's list (§15.4: `Content-Encoding`, `Content-Language`, `Content-Location`,
    /// `Content-Type`, `Content-Length`, `Digest`, `Last-Modified`, "including but not limited
    /// to"), with the other fields that describe a body's bytes or its range.
    static let bodyHeaders = [
        "Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location",
        "Content-Range", "Content-MD5", "Content-Digest", "Repr-Digest", "Digest", "Last-Modified",
    ]

    /// The request to send next for a redirect response, or `nil` when `response` is not a
    /// redirect that can be followed (not a redirect status, or no usable `Location`).
    ///
    /// A usable `Location` leads, resolved against the response's URL, where a build may send
    /// a request (``RequestBuilder/hasHTTPSchemeAndHost(_:)``): an `http` or `https` URL with a
    /// host, and a port from 1 to 65535 if it names one. `http:///x`, `https://` or
    /// `http://host:0/` are not followed (the transport could only fail on them), as `ftp://`
    /// is not.
    static func request(
        following response: HTTPURLResponse, from previous: URLRequest, credentialHeaders: Set<String> = []
    ) -> URLRequest? {
        guard redirectStatuses.contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"), !location.isEmpty,
            let base = response.url ?? previous.url,
            let target = URL(string: location, relativeTo: base)?.absoluteURL,
            RequestBuilder.hasHTTPSchemeAndHost(target.absoluteString)
        else { return nil }

        var request = previous
        request.url = target.lowercasingScheme ?? target  // `Location: HTTP://…`
        let method = previous.httpMethod ?? "GET"
        let becomesGet: Bool
        switch response.statusCode {
        case 303: becomesGet = method != "HEAD"
        case 301, 302: becomesGet = method == "POST"
        default: becomesGet = false
        }
        if becomesGet {
            request.httpMethod = "GET"
            request.httpBody = nil
            for name in bodyHeaders { request.setValue(nil, forHTTPHeaderField: name) }
        }
        // A `Host` set by hand names the server it was set for (libcurl sends it in place of the
        // URL's): sent on to another origin, it would ask that server for the first one's site.
        // The transport writes the new URL's own, as curl does when it follows a redirect.
        if !isSameOrigin(previous.url, request.url) { request.setValue(nil, forHTTPHeaderField: "Host") }
        return removingCredentials(from: request, unlessSentTo: previous.url, credentialHeaders: credentialHeaders)
    }

    /// The request a policy's `.followWith` decision sends: `chosen` as the policy made it, held
    /// to the build's rules (`URLRequest.checkedForSending(keepingContentLength:)`;
    /// `keepingContentLength` for an upload's hop), but without credential headers unless it goes
    /// to `credentialOrigin`, the origin of the first request sent — whichever headers the policy
    /// copied into it, from whichever hop. (Measured from the hop just answered instead, a
    /// credential copied from the first request went on to a second origin once the first hop
    /// had landed there.)
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)`` for a request the build would have refused.
    static func request(
        chosen: URLRequest, credentialOrigin: URL?, credentialHeaders: Set<String> = [],
        keepingContentLength: Bool = false
    ) throws -> URLRequest {
        removingCredentials(
            from: try chosen.checkedForSending(keepingContentLength: keepingContentLength),
            unlessSentTo: credentialOrigin, credentialHeaders: credentialHeaders)
    }

    /// Removes credential headers from `request` unless it goes to the same origin as `origin`,
    /// and a user and password in its URL (`https://user:password@host/`): URLSession sends those
    /// as an `Authorization: Basic` header.
    ///
    /// `adaptedFrom` is the request before the adapters ran, for a request they made: the query
    /// items they added whose names say they carry a credential (`api_key`, `access_token`, …, the
    /// rule headers go by) are removed too. Query items already in `adaptedFrom`'s URL stay: a
    /// retrier chose that URL, a pre-signed one's signature included.
    static func removingCredentials(
        from request: URLRequest, adaptedFrom: URLRequest? = nil, unlessSentTo origin: URL?,
        credentialHeaders: Set<String> = []
    ) -> URLRequest {
        guard !isSameOrigin(origin, request.url) else { return request }
        var request = request
        if let adaptedFrom, let url = request.url {
            request.url = removingQueryCredentials(
                from: url, notIn: adaptedFrom.url, credentialHeaders: credentialHeaders)
        }
        if let withoutUserInfo = request.url?.removingUserInfo { request.url = withoutUserInfo }
        let names = request.allHTTPHeaderFields?.keys.filter {
            isCredential($0, credentialHeaders: credentialHeaders)
        }
        for name in names ?? [] {
            request.setValue(nil, forHTTPHeaderField: name)
        }
        return request
    }

    /// `url` without the query items that are not in `original`'s query (counted, so a second
    /// `key=value` added to one already there goes too) and whose names say they carry a
    /// credential. Works on the text, as debug output's redaction does, so the items that stay
    /// go out byte for byte as they were.
    static func removingQueryCredentials(from url: URL, notIn original: URL?, credentialHeaders: Set<String>) -> URL {
        let (head, query, fragment) = DebugDescription.parts(ofURL: url.absoluteString)
        guard let query else { return url }
        var kept: [String: Int] = [:]
        if let original, let originalQuery = DebugDescription.parts(ofURL: original.absoluteString).query {
            for field in originalQuery.split(separator: "&", omittingEmptySubsequences: false) {
                kept[String(field), default: 0] += 1
            }
        }
        var removed = false
        let fields = query.split(separator: "&", omittingEmptySubsequences: false).filter { field in
            if let count = kept[String(field)], count > 0 {
                kept[String(field)] = count - 1
                return true
            }
            let name = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let isCredential = DebugDescription.isSensitive(
                name: name.removingPercentEncoding ?? String(name), credentialHeaders: credentialHeaders, inURL: true)
            removed = removed || isCredential
            return !isCredential
        }
        guard removed else { return url }
        let text = head + (fields.isEmpty ? "" : "?" + fields.joined(separator: "&")) + fragment
        // Fewer pieces of a URL that parsed parse again; should one not, no query goes rather
        // than the credential.
        return URL(string: text) ?? URL(string: head + fragment) ?? url
    }

    /// Whether two URLs share scheme, host and port (default ports made explicit).
    static func isSameOrigin(_ lhs: URL?, _ rhs: URL?) -> Bool {
        guard let lhs, let rhs else { return false }
        func origin(_ url: URL) -> String {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
        }
        return origin(lhs) == origin(rhs)
    }

    /// Whether a challenge asks for the user's credentials (Basic, Digest, …) rather than about TLS.
    static func isServerAuthentication(_ method: String) -> Bool {
        [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodHTMLForm, NSURLAuthenticationMethodDefault,
        ].contains(method)
    }
}
