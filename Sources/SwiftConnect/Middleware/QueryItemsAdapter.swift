import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Appends query items to every request — an API key, a client id, a signature — encoded as a
/// connector's query parameters are: every name and value per RFC 3986, `+`, `&`, `=`, `/`, `?`,
/// `#`, spaces and non-ASCII included.
///
/// ```swift
/// let keyedConnect = Connect(
///     middleware: ConnectMiddleware(adapters: [QueryItemsAdapter([URLQueryItem(name: "api_key", value: "k-123")])]),
///     errorHandler: ErrorHandler()
/// )
/// ```
///
/// The items follow the request's own query, joined with `&` (none added next to the query's own
/// `&` at its end), and precede its fragment; the query already there is kept byte for byte.
/// Rebuilding the URL with `URLComponents.queryItems` instead writes the whole query again
/// Foundation's way, which leaves a `+` as it is: a server reads it as a space.
///
/// Like every adapter, it runs again on each attempt, with the request as it was built, so a
/// retried request carries the items once. A retrier that redirects should start from
/// ``FailedAttempt/request`` (the request before adapters), not from the response's `request`
/// (as sent, items and all), which would carry them twice. An item whose name says it carries a
/// credential (`api_key`, `access_token`, `sig`, … — the names debug output redacts) goes only to
/// the origin the first request went to.
public struct QueryItemsAdapter: RequestAdapter {
    private let items: @Sendable (URLRequest) async throws -> [URLQueryItem]

    /// Appends `items`, in order, to every request. A `nil` value sends the name alone (`?flag`).
    public init(_ items: [URLQueryItem]) {
        self.items = { _ in items }
    }

    /// Appends the items `items` returns for each request, in order — a signature of the request,
    /// a key read at the time. Throwing fails the attempt, and nothing is sent.
    public init(_ items: @escaping @Sendable (URLRequest) async throws -> [URLQueryItem]) {
        self.items = items
    }

    /// `request` with the items appended to its URL's query.
    ///
    /// - Throws: What the closure throws; ``ConnectError/invalidRequest(_:)`` with
    ///   ``InvalidRequestReason/unsupportedURL(_:)`` for a request without a URL.
    public func adapt(_ request: URLRequest) async throws -> URLRequest {
        let items = try await items(request)
        if items.isEmpty { return request }
        guard let url = request.url else { throw ConnectError.invalidRequest(.unsupportedURL("")) }
        var request = request
        request.url = try Self.appending(items, to: url)
        return request
    }

    /// `url` with `items` encoded after its query and before its fragment.
    static func appending(_ items: [URLQueryItem], to url: URL) throws -> URL {
        let encoded = PercentEncoding.queryString(items)
        // Only items with an empty name and no value: nothing to add.
        if encoded.isEmpty { return url }
        let (head, query, fragment) = DebugDescription.parts(ofURL: url.absoluteString)
        var text = head + "?"
        if let query, !query.isEmpty {
            text += query
            if !query.hasSuffix("&") { text += "&" }
        }
        text += encoded + fragment
        // Encoded pieces added to a URL that parsed: it parses again.
        guard let appended = URL(string: text) else { throw ConnectError.invalidRequest(.invalidURL(text)) }
        return appended
    }
}
