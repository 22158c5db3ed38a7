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

        /// Creates a reply; a JSON content type is assumed when `headers` has none.
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

    /// Creates a transport that answers every request with `respond`; an error it throws is
    /// reported as a transport error.
    public init(_ respond: @escaping @Sendable (URLRequest) async throws -> Reply) {
        self.respond = respond
    }

    /// Answers `request` with the closure's reply.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try Task.checkCancellation()
        let reply = try await respond(request)
        try Task.checkCancellation()
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: reply.statusCode, httpVersion: "HTTP/1.1", headerFields: reply.headers)
        else { throw ConnectError.invalidResponse }
        return (reply.body, response)
    }
}
