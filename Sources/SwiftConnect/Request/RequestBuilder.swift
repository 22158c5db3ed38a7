import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a connector into a `URLRequest`. Pure: no I/O, no shared state.
///
/// Every mistake is a ``ConnectError/invalidRequest(_:)``, thrown before anything is sent.
enum RequestBuilder {
    /// Gathers the connector's parameters, encoding JSON with the connector's own encoder, else
    /// `encoder`.
    ///
    /// The encoder is asked for first, whether or not there are parameters: binding the
    /// parameters to ask only when there are some copied their existential, 45 instructions a
    /// path-and-query build against 13 for asking always.
    static func parameters(of connector: some Connector, encoder: JSONEncoder) throws -> RequestParameters {
        var parameters = RequestParameters(jsonEncoder: connector.jsonEncoder ?? encoder)
        do {
            try connector.parameters?.apply(to: &parameters)
        } catch let error as ConnectError {
            throw error
        } catch let error as EncodingError {
            throw ConnectError.invalidRequest(.encodingFailed(underlying: error))
        } catch {
            // A parameters type of the caller's own, failing for its own reasons: not a body.
            throw ConnectError.invalidRequest(.parametersFailed(underlying: error))
        }
        return parameters
    }

    /// Builds the request a connector describes.
    ///
    /// - Parameters:
    ///   - connector: What to call.
    ///   - encoder: Encodes JSON bodies, unless the connector has an encoder of its own.
    ///   - defaultHeaders: Sent unless the connector sets a header of the same name.
    ///   - timeout: Used when the connector has no timeout of its own.
    ///   - baseURL: Replaces the connector's base URL when set.
    static func makeRequest(
        for connector: some Connector,
        encoder: JSONEncoder,
        defaultHeaders: [HTTPHeader] = [],
        timeout: TimeInterval? = nil,
        baseURL: URL? = nil
    ) throws -> URLRequest {
        let parameters = try parameters(of: connector, encoder: encoder)
        return try makeRequest(
            for: connector, parameters: parameters, body: parameters.body,
            defaultHeaders: defaultHeaders, timeout: timeout, baseURL: baseURL, cache: RequestBuildCache.shared)
    }

    /// Builds the request from parameters already gathered, with `body` as the body (uploads pass
    /// `nil` and stream their own), remembering what it works out in `cache`.
    ///
    /// `cache` has no default: a default argument is made by the caller as a copy, which retained
    /// and released the shared cache's storage around each build (an atomic pair). Pass
    /// `RequestBuildCache.shared` as it lies.
    ///
    /// Generic, as the builders above, so that a `Connector` existential is opened once, at the
    /// call: its requirements are then called on the value where it lies, and its type is at
    /// hand, where an existential's every use first finds where its value lies and `type(of:)` asks
    /// the runtime (together about 110 instructions a request built).
    static func makeRequest<C: Connector>(
        for connector: C,
        parameters: RequestParameters,
        body: RequestBody?,
        defaultHeaders: [HTTPHeader] = [],
        timeout: TimeInterval? = nil,
        baseURL: URL?,
        cache: RequestBuildCache
    ) throws -> URLRequest {
        // As URLSession will send it: a body check on "get" must see GET.
        let method = connector.method.sent
        guard method.isSendable else {
            throw ConnectError.invalidRequest(.invalidMethod(method.rawValue))
        }
        if body != nil, !method.allowsBody {
            throw ConnectError.invalidRequest(.bodyNotAllowed(method: method.rawValue))
        }

        let base = (baseURL ?? connector.baseURL).absoluteString
        let endpoint = connector.endpoint
        let (layout, template, isUnauthorizedType) = cache.recall(
            base: base, endpoint: endpoint, connectorType: ObjectIdentifier(C.self))
        let url = try makeURL(
            base: base, layout: layout, endpoint: endpoint, template: consume template, parameters: parameters,
            cache: cache)
        // Handed over, not copied: a `let` lives to the end of its scope, so passing `url` as it
        // is retained it for the request and released it on return (an atomic pair, about 75
        // instructions a request built).
        var request = URLRequest(url: consume url)
        // URLRequest's method is GET already; setting it copies the underlying NSURLRequest
        // (about 4,000 instructions on Linux).
        if method.rawValue != "GET" { request.httpMethod = method.rawValue }
        if let timeout = connector.timeoutInterval ?? timeout {
            guard let sendable = RequestTimeout.sendable(timeout) else {
                throw ConnectError.invalidRequest(.invalidTimeout(timeout))
            }
            request.timeoutInterval = sendable
        }
        let connectorHeaders = connector.headers
        let token = isUnauthorizedType ? nil : castAuthorizationToken(of: connector, cache: cache)
        // A request with neither a body nor a header is common (a GET of a plain connector), and
        // its build stops here: the merging below is code of its own, which such a build does not
        // run through.
        if body != nil || token != nil || !defaultHeaders.isEmpty || !parameters.headers.isEmpty
            || !connectorHeaders.isEmpty
        {
            try setBodyAndHeaders(
                of: &request, body: body, defaultHeaders: defaultHeaders, parameterHeaders: parameters.headers,
                connectorHeaders: connectorHeaders, token: token)
        }
        return request
    }

