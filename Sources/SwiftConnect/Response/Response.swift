import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP response with the request that produced it: status, headers and body together.
///
/// `Connect.response(_:debugResponse:)` hands these back for callers who need more than the body —
/// a `201 Created`, a `Location`, pagination headers:
///
/// ```swift
/// connect.response(TodoConnector.list(page: 1)).observe { result in
///     if case .success(let response) = result {
///         print(response.statusCode, response.headers["X-Total-Count"] ?? "?")
///     }
/// }
/// ```
public struct Response: @unchecked Sendable {
    // @unchecked Sendable: HTTPURLResponse is an immutable Foundation class that FoundationNetworking
    // does not mark Sendable; Response never mutates it and exposes it read-only. The decoder is a
    // JSONDecoder, which Foundation declares Sendable, shared as the configuration shares it.

    /// The request as it was sent (after middleware), for the final hop of any redirects.
    public let request: URLRequest
    /// The underlying response.
    public let httpResponse: HTTPURLResponse
    /// The body; empty when the server sent none (a `204`, a `HEAD`).
    public let data: Data
    /// The decoder ``decoded(toType:keyPath:decoder:)`` uses when given none: for a response
    /// `Connect` received, the connector's `jsonDecoder`, else the configuration's; `nil` (a plain
    /// `JSONDecoder()`) for one made without a decoder.
    public let decoder: JSONDecoder?

    /// Creates a response, e.g. for an ``ErrorHandlerProtocol`` test, or one rebuilt from another
    /// (pass its ``decoder`` to keep decoding as it did).
    ///
    /// - Parameters:
    ///   - request: The request as it was sent.
    ///   - httpResponse: The response to it.
    ///   - data: The body; empty for none.
    ///   - decoder: What ``decoded(toType:keyPath:decoder:)`` decodes with when given no
    ///     decoder; `nil` (the default) for a plain `JSONDecoder()`.
    public init(request: URLRequest, httpResponse: HTTPURLResponse, data: Data, decoder: JSONDecoder? = nil) {
        self.request = request
        self.httpResponse = httpResponse
        self.data = data
        self.decoder = decoder
    }

    /// The headers, looked up case-insensitively, sorted by name.
    ///
    /// Read from ``httpResponse`` on each access, so that responses nobody asks about cost
    /// nothing; keep the value in a local when reading many headers.
    public var headers: HTTPHeaders { HTTPHeaders(httpResponse) }

    /// The HTTP status code.
    public var statusCode: Int { httpResponse.statusCode }

    /// The URL that answered, after any redirects.
    public var url: URL? { httpResponse.url ?? request.url }

    /// Decodes the body as JSON into `type`, optionally at a dot-separated key path, as
    /// `Future<Response>`'s `decoded(toType:keyPath:decoder:)` does.
    ///
    /// Without a `decoder`, a response `Connect` received decodes with the decoder its request
    /// would have used: the connector's `jsonDecoder`, else the configuration's. One made with
    /// ``init(request:httpResponse:data:decoder:)`` and no decoder uses a plain `JSONDecoder()`.
    ///
    /// - Throws: ``ConnectError/decoding(_:)``.
    public func decoded<T: Decodable>(toType type: T.Type, keyPath: String? = nil, decoder: JSONDecoder? = nil)
        throws -> T
    {
        try BodyDecoder.decode(
            type, from: data, keyPath: keyPath, decoder: decoder ?? self.decoder ?? JSONDecoder(), response: self)
    }
}
