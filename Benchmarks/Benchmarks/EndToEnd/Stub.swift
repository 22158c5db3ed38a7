import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers every request with the body nginx serves (Benchmarks/Server/todo.json), in process: the
/// end-to-end requests without the network, the server or the kernel, so that what remains is the
/// CPU each client spends on a request — URLSession's machinery and the client's own work.
final class StubProtocol: URLProtocol {
    static let body = Data(#"{"userId":1,"id":1,"title":"delectus aut autem","completed":false}"#.utf8)

    override class func canInit(with request: URLRequest) -> Bool { true }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"])
        else {
            client?.urlProtocol(self, didFailWithError: URLError(.badURL))
            return
        }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}

    /// The default configuration with every request answered by this protocol.
    static var sessionConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [StubProtocol.self]
        return configuration
    }

    /// Where the stubbed requests go: loopback, though nothing is sent.
    static let baseURL = URL(string: "http://127.0.0.1:1")!
}
