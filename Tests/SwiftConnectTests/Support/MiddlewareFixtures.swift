import Dispatch
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Shared helpers for the middleware, retry, redirect, validation and interceptor suites.
enum MiddlewareFixtures {
    /// A connector with every middleware-related requirement settable.
    struct Call: Connector, AuthorizedConnector {
        var baseURL: URL = URL(string: "http://api.test")!
        var endpoint: String = "/items"
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var parameters: ParametersRepresentable? = nil
        var acceptableStatusCodes: Range<Int> = 200..<300
        /// `nil`: the method's idempotency.
        var idempotent: Bool? = nil
        var middleware: ConnectorMiddleware = .inherited
        var validators: [ResponseValidator]? = nil
        var redirectPolicy: RedirectPolicy? = nil
        var authorizationToken: AuthorizationToken? = nil

        var isIdempotent: Bool { idempotent ?? method.isIdempotent }
    }

    /// A `ConnectConfiguration.sleep` that records each delay and returns at once (throwing if the
    /// waiting task is cancelled, as the real one does).
    final class RecordingSleep: @unchecked Sendable {
        // @unchecked Sendable: `delays` is only touched under `lock`.
        private let lock = NSLock()
        private var recorded: [TimeInterval] = []

        var delays: [TimeInterval] { lock.withLock { recorded } }

        var sleep: @Sendable (TimeInterval) async throws -> Void {
            { [self] seconds in
                lock.withLock { recorded.append(seconds) }
                try Task.checkCancellation()
            }
        }
    }

    /// Thread-safe counters by key.
    final class Tally: @unchecked Sendable {
        // @unchecked Sendable: `counts` is only touched under `lock`.
        private let lock = NSLock()
        private var counts: [String: Int] = [:]

        /// Adds one to `key` and returns the new count.
        @discardableResult
        func increment(_ key: String) -> Int {
            lock.withLock {
                counts[key, default: 0] += 1
                return counts[key]!
            }
        }

        subscript(key: String) -> Int { lock.withLock { counts[key, default: 0] } }
    }

    /// A `Connect` over `transport`, on a private callback queue, whose retries don't sleep.
    static func connect(
        transport: any Transport,
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
        sleep: RecordingSleep = RecordingSleep(),
        configure: (inout ConnectConfiguration) -> Void = { _ in }
    ) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "test.middleware.callbacks")
        configuration.logger = CapturingLogger()
        configuration.sleep = sleep.sleep
        configure(&configuration)
        return Connect(
            middleware: middleware, errorHandler: errorHandler, configuration: configuration, transport: transport)
    }

    /// A redirect reply to `location`.
    static func redirect(_ location: String, status: Int = 302) -> StubTransport.Reply {
        StubTransport.Reply(statusCode: status, headers: ["Location": location], body: Data())
    }

    /// A failed attempt at `GET http://api.test/items` with `status` (and `headers`), for unit tests
    /// of retriers.
    static func attempt(
        status: Int, headers: [String: String] = [:], number: Int = 1, isIdempotent: Bool = true
    ) -> FailedAttempt {
        let response = PipelineFixtures.response(status: status, headers: headers, url: "http://api.test/items")
        return FailedAttempt(
            request: response.request, error: ConnectError.unacceptableStatus(response, message: nil),
            response: response, number: number, isIdempotent: isIdempotent)
    }

    /// A failed attempt that got no response: the transport threw `code`.
    static func attempt(urlError code: URLError.Code, number: Int = 1, isIdempotent: Bool = true) -> FailedAttempt {
        FailedAttempt(
            request: URLRequest(url: URL(string: "http://api.test/items")!),
            error: ConnectError.transport(underlying: URLError(code)), response: nil, number: number,
            isIdempotent: isIdempotent)
    }
}

extension RetryResult {
    /// The delay of `.retryWithDelay`, `0` for `.retry`, `nil` for any other answer.
    var delay: TimeInterval? {
        switch self {
        case .retry: return 0
        case .retryWithDelay(let delay): return delay
        default: return nil
        }
    }

    /// Whether this answer sends the request again.
    var retries: Bool { delay != nil }
}