    /// The header carrying `token`, checked for the mistakes a header check alone lets through.
    ///
    /// - Throws: ``InvalidRequestReason/invalidBasicUsername`` for a Basic username with a colon,
    ///   ``InvalidRequestReason/emptyToken`` for a token with nothing in it,
    ///   ``InvalidRequestReason/invalidBearerToken`` for a Bearer token with a space or tab inside.
    private static func authorizationHeader(for token: AuthorizationToken) throws -> HTTPHeader {
        switch token {
        case .basic(let username, let password):
            if username.utf8.contains(UInt8(ascii: ":")) {
                throw ConnectError.invalidRequest(.invalidBasicUsername)
            }
            // `Basic Og==` (":"): credentials not loaded yet, as an empty bearer token is.
            if username.isEmpty && password.isEmpty { throw ConnectError.invalidRequest(.emptyToken) }
        case .bearer(let secret):
            return try HTTPHeader.checkedBearer(secret)
        case .custom(let secret), .header(_, let secret):
            if secret.utf8.allSatisfy(HTTPHeader.isWhitespace) {
                throw ConnectError.invalidRequest(.emptyToken)
            }
        }
        return token.header
    }

    /// Sets `body` and the headers on `request`. Each header replaces an earlier one of the same
    /// name, in this order: the configuration's defaults, the body's `Content-Type`, the
    /// parameters' headers, the connector's, and the token's.
    ///
    /// - Throws: ``InvalidRequestReason/invalidHeader(name:)`` for the first invalid header,
    ///   ``InvalidRequestReason/reservedHeader(name:)`` for one that frames the body,
    ///   and those of ``authorizationHeader(for:)`` for the token.
    @inline(never)
    private static func setBodyAndHeaders(
        of request: inout URLRequest, body: RequestBody?, defaultHeaders: [HTTPHeader],
        parameterHeaders: [HTTPHeader], connectorHeaders: [HTTPHeader], token: AuthorizationToken?
    ) throws {
        var headers = HTTPHeaders(defaultHeaders)
        if let body {
            headers.update(.contentType(body.contentType))
            request.httpBody = body.encoded
        }
        for header in parameterHeaders { headers.update(header) }
        for header in connectorHeaders { headers.update(header) }
        if let token { headers.update(try authorizationHeader(for: token)) }
        for header in headers {
            guard header.isValid else { throw ConnectError.invalidRequest(.invalidHeader(name: header.name)) }
            guard !header.isFraming else { throw ConnectError.invalidRequest(.reservedHeader(name: header.name)) }
            request.setValue(header.trimmedValue, forHTTPHeaderField: header.name)
        }
        // An empty `Content-Type` never reaches the server (libcurl drops it): the body would go
        // out without one.
        if body != nil, request.value(forHTTPHeaderField: "Content-Type")?.isEmpty ?? true {
            throw ConnectError.invalidRequest(.invalidHeader(name: "Content-Type"))
        }
    }

    /// The token of a connector that conforms to ``AuthorizedConnector``, or `nil`. A type found
    /// not to conform is remembered in the shared cache (see ``RequestBuildCache``), and not cast
    /// again.
    static func authorizationToken<C: Connector>(of connector: C) -> AuthorizationToken? {
        if RequestBuildCache.shared.isUnauthorizedType(ObjectIdentifier(C.self)) { return nil }
        return castAuthorizationToken(of: connector, cache: RequestBuildCache.shared)
    }

    /// The cast behind ``authorizationToken(of:)``, for a caller that has asked `cache` already (a
    /// build's ``RequestBuildCache/recall(base:endpoint:connectorType:)``): asking it again took the
    /// lock a second time in every build of an ``AuthorizedConnector``.
    private static func castAuthorizationToken<C: Connector>(
        of connector: C, cache: RequestBuildCache
    ) -> AuthorizationToken? {
        guard let authorized = connector as? AuthorizedConnector else {
            if !castDependsOnTheValue(connector) { cache.rememberUnauthorizedType(ObjectIdentifier(C.self)) }
            return nil
        }
        return authorized.authorizationToken
    }

