import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends requests over the wire. `Connect` uses ``URLSessionTransport`` unless given another;
/// ``StubTransport`` answers in memory for tests.
///
/// The transport knows nothing of the data it moves: building, validating and decoding happen
/// around it.
public protocol Transport: Sendable {
    /// Sends `request` and returns the response and its body.
    ///
    /// - Important: When the calling task is cancelled, stop and throw `CancellationError` (or a
    ///   `URLError(.cancelled)`).
    /// - Throws: Any error that kept a response from arriving (a `URLError` for URLSession).
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)

    /// Sends `request` with `body` as its body — an upload — reporting progress as it goes.
    ///
    /// `request` already carries the body's `Content-Type` (and its `Content-Length` when
    /// `body.framing` is ``UploadBody/Framing/contentLength``). Read the body with
    /// ``UploadBody/makeInputStream()`` to stream it, once per attempt; call `progress` with the
    /// bytes sent so far (``Connect`` keeps the values increasing and reports the total when the
    /// upload succeeds).
    ///
    /// The default implementation reads the whole body into memory with ``UploadBody/data()``,
    /// sets it as `httpBody` and calls ``send(_:)``, so transports written for plain requests —
    /// ``StubTransport``, test doubles — see the exact bytes. It suits small bodies; a transport
    /// that sends large files should stream, as ``URLSessionTransport`` does.
    ///
    /// - Important: When the calling task is cancelled, stop and throw `CancellationError` (or a
    ///   `URLError(.cancelled)`). If the body's stream fails, throw its `streamError`.
    func send(
        _ request: URLRequest, body: UploadBody, progress: @escaping @Sendable (UploadProgress) -> Void
    ) async throws -> (Data, HTTPURLResponse)
}

extension Transport {
    /// Sends the body from memory: reads it whole with ``UploadBody/data()``, sets it as the
    /// request's `httpBody`, calls ``send(_:)`` and reports the whole body as sent.
    public func send(
        _ request: URLRequest, body: UploadBody, progress: @escaping @Sendable (UploadProgress) -> Void
    ) async throws -> (Data, HTTPURLResponse) {
        var request = request
        request.httpBody = try body.data()
        let result = try await send(request)
        progress(UploadProgress(bytesSent: body.contentLength, totalBytes: body.contentLength))
        return result
    }
}

/// An in-memory transport for tests: answers each request with a closure, sends nothing.
///
/// ```swift
/// let transport = StubTransport { request in
///     StubTransport.Reply(statusCode: 200, body: Data(#"{"id":1}"#.utf8))
/// }
/// let connect = Connect(transport: transport)
/// ```
public struct StubTransport: Transport {
    /// A canned response.
    public struct Reply: Sendable {
        /// The status code.
        public var statusCode: Int
        /// The response headers.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// Creates a reply with exactly these headers: none are added (``json(_:statusCode:headers:)``
        /// adds a JSON `Content-Type`).
        public init(statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
        }

        /// Creates a reply whose body is `value` encoded as JSON.
        public static func json(_ value: some Encodable, statusCode: Int = 200, headers: [String: String] = [:])
            throws -> Reply
        {
            var headers = headers
            if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
                headers["Content-Type"] = "application/json"
            }
            return Reply(statusCode: statusCode, headers: headers, body: try JSONEncoder().encode(value))
        }
    }

    private let respond: @Sendable (URLRequest) async throws -> Reply
    private let sent = LockedBox<[URLRequest]>([])

    /// Creates a transport that answers every request with `respond`; an error it throws is
    /// reported as a transport error.
    ///
    /// `respond` may run on the thread that called `Connect.request(_:)`, before that call
    /// returns: to make a reply wait, `try await Task.sleep(…)` in it (cancelling the request
    /// cancels the sleep), never a blocking sleep.
    public init(_ respond: @escaping @Sendable (URLRequest) async throws -> Reply) {
        self.respond = respond
    }

    /// Every request the closure was asked to answer, in order, as `Connect` sent it: after the
    /// middleware, each retry and each redirect hop a request of its own, an upload with its whole
    /// body in `httpBody`. Copies of the transport share the list.
    public var requests: [URLRequest] {
        sent.withLock { $0 }
    }

    /// Forgets the requests recorded so far (for every copy of the transport): between the steps of
    /// a test, or to keep a long-running stub from holding every body it was sent.
    public func removeAllRequests() {
        sent.withLock { $0.removeAll() }
    }

    /// Answers `request` with the closure's reply.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        sent.withLock { $0.append(request) }
        let reply = try await respond(request)
        try Task.checkCancellation()
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: reply.statusCode, httpVersion: "HTTP/1.1", headerFields: reply.headers)
        else { throw ConnectError.invalidResponse }
        return (reply.body, response)
    }
}
