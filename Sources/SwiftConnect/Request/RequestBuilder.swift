import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a connector into a `URLRequest`. Pure: no I/O, no shared state.
///
/// Every mistake is a ``ConnectError/invalidRequest(_:)``, thrown before anything is sent.
enum RequestBuilder {
    /// Gathers the connector's parameters.
    static func parameters(of connector: Connector, encoder: JSONEncoder) throws -> RequestParameters {
        var parameters = RequestParameters(jsonEncoder: encoder)
        do {
            try connector.parameters?.apply(to: &parameters)
        } catch let error as ConnectError {
            throw error
        } catch {
            throw ConnectError.invalidRequest(.encodingFailed(underlying: error))
        }
        return parameters
    }

    /// Builds the request a connector describes.
    ///
    /// - Parameters:
    ///   - connector: What to call.
    ///   - encoder: Encodes JSON bodies.
    ///   - defaultHeaders: Sent unless the connector sets a header of the same name.
    ///   - timeout: Used when the connector has no timeout of its own.
    ///   - baseURL: Replaces the connector's base URL when set.
    static func makeRequest(
        for connector: Connector,
        encoder: JSONEncoder,
        defaultHeaders: [HTTPHeader] = [],
        timeout: TimeInterval? = nil,
        baseURL: URL? = nil
    ) throws -> URLRequest {
        let parameters = try parameters(of: connector, encoder: encoder)
        return try makeRequest(
            for: connector, parameters: parameters, body: parameters.body,
            defaultHeaders: defaultHeaders, timeout: timeout, baseURL: baseURL)
    }

    /// Builds the request from parameters already gathered, with `body` as the body (uploads pass
    /// `nil` and stream their own).
    static func makeRequest(
        for connector: Connector,
        parameters: RequestParameters,
        body: RequestBody?,
        defaultHeaders: [HTTPHeader] = [],
        timeout: TimeInterval? = nil,
        baseURL: URL? = nil
    ) throws -> URLRequest {
        let method = connector.method
        guard !method.rawValue.isEmpty, method.rawValue.utf8.allSatisfy(HTTPHeader.isTokenByte) else {
            throw ConnectError.invalidRequest(.invalidMethod(method.rawValue))
        }
        if body != nil, !method.allowsBody {
            throw ConnectError.invalidRequest(.bodyNotAllowed(method: method.rawValue))
        }

        let url = try makeURL(
            baseURL: baseURL ?? connector.baseURL, endpoint: connector.endpoint, parameters: parameters)
        var request = URLRequest(url: url)
        // URLRequest's method is GET already; setting it copies the underlying NSURLRequest
        // (about 4,000 instructions on Linux).
        if method.rawValue != "GET" { request.httpMethod = method.rawValue }
        if let timeout = connector.timeoutInterval ?? timeout {
            request.timeoutInterval = timeout
        }

        var headers = HTTPHeaders(defaultHeaders)
        if let body {
            headers.update(.contentType(body.contentType))
            request.httpBody = body.encoded
        }
        for header in parameters.headers { headers.update(header) }
        for header in connector.headers { headers.update(header) }
        if let authorized = connector as? AuthorizedConnector, let token = authorized.authorizationToken {
            headers.update(token.header)
        }
        for header in headers {
            guard header.isValid else { throw ConnectError.invalidRequest(.invalidHeader(name: header.name)) }
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        return request
    }

    /// Joins the base URL, the filled endpoint template and the query items.
    static func makeURL(baseURL: URL, endpoint: String, parameters: RequestParameters) throws -> URL {
        let base = baseURL.absoluteString
        guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = baseURL.host, !host.isEmpty
        else {
            throw ConnectError.invalidRequest(.invalidBaseURL(base))
        }

        // Split the base into its path-ending prefix and its own query; drop any fragment. The
        // delimiters are ASCII: search the UTF-8 bytes, not the Characters.
        var prefix = Substring(base)
        if let hash = prefix.utf8.firstIndex(of: UInt8(ascii: "#")) { prefix = prefix[..<hash] }
        var baseQuery: Substring = ""
        if let question = prefix.utf8.firstIndex(of: UInt8(ascii: "?")) {
            baseQuery = prefix[prefix.utf8.index(after: question)...]
            prefix = prefix[..<question]
        }

        let template = try EndpointTemplate(endpoint)
        let pathValues = parameters.pathValues
        for (key, value) in pathValues {
            guard template.slots.contains(key) else {
                throw ConnectError.invalidRequest(.unusedPathParameter(key: key))
            }
            guard !value.isEmpty else { throw ConnectError.invalidRequest(.emptyPathValue(key: key)) }
        }
        // A handful of values: a linear search beats hashing into a dictionary.
        func pathValue(for slot: String) -> String? {
            pathValues.first { $0.key == slot }?.value
        }

        func fill(_ pieces: [EndpointTemplate.Piece], literal: (String) -> String, value: (String) -> String)
            throws -> String
        {
            var result = ""
            for piece in pieces {
                switch piece {
                case .literal(let text):
                    result += literal(text)
                case .slot(let name):
                    guard let filled = pathValue(for: name) else {
                        throw ConnectError.invalidRequest(.missingPathValue(slot: name))
                    }
                    result += value(filled)
                }
            }
            return result
        }

        let path = try fill(
            template.path,
            literal: { PercentEncoding.encode($0, keepingEscapes: true, keep: PercentEncoding.isPathLiteral) },
            value: PercentEncoding.pathValue)
        let endpointQuery = try fill(
            template.query,
            literal: { PercentEncoding.encode($0, keepingEscapes: true, keep: PercentEncoding.isQueryLiteral) },
            value: PercentEncoding.queryComponent)

        var urlString = String(prefix)
        if !path.isEmpty {
            switch (urlString.hasSuffix("/"), path.hasPrefix("/")) {
            case (true, true): urlString += path.dropFirst()
            case (false, false): urlString += "/" + path
            default: urlString += path
            }
        }

        let queryParts = [String(baseQuery), endpointQuery, PercentEncoding.queryString(parameters.queryItems)]
            .filter { !$0.isEmpty }
        if !queryParts.isEmpty {
            urlString += "?" + queryParts.joined(separator: "&")
        }

        guard let url = URL(string: urlString) else {
            throw ConnectError.invalidRequest(.invalidURL(urlString))
        }
        return url
    }
}
