import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// The error an interceptor maps an error body to.
private struct ServiceError: Error, Equatable {
    let code: String
}

/// A middleware that logs each adapt, intercept and retry as `<name>.<step>`, stamps `X-Chain`
/// with its name, and answers as configured.
private struct NamedMiddleware: ConnectMiddlewareProtocol {
    let name: String
    let log: Fixtures.Recorder<String>
    var decision: InterceptorDecision = .proceed
    var retryAnswer: RetryResult = .doNotRetry

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        log.append("\(name).adapt")
        var request = request
        let chain = request.value(forHTTPHeaderField: "X-Chain")
        request.setValue(chain.map { "\($0),\(name)" } ?? name, forHTTPHeaderField: "X-Chain")
        return request
    }

    func intercept(_ response: Response) async throws -> InterceptorDecision {
        log.append("\(name).intercept")
        return decision
    }

    func retry(_ attempt: FailedAttempt) async -> RetryResult {
        log.append("\(name).retry#\(attempt.number)")
        return attempt.number == 1 ? retryAnswer : .doNotRetry
    }
}

/// Maps `{"error":{"code":"…"}}` error bodies to ``ServiceError``.
private let mapsErrorBodies = ClosureInterceptor { response in
    guard response.statusCode >= 400,
        let object = try? JSONSerialization.jsonObject(with: response.data) as? [String: Any],
        let error = object["error"] as? [String: Any], let code = error["code"] as? String
    else { return .proceed }
    throw ServiceError(code: code)
}

private func chain(_ request: URLRequest?) -> String? {
    request?.value(forHTTPHeaderField: "X-Chain")
}

// MARK: - Interceptors

