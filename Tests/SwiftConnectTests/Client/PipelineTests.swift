import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// A retrier that answers from a script, one answer per attempt, and records what it was asked.
private struct ScriptedRetrier: RequestRetrier {
    struct Question: Sendable {
        let error: any Error
        let statusCode: Int?
        let attempt: Int
    }

    let answers: [RetryResult]
    let asked = Fixtures.Recorder<Question>()

    func retry(_ attempt: FailedAttempt) async -> RetryResult {
        asked.append(Question(error: attempt.error, statusCode: attempt.statusCode, attempt: attempt.number))
        return attempt.number <= answers.count ? answers[attempt.number - 1] : .doNotRetry
    }
}

/// A handler whose error names the status.
private struct StatusNamingHandler: ErrorHandlerProtocol {
    func handle(response: [String: Any]) -> Error? { nil }
    func handle(response: [String: Any], statusCode: Int) -> Error? {
        Fixtures.TestError(code: "\(statusCode)")
    }
}

/// Throws on every adaptation.
private struct FailingAdapter: RequestAdapter {
    func adapt(_ request: URLRequest) async throws -> URLRequest {
        throw Fixtures.TestError(code: "adapter")
    }
}

@Suite("Pipeline")
struct PipelineTests {
    private let request = URLRequest(url: URL(string: "http://example.test/items")!)

    private func pipeline(
        transport: any Transport, retriers: [any RequestRetrier] = [], adapters: [any RequestAdapter] = [],
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(), logger: (any ConnectLogger)? = nil,
        acceptable: Range<Int> = 200..<300
    ) -> Pipeline {
        Pipeline(
            middleware: ConnectMiddleware(adapters: adapters, retriers: retriers), errorHandler: errorHandler,
            transport: transport, logger: logger, acceptableStatusCodes: acceptable, isIdempotent: true,
            validators: [], redirectPolicy: .follow, sleep: ConnectConfiguration().sleep)
    }

    // MARK: classify

    @Test func classifyTurnsCancellationErrorIntoCancelled() {
        #expect((Pipeline.classify(CancellationError()) as? ConnectError)?.isCancellation == true)
    }

    @Test func classifyTurnsURLErrorCancelledIntoCancelled() {
        #expect((Pipeline.classify(URLError(.cancelled)) as? ConnectError)?.isCancellation == true)
    }

    @Test func classifyWrapsOtherTransportErrors() throws {
        let error = try #require(Pipeline.classify(URLError(.timedOut)) as? ConnectError)
        guard case .transport(let underlying) = error else {
            Issue.record("expected .transport, got \(error)")
            return
        }
        #expect((underlying as? URLError)?.code == .timedOut)
    }

    @Test func classifyPassesConnectErrorsThrough() throws {
        let error = try #require(Pipeline.classify(ConnectError.invalidResponse) as? ConnectError)
        guard case .invalidResponse = error else {
            Issue.record("expected .invalidResponse, got \(error)")
            return
        }
    }

    // MARK: run

    @Test func successReturnsTheResponse() async throws {
        let result = await pipeline(transport: StubTransport { _ in Fixtures.json("[1]", status: 200) }).run(request)
        let response = try result.get()
        #expect(response.statusCode == 200)
        #expect(response.data == Data("[1]".utf8))
    }

    @Test func acceptableStatusCodesDecideSuccess() async throws {
        let transport = StubTransport { _ in Fixtures.json(#"{"msg":"teapot"}"#, status: 418) }
        let accepted = await pipeline(transport: transport, acceptable: 200..<500).run(request)
        #expect((try? accepted.get())?.statusCode == 418)
        let rejected = await pipeline(transport: transport).run(request)
        #expect((Fixtures.error(of: rejected) as? ConnectError)?.statusCode == 418)
    }

    @Test func retrierIsAskedWithTheHandlersErrorTheResponseAndTheAttempt() async throws {
        let retrier = ScriptedRetrier(answers: [.retry, .retry])
        let transport = StubTransport { _ in Fixtures.json("{}", status: 503) }
        let result = await pipeline(transport: transport, retriers: [retrier], errorHandler: StatusNamingHandler())
            .run(request)
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == Fixtures.TestError(code: "503"))
        let asked = retrier.asked.values
        #expect(asked.map(\.attempt) == [1, 2, 3])
        #expect(asked.map(\.statusCode) == [503, 503, 503])
        #expect(asked.allSatisfy { $0.error as? Fixtures.TestError == Fixtures.TestError(code: "503") })
    }

    @Test func retrierSeesNoResponseForATransportError() async throws {
        let retrier = ScriptedRetrier(answers: [])
        let result = await pipeline(
            transport: StubTransport { _ in throw URLError(.networkConnectionLost) }, retriers: [retrier]
        )
        .run(request)
        let asked = retrier.asked.values
        #expect(asked.count == 1)
        #expect(asked.first?.statusCode == nil)
        #expect(((asked.first?.error as? ConnectError)?.underlyingError as? URLError)?.code == .networkConnectionLost)
        #expect(
            ((Fixtures.error(of: result) as? ConnectError)?.underlyingError as? URLError)?.code
                == .networkConnectionLost)
    }

