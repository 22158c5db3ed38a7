import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// This request held to the rules a build enforces, for a request made outside the build — by
    /// adapters, or a redirect policy's `.followWith` — before it is sent:
    /// - every header valid (``HTTPHeader/isValid``): `URLRequest` keeps a name that is not a
    ///   token, and a value with CR or LF set through `allHTTPHeaderFields`, which would corrupt
    ///   the request on the wire;
    /// - no header framing the body (``HTTPHeader/isFraming``), but for the `Content-Length` of an
    ///   upload when `keepingContentLength` (the transport sets that one again from the body);
    /// - a timeout URLSession can take (``RequestTimeout``), rounded as a build rounds it.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)``: ``InvalidRequestReason/invalidHeader(name:)``,
    ///   ``InvalidRequestReason/reservedHeader(name:)`` (the first by name), or
    ///   ``InvalidRequestReason/invalidTimeout(_:)``.
    func checkedForSending(keepingContentLength: Bool = false) throws -> URLRequest {
        var request = self
        if let fields = allHTTPHeaderFields {
            let headers = fields.map { HTTPHeader(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
            if let invalid = headers.first(where: { !$0.isValid }) {
                throw ConnectError.invalidRequest(.invalidHeader(name: invalid.name))
            }
            if let framing = headers.first(where: { $0.isFraming && !(keepingContentLength && $0.isContentLength) }) {
                throw ConnectError.invalidRequest(.reservedHeader(name: framing.name))
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