@Suite("ResponseInterceptor", timeLimit(minutes: 1))
struct ResponseInterceptorTests {
    @Test func interceptorMapsAnErrorBodyToTheUsersError() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"error":{"code":"E_QUOTA"}}"#, status: 429) }
        let connect = Middleware.connect(
            transport: transport, middleware: ConnectMiddleware(interceptors: [mapsErrorBodies]))
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? ServiceError == ServiceError(code: "E_QUOTA"))
    }

    @Test func interceptorThatProceedsLeavesTheErrorHandlerInCharge() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"plain"}"#, status: 400) }
        let connect = Middleware.connect(
            transport: transport, middleware: ConnectMiddleware(interceptors: [mapsErrorBodies]))
        let result = await connect.request(Middleware.Call()).asyncResult
        guard case .unacceptableStatus(_, let message)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(result)")
            return
        }
        #expect(message == "plain")
    }

    @Test func interceptorSeesSuccessesTooAndCanFailThem() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"deprecated":true}"#) }
        let rejecting = ClosureInterceptor { response in
            if response.data == Data(#"{"deprecated":true}"#.utf8) { throw ServiceError(code: "deprecated") }
            return .proceed
        }
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware(interceptors: [rejecting]))
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? ServiceError == ServiceError(code: "deprecated"))
    }

    @Test func acceptTurnsA404IntoASuccess() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"items":[]}"#, status: 404) }
        let accepting = ClosureInterceptor { $0.statusCode == 404 ? .accept : .proceed }
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware(interceptors: [accepting]))
        let response = try await connect.response(Middleware.Call()).value
        #expect(response.statusCode == 404)
        #expect(response.data == Data(#"{"items":[]}"#.utf8))
        let data = try await connect.request(Middleware.Call()).value
        #expect(data == Data(#"{"items":[]}"#.utf8))
    }

    @Test func acceptedResponseStillGoesThroughTheValidators() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"items":[]}"#, status: 404) }
        let accepting = ClosureInterceptor { _ in .accept }
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware(interceptors: [accepting]))
        {
            $0.validators = [.requiredJSONKeys(["total"])]
        }
        let result = await connect.request(Middleware.Call()).asyncResult
        guard case .validationFailed(let response, let underlying)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected validationFailed, got \(result)")
            return
        }
        #expect(response.statusCode == 404)
        #expect((underlying as? MissingJSONKeys)?.keys == ["total"])
    }

    @Test func interceptorErrorReachesTheRetrierWithTheResponse() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() == 1 ? Fixtures.json(#"{"error":{"code":"E_BUSY"}}"#, status: 503) : Fixtures.json("{}")
        }
        let seen = Fixtures.Recorder<String>()
        let retrier = ClosureRetrier { attempt in
            seen.append("\((attempt.error as? ServiceError)?.code ?? "?") \(attempt.statusCode ?? 0)")
            return attempt.number == 1 ? .retry : .doNotRetry
        }
        let connect = Middleware.connect(
            transport: transport, middleware: ConnectMiddleware(retriers: [retrier], interceptors: [mapsErrorBodies]))
        _ = try await connect.request(Middleware.Call()).value
        #expect(seen.values == ["E_BUSY 503"])
        #expect(transport.requests.count == 2)
    }

    @Test func interceptorsRunOnEveryAttempt() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() < 3 ? Fixtures.json("{}", status: 500) : Fixtures.json("{}")
        }
        let intercepted = Fixtures.Recorder<Int>()
        let interceptor = ClosureInterceptor { response in
            intercepted.append(response.statusCode)
            return .proceed
        }
        let connect = Middleware.connect(
            transport: transport,
            middleware: ConnectMiddleware(retriers: [RetryPolicy(jitter: 0)], interceptors: [interceptor]))
        _ = try await connect.request(Middleware.Call()).value
        #expect(intercepted.values == [500, 500, 200])
    }

    @Test func interceptorsAreAskedInOrderUntilOneAccepts() async throws {
        let log = Fixtures.Recorder<String>()
        let first = ClosureInterceptor { _ in
            log.append("first")
            return .proceed
        }
        let accepting = ClosureInterceptor { _ in
            log.append("accepting")
            return .accept
        }
        let never = ClosureInterceptor { _ in
            log.append("never")
            return .proceed
        }
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 418) }
        let connect = Middleware.connect(
            transport: transport, middleware: ConnectMiddleware(interceptors: [first, accepting, never]))
        _ = try await connect.response(Middleware.Call()).value
        #expect(log.values == ["first", "accepting"])
    }

    @Test func firstThrowingInterceptorFailsTheRequestAndLaterOnesAreNotAsked() async throws {
        let asked = Fixtures.Counter()
        let throwing = ClosureInterceptor { _ in throw ServiceError(code: "first") }
        let later = ClosureInterceptor { _ in
            asked.increment()
            return .accept
        }
        let connect = Middleware.connect(
            transport: RecordingTransport(), middleware: ConnectMiddleware(interceptors: [throwing, later]))
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? ServiceError == ServiceError(code: "first"))
        #expect(asked.value == 0)
    }
}

// MARK: - Composition