    /// Whether `as?` may answer differently for another value of the connector's type: it looks
    /// inside an `Optional` (a `nil` fails where a wrapped value may not) and an `AnyHashable`,
    /// and for a class `C` may be any superclass of the value's own class (a subclass may conform
    /// where its base class does not). Asked once per type, when the cast first fails; every time
    /// for a class, which is never remembered (asking an instance for its dynamic type in every
    /// build would cost the usual enum connector about 1 % of a build).
    private static func castDependsOnTheValue<C: Connector>(_ connector: C) -> Bool {
        C.self is AnyObject.Type || Mirror(reflecting: connector).displayStyle == .optional
            || C.self == AnyHashable.self
    }

    /// Joins the base URL, the filled endpoint template and the query items.
    ///
    /// The URL string is written in one pass (``UTF8Writer``; two for a URL longer than
    /// ``UTF8Writer/stackCapacity`` bytes): no intermediate strings for the path, the query parts
    /// or their joins. The template's literals are encoded already; the base URL is copied from
    /// its bytes.
    ///
    /// `cache` is where the endpoint's parsed template and the base's layout are kept (tests that
    /// build thousands of endpoints pass their own, so as not to flush the shared cache under
    /// other tests).
    static func makeURL(
        baseURL: URL, endpoint: String, parameters: RequestParameters, cache: RequestBuildCache = .shared
    ) throws -> URL {
        try makeURL(
            base: baseURL.absoluteString, layout: nil, endpoint: endpoint, template: nil, parameters: parameters,
            cache: cache)
    }