    @Test func retrierIsNotAskedAboutACancellation() async throws {
        let retrier = ScriptedRetrier(answers: [.retry])
        let result = await pipeline(transport: StubTransport { _ in throw CancellationError() }, retriers: [retrier])
            .run(request)
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        #expect(retrier.asked.values.isEmpty)
    }

    @Test func retrierIsNotAskedAboutASuccess() async throws {
        let retrier = ScriptedRetrier(answers: [.retry])
        _ = await pipeline(transport: StubTransport { _ in Fixtures.json("{}") }, retriers: [retrier]).run(request)
        #expect(retrier.asked.values.isEmpty)
    }

    @Test func retryThenSuccessReturnsTheSuccess() async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { _ in
            calls.increment() < 3 ? Fixtures.json("{}", status: 500) : Fixtures.json(#"{"ok":1}"#)
        }
        let result = await pipeline(transport: transport, retriers: [ScriptedRetrier(answers: [.retry, .retry])])
            .run(request)
        #expect((try? result.get())?.data == Data(#"{"ok":1}"#.utf8))
        #expect(calls.value == 3)
    }

    @Test func adapterErrorIsReturnedUnwrappedAndNothingIsSent() async throws {
        let transport = RecordingTransport()
        let result = await pipeline(transport: transport, adapters: [FailingAdapter()]).run(request)
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == Fixtures.TestError(code: "adapter"))
        #expect(transport.requests.isEmpty)
    }

    @Test func cancelledTaskReturnsCancelledWithoutSending() async throws {
        let transport = RecordingTransport()
        let pipeline = pipeline(transport: transport)
        let request = request
        let gate = Fixtures.Gate()
        let task = Task {
            try? await gate.wait()  // cancelled before the pipeline starts
            return await pipeline.run(request)
        }
        task.cancel()
        let result = await task.value
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        #expect(transport.requests.isEmpty)
    }

    /// Past about 1.8e10 s, a delay no longer fits `Task.sleep`'s nanoseconds: the default sleep
    /// waits its longest (about 146 years) instead of trapping, until cancelled.
    @Test(arguments: [30, 1e12, .infinity] as [TimeInterval])
    func cancellingDuringARetryDelayReturnsCancelled(delay: TimeInterval) async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { _ in
            calls.increment()
            return Fixtures.json("{}", status: 500)
        }
        let pipeline = pipeline(transport: transport, retriers: [ScriptedRetrier(answers: [.retryWithDelay(delay)])])
        let request = request
        let task = Task { await pipeline.run(request) }
        for _ in 0..<200 where calls.value == 0 {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        task.cancel()
        let result = await task.value
        #expect((Fixtures.error(of: result) as? ConnectError)?.isCancellation == true)
        #expect(calls.value == 1)
    }

    @Test(arguments: [-1, -.infinity, .nan, 0] as [TimeInterval])
    func aNegativeOrNaNRetryDelayRetriesAtOnce(delay: TimeInterval) async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { _ in
            calls.increment() < 2 ? Fixtures.json("{}", status: 500) : Fixtures.json(#"{"ok":1}"#)
        }
        let pipeline = pipeline(transport: transport, retriers: [ScriptedRetrier(answers: [.retryWithDelay(delay)])])
        let result = await pipeline.run(request)
        #expect((try? result.get())?.data == Data(#"{"ok":1}"#.utf8))
        #expect(calls.value == 2)
    }

    /// A sleep of the configuration's that fails is not the request being cancelled: the failure
    /// is the sleep's own error.
    @Test func aRetryDelayWhoseSleepFailsFailsWithThatErrorNotAsCancelled() async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { _ in
            calls.increment()
            return Fixtures.json("{}", status: 503)
        }
        let pipeline = Pipeline(
            middleware: ConnectMiddleware(retriers: [ScriptedRetrier(answers: [.retryWithDelay(1)])]),
            errorHandler: ErrorHandler(), transport: transport, logger: nil, acceptableStatusCodes: 200..<300,
            isIdempotent: true, validators: [], redirectPolicy: .follow,
            sleep: { _ in throw Fixtures.TestError(code: "sleep") })
        let error = Fixtures.error(of: await pipeline.run(request))
        #expect(error as? Fixtures.TestError == Fixtures.TestError(code: "sleep"), "\(String(describing: error))")
        #expect(calls.value == 1)
    }

    /// An adapter that throws a `CancellationError` of its own (a task of its that was cancelled)
    /// does not make the request look cancelled: its error passes through as adapters' errors do.
    @Test func anAdaptersOwnCancellationErrorIsNotTheRequestsCancellation() async throws {
        let transport = StubTransport { _ in Fixtures.json("{}") }
        let adapter = ClosureAdapter { _ in throw CancellationError() }
        let error = Fixtures.error(of: await pipeline(transport: transport, adapters: [adapter]).run(request))
        #expect(error is CancellationError, "\(String(describing: error))")
    }

    @Test func theDefaultSleepCountsAnyDelayInNanosecondsWithoutTrapping() {
        #expect(ConnectConfiguration.nanoseconds(1.5) == 1_500_000_000)
        #expect(ConnectConfiguration.nanoseconds(0) == 0)
        #expect(ConnectConfiguration.nanoseconds(-3) == 0)
        #expect(ConnectConfiguration.nanoseconds(.nan) == 0)
        #expect(ConnectConfiguration.nanoseconds(4e9) == 4_000_000_000_000_000_000)
        #expect(ConnectConfiguration.nanoseconds(5e9) == 1 << 62, "2^62 ns is about 4.6e9 s")
        #expect(ConnectConfiguration.nanoseconds(1.9e10) == 1 << 62)
        #expect(ConnectConfiguration.nanoseconds(.infinity) == 1 << 62)
    }

    @Test func loggerReceivesTheRequestThenTheResponse() async throws {
        let logger = CapturingLogger()
        _ = await pipeline(transport: StubTransport { _ in Fixtures.json("{}") }, logger: logger).run(request)
        #expect(logger.messages.count == 2)
        #expect(logger.messages.first?.contains("curl") == true)
        #expect(logger.messages.last?.hasPrefix("200") == true)
    }
}

