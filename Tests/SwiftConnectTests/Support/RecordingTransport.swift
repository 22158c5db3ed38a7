import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An in-memory transport that records every request it is asked to send and answers with a
/// closure (default: `200` with an empty JSON object).
final class RecordingTransport: Transport, @unchecked Sendable {
    // @unchecked Sendable: `requests` is only touched under `lock`.
    private let lock = NSLock()
    private var recorded: [URLRequest] = []
    private let respond: @Sendable (URLRequest) async throws -> StubTransport.Reply

    init(
        _ respond: @escaping @Sendable (URLRequest) async throws -> StubTransport.Reply = { _ in
            StubTransport.Reply(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
        }
    ) {
        self.respond = respond
    }

    /// Every request sent so far, in order.
    var requests: [URLRequest] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        lock.withLock { recorded.append(request) }
        return try await StubTransport(respond).send(request)
    }
}

/// A logger that keeps what it is given.
final class CapturingLogger: ConnectLogger, @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// Every message, one per line.
    var text: String { messages.joined(separator: "\n") }

    func log(_ message: String) {
        lock.lock()
        lines.append(message)
        lock.unlock()
    }
}

/// A connector assembled from values, for tests.
struct TestConnector: Connector {
    var baseURL: URL = URL(string: "http://127.0.0.1:9")!
    var endpoint: String = "/"
    var method: HTTPMethod = .get
    var headers: [HTTPHeader] = []
    var parameters: ParametersRepresentable? = nil
    var timeoutInterval: TimeInterval? = nil
    var acceptableStatusCodes: Range<Int> = 200..<300
}

/// A `Connect` over `transport` that delivers results on a private queue.
func makeConnect(
    transport: any Transport,
    errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
    middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
    logger: any ConnectLogger = CapturingLogger()
) -> Connect {
    var configuration = ConnectConfiguration()
    configuration.callbackQueue = DispatchQueue(label: "test.callbacks")
    configuration.logger = logger
    return Connect(
        middleware: middleware, errorHandler: errorHandler, configuration: configuration, transport: transport)
}