    /// ``makeURL(baseURL:endpoint:parameters:cache:)`` for `base`, a base URL's string, with its
    /// `layout` and the endpoint's `template` when they were recalled from `cache` already.
    static func makeURL(
        base: String, layout: BaseURLLayout?, endpoint: String, template: EndpointTemplate?,
        parameters: RequestParameters, cache: RequestBuildCache
    ) throws -> URL {
        guard let layout = layout ?? cache.validBaseLayout(base) else {
            throw ConnectError.invalidRequest(.invalidBaseURL(base))
        }

        let template = try template ?? cache.template(for: endpoint)
        // The path values are checked as the writer's first pass fills the slots, rather than in
        // a pass of their own (about 330 instructions a request built): each slot finds a value
        // that is not empty, and when there are as many values as distinct slot names, none is
        // left unused (the keys are distinct, and each name found the value of its own key).
        // Where that fails, this check reports what a check before writing would: the first
        // unused or empty value in the order given, and only then the first slot, path then
        // query, without a value.
        func checkPathValues() throws {
            try parameters.forEachPathValue { key, value in
                guard template.slots.contains(key) else {
                    throw ConnectError.invalidRequest(.unusedPathParameter(key: key))
                }
                guard !value.isEmpty else { throw ConnectError.invalidRequest(.emptyPathValue(key: key)) }
            }
        }
        func write(_ pieces: [EndpointTemplate.Piece], isQuery: Bool, to output: inout UTF8Writer) throws {
            // Through the buffer: a `for` over the array copies each piece, a retain and a release
            // of its string (about 180 instructions a request built).
            try pieces.withUnsafeBufferPointer { pieces in
                for index in pieces.indices {
                    switch pieces[index] {
                    case .literal(let encoded):
                        output.append(encoded)
                    case .slot(let name):
                        guard let value = parameters.value(forSlot: name), !value.isEmpty else {
                            try checkPathValues()  // throws for an empty value, or for an earlier one
                            throw ConnectError.invalidRequest(.missingPathValue(slot: name))
                        }
                        if isQuery {
                            PercentEncoding.append(value, keeping: .unreserved, to: &output)
                        } else {
                            // `..`, even encoded, is a step up the path to many servers: refused
                            // (and `.`), after any earlier mistake a check before writing reports.
                            guard !PercentEncoding.isDots(value) else {
                                try checkPathValues()
                                throw ConnectError.invalidRequest(.dotSegmentPathValue(key: name))
                            }
                            PercentEncoding.appendPathValue(value, to: &output)
                        }
                    }
                }
            }
        }

        let hasItemsQuery = parameters.hasQuery
        let urlString = try base.withUTF8Bytes { base in
            // The base's path-ending prefix and its own query; any fragment is dropped. (A slot's
            // value never encodes to nothing and literal pieces are never empty, so the filled
            // path, or endpoint query, is empty exactly when the template's is.)
            let prefix = UnsafeBufferPointer(rebasing: base[..<layout.prefixEnd])
            let baseQuery = UnsafeBufferPointer(rebasing: base[layout.queryStart..<layout.queryEnd])
            let prefixEndsWithSlash = prefix.last == UInt8(ascii: "/")
            let joinsWithoutSlash = prefixEndsWithSlash && template.pathStartsWithSlash

            return try UTF8Writer.string { output in
                let written = UnsafeBufferPointer(rebasing: joinsWithoutSlash ? prefix.dropLast() : prefix[...])
                if layout.hasUppercaseScheme {
                    // URLSession on Linux refuses `HTTP://`; the scheme's letters go out lowercased.
                    for byte in written[..<layout.schemeEnd] { output.append(byte | 0x20) }
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: written[layout.schemeEnd...]))
                } else {
                    output.append(contentsOf: written)
                }
                if !joinsWithoutSlash && !template.path.isEmpty && !prefixEndsWithSlash
                    && !template.pathStartsWithSlash
                {
                    output.append(UInt8(ascii: "/"))
                }
                try write(template.path, isQuery: false, to: &output)

                // What goes before the next part of the query: `?`, then `&`, but no `&` after a
                // part that ends with one or before a part that starts with one (`?a=1&` and `b=2`
                // join as `?a=1&b=2`). Query items never start with `&`.
                var separator: UInt8? = UInt8(ascii: "?")
                if !baseQuery.isEmpty {
                    if let separator { output.append(separator) }
                    output.append(contentsOf: baseQuery)
                    separator = baseQuery.last == UInt8(ascii: "&") ? nil : UInt8(ascii: "&")
                }
                if !template.query.isEmpty {
                    if let separator, !(separator == UInt8(ascii: "&") && template.queryStartsWithAmpersand) {
                        output.append(separator)
                    }
                    try write(template.query, isQuery: true, to: &output)
                    separator = template.queryEndsWithAmpersand ? nil : UInt8(ascii: "&")
                }
                if hasItemsQuery {
                    if let separator { output.append(separator) }
                    parameters.appendQueryString(to: &output)
                }
            }
        }

        if parameters.pathValueCount != template.distinctSlotCount { try checkPathValues() }

        guard let url = URL(string: urlString) else {
            throw ConnectError.invalidRequest(.invalidURL(urlString))
        }
        return url
    }

    /// Where the parts of a base URL's string end, in its UTF-8 bytes: the prefix a request's
    /// path follows (`..<prefixEnd`), then its own query (`queryStart..<queryEnd`, empty when it
    /// has none); a fragment, after `queryEnd`, is dropped.
    struct BaseURLLayout: Equatable {
        let prefixEnd: Int
        let queryStart: Int
        let queryEnd: Int
        /// Where the scheme ends: the index of its `:`.
        let schemeEnd: Int
        /// Whether the scheme has an uppercase letter (`HTTP://`), to be written lowercased.
        let hasUppercaseScheme: Bool

        /// The layout of `bytes`, a base URL's string that ``hasHTTPSchemeAndHost(_:)``.
        init(of bytes: UnsafeBufferPointer<UInt8>) {
            let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
            let question = bytes[..<end].firstIndex(of: UInt8(ascii: "?"))
            prefixEnd = question ?? end
            queryStart = question.map { $0 + 1 } ?? end
            queryEnd = end
            schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? 0
            hasUppercaseScheme = bytes[..<schemeEnd].contains { (0x41...0x5A).contains($0) }
        }
    }

    /// Whether `absolute`, a URL's `absoluteString`, has the scheme `http` or `https` (any case)
    /// and a non-empty host — what `url.scheme` and `url.host` say, read from the bytes of a
    /// string `URL` has already validated, without `URL` parsing it again (`scheme` and `host`
    /// cost about 6 % of building a request).
    ///
    /// The scheme is what precedes the first `:`; the authority follows `//`, up to the first `/`,
    /// `?` or `#`; its host follows any `user:password@` and ends at a `:port`, or is an IP literal
    /// in brackets, which may be empty (`http://[]/` is a valid URL with an empty host). A port, if
    /// there is one, must be one a connection can use: 1 to 65535, or empty. A host with
    /// a percent escape is left to `URL`: `host` is `nil` when the escapes do not decode to UTF-8
    /// (`http://%80/`).
    static func hasHTTPSchemeAndHost(_ absolute: String) -> Bool {
        let answer: Bool? = absolute.withUTF8Bytes { bytes in
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
                isHTTP(UnsafeBufferPointer(rebasing: bytes[..<colon])),
                bytes.count >= colon + 3, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
            else { return false }
            // One pass over the authority: where it ends, where its host starts (after the last
            // `@`), and whether the host has a `%`.
            var hostStart = colon + 3
            var authorityEnd = hostStart
            var hostHasPercent = false
            scan: while authorityEnd < bytes.count {
                switch bytes[authorityEnd] {
                case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
                case UInt8(ascii: "@"):
                    hostStart = authorityEnd + 1
                    hostHasPercent = false
                case UInt8(ascii: "%"): hostHasPercent = true
                default: break
                }
                authorityEnd += 1
            }
            guard hostStart < authorityEnd else { return false }
            if hostHasPercent { return nil }
            var hostEnd = hostStart
            switch bytes[hostStart] {
            case UInt8(ascii: ":"):  // a port with no host before it: `http://:80/`
                return false
            case UInt8(ascii: "["):  // an IP literal, which must not be empty: `http://[]/`
                guard hostStart + 1 < authorityEnd, bytes[hostStart + 1] != UInt8(ascii: "]") else { return false }
                hostEnd =
                    bytes[hostStart..<authorityEnd].firstIndex(of: UInt8(ascii: "]")).map { $0 + 1 } ?? authorityEnd
            default:
                hostEnd = bytes[hostStart..<authorityEnd].firstIndex(of: UInt8(ascii: ":")) ?? authorityEnd
            }
            return hostEnd == authorityEnd
                || isPort(UnsafeBufferPointer(rebasing: bytes[hostEnd..<authorityEnd]))
        }
        if let answer { return answer }
        return !(URL(string: absolute)?.host ?? "").isEmpty
    }

    /// Whether `absolute`, a base URL's string, has what looks like an endpoint's `{slot}` in its
    /// path: a `{` and a `}` (or their escapes, `%7B` and `%7D`, as `URL(string:)` writes them)
    /// around a name such as `tenant` or `api_version` — letters, digits and `_`, not starting
    /// with a digit. A base URL is not a template — nothing fills such a slot, and it would go out
    /// as it is (`/%7Btenant%7D/users`) — so the build refuses it. Braces around anything else (a
    /// GUID, `{6F9619FF-8B86-…}`), and braces in the user info, query or fragment, are left alone.
    static func hasSlot(_ absolute: String) -> Bool {
        absolute.withUTF8Bytes { bytes in
            // The path runs from the first `/` after `scheme://` to the first `?` or `#`; a URL
            // whose query or fragment comes first has none.
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 3 <= bytes.count else { return false }
            let afterScheme = bytes[(colon + 3)...]
            let beforeQuery = afterScheme.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            guard let pathStart = beforeQuery.firstIndex(of: UInt8(ascii: "/")) else { return false }
            let path = beforeQuery[pathStart...]
            /// The length of the brace at `index` (1, or 3 for an escape), or 0 if there is none.
            func brace(at index: Int, open: Bool) -> Int {
                if path[index] == UInt8(ascii: open ? "{" : "}") { return 1 }
                guard path[index] == UInt8(ascii: "%"), index + 2 < path.endIndex,
                    path[index + 1] == UInt8(ascii: "7"), path[index + 2] | 0x20 == UInt8(ascii: open ? "b" : "d")
                else { return 0 }
                return 3
            }
            func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
                let letter = byte | 0x20
                return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter) || byte == UInt8(ascii: "_")
                    || (!first && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte))
            }
            var index = path.startIndex
            while index < path.endIndex {
                let opening = brace(at: index, open: true)
                guard opening > 0 else {
                    index += 1
                    continue
                }
                var end = index + opening
                while end < path.endIndex, isNameByte(path[end], first: end == index + opening) { end += 1 }
                if end > index + opening, end < path.endIndex, brace(at: end, open: false) > 0 { return true }
                index += opening
            }
            return false
        }
    }

    /// Whether `text` is `:` and a port a connection can use: empty (the scheme's own), or 1 to
    /// 65535. `URL` takes `http://h:99999/` and `http://h:0/`, which no request can reach.
    private static func isPort(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.first == UInt8(ascii: ":") else { return false }
        var port = 0
        for byte in text.dropFirst() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
            port = port * 10 + Int(byte - UInt8(ascii: "0"))
            if port > 65535 { return false }
        }
        return text.count == 1 || port > 0
    }

    /// Whether `scheme` is `http` or `https`, ignoring ASCII case.
    private static func isHTTP(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        var bytes = scheme.makeIterator()
        for expected in "http".utf8 {
            guard let byte = bytes.next(), byte | 0x20 == expected else { return false }
        }
        switch bytes.next() {
        case nil: return true
        case let byte? where byte | 0x20 == UInt8(ascii: "s"): return bytes.next() == nil
        default: return false
        }
    }
}
