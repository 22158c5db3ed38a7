import Dispatch
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Shared helpers for the Response, Client and Middleware test suites. Namespaced so that other
/// suites in the same test target can use short names of their own.
enum PipelineFixtures {
    /// A small model most tests decode.
    struct Todo: Codable, Sendable, Equatable {
        let id: Int
        let title: String
    }

    /// An error of the test's own, compared by its code.
    struct TestError: Error, Sendable, Equatable {
        let code: String
    }

    /// A reply whose body is `json`, typed `application/json`.
    static func json(_ json: String, status: Int = 200, headers: [String: String] = [:]) -> StubTransport.Reply {
        var headers = headers
        if !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        return StubTransport.Reply(statusCode: status, headers: headers, body: Data(json.utf8))
    }

    /// A hand-built response, as a server would have sent it for `GET http://example.test/items`.
    static func response(
        status: Int, body: String = "", headers: [String: String] = ["Content-Type": "application/json"],
        method: String = "GET", url: String = "http://example.test/items"
    ) -> Response {
        let url = URL(string: url)!
        var request = URLRequest(url: url)
        request.httpMethod = method
        let http = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        return Response(request: request, httpResponse: http, data: Data(body.utf8))
    }

    /// A `Connect` over `transport` whose configuration the caller may adjust.
    static func connect(
        transport: any Transport,
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        logger: any ConnectLogger = CapturingLogger(),
        configure: (inout ConnectConfiguration) -> Void
    ) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "test.pipeline.callbacks")
        configuration.logger = logger
        configure(&configuration)
        return Connect(
            middleware: middleware, errorHandler: errorHandler, configuration: configuration, transport: transport)
    }

    /// Observes `future` and awaits the first result, also reporting how many times the observer ran
    /// after `settle` seconds more (it must be exactly once).
    static func observeOnce<Value: Sendable>(_ future: Future<Value>, settle: TimeInterval = 0.05) async
        -> (result: Result<Value, any Error>, calls: Int)
    {
        let calls = Counter()
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, any Error>, Never>) in
            future.observe { result in
                if calls.increment() == 1 { continuation.resume(returning: result) }
            }
        }
        try? await Task.sleep(nanoseconds: UInt64(settle * 1_000_000_000))
        return (result, calls.value)
    }

    typealias Counter = SwiftConnectTests.Counter
    typealias Recorder = SwiftConnectTests.Recorder

    /// Opens once `arrive()` has been called `count` times; `wait()` suspends until then.
    /// Waiting is cancellable: a cancelled waiter throws `CancellationError`.
    final class Gate: @unchecked Sendable {
        // @unchecked Sendable: all state is only touched under `lock`.
        private let lock = NSLock()
        private var remaining: Int
        private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        private var cancelledWaiters: Set<Int> = []
        private var nextID = 0

        init(count: Int = 1) {
            remaining = count
        }

        var isOpen: Bool { lock.withLock { remaining <= 0 } }

        /// Counts one arrival; the last one opens the gate and resumes every waiter.
        func arrive() {
            let resumed: [CheckedContinuation<Void, any Error>] = lock.withLock {
                remaining -= 1
                guard remaining <= 0 else { return [] }
                defer { waiters.removeAll() }
                return Array(waiters.values)
            }
            for continuation in resumed { continuation.resume() }
        }

        /// Opens the gate at once.
        func open() {
            let resumed: [CheckedContinuation<Void, any Error>] = lock.withLock {
                remaining = 0
                defer { waiters.removeAll() }
                return Array(waiters.values)
            }
            for continuation in resumed { continuation.resume() }
        }

        /// Suspends until the gate opens; throws `CancellationError` if the task is cancelled first.
        func wait() async throws {
            let id: Int = lock.withLock {
                nextID += 1
                return nextID
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Action { case resume, cancel, park }
                    let action: Action = lock.withLock {
                        if remaining <= 0 { return .resume }
                        if cancelledWaiters.remove(id) != nil { return .cancel }
                        waiters[id] = continuation
                        return .park
                    }
                    switch action {
                    case .resume: continuation.resume()
                    case .cancel: continuation.resume(throwing: CancellationError())
                    case .park: break
                    }
                }
            } onCancel: {
                let parked: CheckedContinuation<Void, any Error>? = lock.withLock {
                    if let parked = waiters.removeValue(forKey: id) { return parked }
                    cancelledWaiters.insert(id)
                    return nil
                }
                parked?.resume(throwing: CancellationError())
            }
        }
    }
}

extension PipelineFixtures {
    /// The error of a failed result, or `nil` for a success.
    static func error<Value>(of result: Result<Value, any Error>) -> (any Error)? {
        if case .failure(let error) = result { return error }
        return nil
    }

    /// The value of a successful result, or `nil` for a failure.
    static func value<Value>(of result: Result<Value, any Error>) -> Value? {
        if case .success(let value) = result { return value }
        return nil
    }
}