@Suite("ConnectMiddleware composition and ConnectorMiddleware", timeLimit(minutes: 1))
struct MiddlewareCompositionTests {
    @Test func composedMiddlewaresAdaptInterceptAndRetryInTheOrderGiven() async throws {
        let log = Fixtures.Recorder<String>()
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() == 1 ? Fixtures.json("{}", status: 500) : Fixtures.json("{}")
        }
        let a = NamedMiddleware(name: "a", log: log)
        let b = NamedMiddleware(name: "b", log: log, retryAnswer: .retry)
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware([a, b]))
        _ = try await connect.request(Middleware.Call()).value
        #expect(
            log.values == [
                "a.adapt", "b.adapt", "a.intercept", "b.intercept", "a.retry#1", "b.retry#1",
                "a.adapt", "b.adapt", "a.intercept", "b.intercept",
            ])
        #expect(transport.requests.map(chain) == ["a,b", "a,b"])
    }

    @Test func composedMiddlewareStopsAtTheFirstAccept() async throws {
        let log = Fixtures.Recorder<String>()
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let a = NamedMiddleware(name: "a", log: log, retryAnswer: .retry)
        let b = NamedMiddleware(name: "b", log: log, decision: .accept)
        let c = NamedMiddleware(name: "c", log: log, retryAnswer: .retry)
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware([a, b, c]))
        let response = try await connect.response(Middleware.Call()).value
        #expect(response.statusCode == 500)
        // b accepts the 500: c is not asked, and as the request succeeded no retrier is asked.
        #expect(log.values == ["a.adapt", "b.adapt", "c.adapt", "a.intercept", "b.intercept"])
        #expect(transport.requests.count == 1)
    }

    @Test func composedMiddlewareRetriesOnTheFirstRetriersAnswer() async throws {
        let log = Fixtures.Recorder<String>()
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { _ in
            calls.increment() == 1 ? Fixtures.json("{}", status: 500) : Fixtures.json("{}")
        }
        let a = NamedMiddleware(name: "a", log: log, retryAnswer: .retry)
        let b = NamedMiddleware(name: "b", log: log, retryAnswer: .doNotRetryWithError(ServiceError(code: "b")))
        let connect = Middleware.connect(transport: transport, middleware: ConnectMiddleware([a, b]))
        _ = try await connect.request(Middleware.Call()).value
        #expect(log.values.filter { $0.contains("retry") } == ["a.retry#1"])
    }

    @Test func inheritedRunsOnlyTheClientsMiddleware() async throws {
        let transport = RecordingTransport()
        let log = Fixtures.Recorder<String>()
        let connect = Middleware.connect(transport: transport, middleware: NamedMiddleware(name: "client", log: log))
        _ = try await connect.request(Middleware.Call(middleware: .inherited)).value
        #expect(chain(transport.requests.last) == "client")
    }

    @Test func addingRunsTheClientsMiddlewareThenTheConnectors() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 404) }
        let log = Fixtures.Recorder<String>()
        let client = NamedMiddleware(name: "client", log: log)
        let extra = NamedMiddleware(name: "extra", log: log, decision: .accept)
        let connect = Middleware.connect(transport: transport, middleware: client)
        let response = try await connect.response(Middleware.Call(middleware: .adding([extra]))).value
        #expect(response.statusCode == 404)
        #expect(chain(transport.requests.last) == "client,extra")
        #expect(log.values == ["client.adapt", "extra.adapt", "client.intercept", "extra.intercept"])
    }

    @Test func onlyRunsTheConnectorsMiddlewareInsteadOfTheClients() async throws {
        let transport = RecordingTransport()
        let log = Fixtures.Recorder<String>()
        let client = NamedMiddleware(name: "client", log: log)
        let connect = Middleware.connect(transport: transport, middleware: client)
        let own = [NamedMiddleware(name: "x", log: log), NamedMiddleware(name: "y", log: log)]
        _ = try await connect.request(Middleware.Call(middleware: .only(own))).value
        #expect(chain(transport.requests.last) == "x,y")
        #expect(!log.values.contains { $0.hasPrefix("client.") })
    }

    @Test func noneRunsNoAdaptersNoInterceptorsAndNoRetries() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 503) }
        let log = Fixtures.Recorder<String>()
        let client = NamedMiddleware(name: "client", log: log, decision: .accept, retryAnswer: .retry)
        let connect = Middleware.connect(transport: transport, middleware: client)
        let result = await connect.request(Middleware.Call(middleware: .none)).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 503)
        #expect(log.values.isEmpty)
        #expect(transport.requests.count == 1)
        #expect(chain(transport.requests.first) == nil)
    }

    @Test func connectorMiddlewareFlagsDescribeTheChoice() {
        #expect(ConnectorMiddleware.inherited.usesClientMiddleware && ConnectorMiddleware.inherited.additional.isEmpty)
        #expect(!ConnectorMiddleware.none.usesClientMiddleware && ConnectorMiddleware.none.additional.isEmpty)
        let log = Fixtures.Recorder<String>()
        let adding = ConnectorMiddleware.adding([NamedMiddleware(name: "a", log: log)])
        #expect(adding.usesClientMiddleware && adding.additional.count == 1)
        let only = ConnectorMiddleware.only([NamedMiddleware(name: "a", log: log)])
        #expect(!only.usesClientMiddleware && only.additional.count == 1)
    }
}