// MARK: - Following redirects

/// A connector with credentials of the API's own (`X-API-Key`), as `AuthorizedConnector` allows.
private struct APIKeyConnector: Connector, AuthorizedConnector {
    var baseURL = URL(string: "https://api.test")!
    var endpoint = "/start"
    var method: HTTPMethod = .get
    var authorizationToken: AuthorizationToken? { .header(name: "X-API-Key", value: "key-123") }
}

/// Adds a bearer token, counting its runs.
private struct TokenAdapter: RequestAdapter {
    let runs = PipelineFixtures.Counter()

    func adapt(_ request: URLRequest) async throws -> URLRequest {
        runs.increment()
        var request = request
        request.setValue("Bearer adapter-token", forHTTPHeaderField: "Authorization")
        return request
    }
}

@Suite("Pipeline: following redirects")
struct PipelineRedirectTests {
    /// Answers `/start` with `status` to `location`, anything else with `200 {"final":true}`.
    private static func redirecting(_ status: Int, to location: String) -> RecordingTransport {
        RecordingTransport { request in
            if request.url?.path == "/start" {
                return StubTransport.Reply(statusCode: status, headers: ["Location": location])
            }
            return Fixtures.json(#"{"final":true}"#)
        }
    }

    private var start: TestConnector {
        TestConnector(baseURL: URL(string: "https://api.test")!, endpoint: "/start")
    }

    @Test func redirectIsFollowedToTheFinalResponse() async throws {
        let transport = Self.redirecting(302, to: "/final")
        let response = try await makeConnect(transport: transport).response(start).value
        #expect(response.statusCode == 200)
        #expect(response.data == Data(#"{"final":true}"#.utf8))
        #expect(response.url == URL(string: "https://api.test/final"))
        #expect(response.request.url == URL(string: "https://api.test/final"))
        #expect(transport.requests.map { $0.url?.path } == ["/start", "/final"])
    }

    @Test func credentialsAreNotSentToAnotherOrigin() async throws {
        let transport = Self.redirecting(302, to: "https://elsewhere.test/final")
        let adapter = TokenAdapter()
        let connector = TestConnector(
            baseURL: URL(string: "https://api.test")!, endpoint: "/start",
            headers: [HTTPHeader(name: "Cookie", value: "session=1")])
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [adapter]))
        _ = try await connect.request(connector).value
        let requests = transport.requests
        try #require(requests.count == 2)
        #expect(requests[0].value(forHTTPHeaderField: "Authorization") == "Bearer adapter-token")
        #expect(requests[1].url?.host == "elsewhere.test")
        #expect(requests[1].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(requests[1].value(forHTTPHeaderField: "Cookie") == nil)
        #expect(adapter.runs.value == 1)
    }

    @Test func credentialsAreKeptOnTheSameOrigin() async throws {
        let transport = Self.redirecting(301, to: "https://api.test:443/final")
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [TokenAdapter()]))
        _ = try await connect.request(start).value
        #expect(transport.requests.last?.value(forHTTPHeaderField: "Authorization") == "Bearer adapter-token")
    }

    /// `AuthorizationToken.header(name:value:)` is a credential like `Authorization`; Pipeline's
    /// documentation promises credentials never reach another origin on a hop.
    @Test func apiKeyCredentialHeaderIsNotSentToAnotherOrigin() async throws {
        let transport = Self.redirecting(302, to: "https://elsewhere.test/final")
        _ = try await makeConnect(transport: transport).request(APIKeyConnector()).value
        let requests = transport.requests
        try #require(requests.count == 2)
        #expect(requests[0].value(forHTTPHeaderField: "X-API-Key") == "key-123")
        #expect(requests[1].value(forHTTPHeaderField: "X-API-Key") == nil, "the API key leaked to elsewhere.test")
    }

    @Test(arguments: [307, 308])
    func temporaryRedirectResendsMethodAndBody(status: Int) async throws {
        struct Payload: Encodable, Sendable { let name: String }
        let transport = Self.redirecting(status, to: "/final")
        let connector = TestConnector(
            baseURL: URL(string: "https://api.test")!, endpoint: "/start", method: .post,
            parameters: Parameter.jsonObject(value: Payload(name: "kept")))
        _ = try await makeConnect(transport: transport).request(connector).value
        let requests = transport.requests
        try #require(requests.count == 2)
        #expect(requests[1].httpMethod == "POST")
        #expect(requests[1].httpBody == requests[0].httpBody)
        #expect(requests[1].httpBody.map { String(decoding: $0, as: UTF8.self) }?.contains("kept") == true)
    }

    @Test func seeOtherAfterAPostFetchesWithGet() async throws {
        struct Payload: Encodable, Sendable { let name: String }
        let transport = Self.redirecting(303, to: "/final")
        let connector = TestConnector(
            baseURL: URL(string: "https://api.test")!, endpoint: "/start", method: .post,
            parameters: Parameter.jsonObject(value: Payload(name: "x")))
        _ = try await makeConnect(transport: transport).request(connector).value
        #expect(transport.requests.last?.httpMethod == "GET")
        #expect(transport.requests.last?.httpBody == nil)
    }

    @Test func endlessRedirectsFailWithTooManyRedirects() async throws {
        let transport = RecordingTransport { request in
            let next = (Int(request.url?.lastPathComponent ?? "") ?? 0) + 1
            return StubTransport.Reply(statusCode: 302, headers: ["Location": "/hop/\(next)"])
        }
        let result = await makeConnect(transport: transport).request(TestConnector(endpoint: "/hop/0")).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        guard case .tooManyRedirects(let response) = error else {
            Issue.record("expected .tooManyRedirects, got \(error)")
            return
        }
        #expect(response.statusCode == 302)
        #expect(error.statusCode == 302)
        #expect(error.description.contains("/hop/"))
        #expect(transport.requests.count == RedirectPolicy.follow.maximumHops + 1)
    }

    @Test func redirectWithoutLocationGoesToTheErrorHandler() async throws {
        let transport = RecordingTransport { _ in StubTransport.Reply(statusCode: 302) }
        let result = await makeConnect(transport: transport).request(start).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 302)
        #expect(transport.requests.count == 1)
    }

    @Test func everyHopIsLoggedWithCredentialsRedacted() async throws {
        let logger = CapturingLogger()
        let transport = Self.redirecting(302, to: "/final")
        let connect = makeConnect(
            transport: transport, middleware: ConnectMiddleware(adapters: [TokenAdapter()]), logger: logger)
        _ = try await connect.request(start, debugResponse: true).value
        let log = logger.messages.joined(separator: "\n")
        #expect(logger.messages.filter { $0.contains("curl") }.count == 2)
        #expect(log.contains("302"))
        #expect(log.contains("https://api.test/final"))
        #expect(!log.contains("adapter-token"))
    }
}
