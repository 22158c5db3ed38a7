import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// This request held to the rules a build enforces, for a request made outside the build — by
    /// adapters, a retrier's `.redirect(to:)` or a redirect policy's `.followWith` — before it is
    /// sent:
    /// - an absolute `http` or `https` URL with a host, its scheme lowercased (URLSession on Linux
    ///   refuses `HTTP://`);
    /// - a method that can be sent (``HTTPMethod/isSendable``: a token, not CONNECT), and no body
    ///   on a method that takes none (GET, HEAD, TRACE), as URLSession sends the method;
    /// - every header valid (``HTTPHeader/isValid``): `URLRequest` keeps a name that is not a
    ///   token, and a value with CR or LF set through `allHTTPHeaderFields`, which would corrupt
    ///   the request on the wire; and its value without the spaces and tabs around it
    ///   (``HTTPHeader/trimmedValue``), as a build sends it: libcurl drops a header whose value is
    ///   only spaces;
    /// - no header framing the body (``HTTPHeader/isFraming``), but for the `Content-Length` of an
    ///   upload when `keepingContentLength` (the transport sets that one again from the body);
    /// - a timeout URLSession can take (``RequestTimeout``), rounded as a build rounds it.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)``: ``InvalidRequestReason/unsupportedURL(_:)``,
    ///   ``InvalidRequestReason/invalidMethod(_:)``, ``InvalidRequestReason/bodyNotAllowed(method:)``,
    ///   ``InvalidRequestReason/invalidHeader(name:)``, ``InvalidRequestReason/reservedHeader(name:)``
    ///   (the first by name), or ``InvalidRequestReason/invalidTimeout(_:)``.
    func checkedForSending(keepingContentLength: Bool = false) throws -> URLRequest {
        var request = self
        guard let url, RequestBuilder.hasHTTPSchemeAndHost(url.absoluteString) else {
            throw ConnectError.invalidRequest(.unsupportedURL(url?.absoluteString ?? ""))
        }
        if let lowercased = url.lowercasingScheme { request.url = lowercased }
        let method = HTTPMethod(rawValue: httpMethod ?? HTTPMethod.get.rawValue).sent
        guard method.isSendable else {
            throw ConnectError.invalidRequest(.invalidMethod(method.rawValue))
        }
        if httpBody != nil || httpBodyStream != nil, !method.allowsBody {
            throw ConnectError.invalidRequest(.bodyNotAllowed(method: method.rawValue))
        }
        if let fields = allHTTPHeaderFields {
            let headers = fields.map { HTTPHeader(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
            if let invalid = headers.first(where: { !$0.isValid }) {
                throw ConnectError.invalidRequest(.invalidHeader(name: invalid.name))
            }
            if let framing = headers.first(where: { $0.isFraming && !(keepingContentLength && $0.isContentLength) }) {
                throw ConnectError.invalidRequest(.reservedHeader(name: framing.name))
            }
            for header in headers {
                let trimmed = header.trimmedValue
                if trimmed.utf8.count != header.value.utf8.count {
                    request.setValue(trimmed, forHTTPHeaderField: header.name)
                }
            }
        }
        guard let timeout = RequestTimeout.sendable(timeoutInterval) else {
            throw ConnectError.invalidRequest(.invalidTimeout(timeoutInterval))
        }
        // Left alone when it is sendable as it is: setting it marks it as the request's own, and
        // URLSession then no longer uses the session's.
        if timeout != timeoutInterval { request.timeoutInterval = timeout }
        return request
    }
}

extension URL {
    /// This URL with its scheme lowercased, or `nil` when it has no uppercase letter. URLSession on
    /// Linux refuses `HTTP://` and `Https://`, which are the same schemes (RFC 3986 §3.1).
    var lowercasingScheme: URL? {
        guard let scheme, scheme.utf8.contains(where: { (0x41...0x5A).contains($0) }) else { return nil }
        let absolute = absoluteString
        guard absolute.hasPrefix(scheme) else { return nil }
        return URL(string: scheme.lowercased() + absolute.dropFirst(scheme.count))
    }

    /// This URL without the user and password of its authority (`https://user:password@host/`
    /// becomes `https://host/`), or `nil` when it has none. The rest of the string is kept byte
    /// for byte: the authority follows `//` and ends at the first `/`, `?` or `#`, and its user
    /// information ends at the last `@` in it.
    var removingUserInfo: URL? {
        let absolute = absoluteString
        let stripped: String? = absolute.withUTF8Bytes { bytes in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.count >= colon + 3,
                bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
            else { return nil }
            let authorityStart = colon + 3
            var authorityEnd = authorityStart
            var lastAt: Int?
            scan: while authorityEnd < bytes.count {
                switch bytes[authorityEnd] {
                case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
                case UInt8(ascii: "@"): lastAt = authorityEnd
                default: break
                }
                authorityEnd += 1
            }
            guard let lastAt else { return nil }
            var kept = Array(bytes[..<authorityStart])
            kept.append(contentsOf: bytes[(lastAt + 1)...])
            return String(decoding: kept, as: UTF8.self)
        }
        return stripped.flatMap { URL(string: $0) }
    }
}
