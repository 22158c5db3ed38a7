import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The usage document's connectors, exactly as written (their hosts and all), sent to the local
/// httpbin: a transport moves each request to `HTTPBIN_URL/anything/...`, where httpbin echoes
/// what it received.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["HTTPBIN_URL"] != nil,
        "HTTPBIN_URL is not set: run scripts/test.sh, which starts httpbin on 127.0.0.1 and runs the tests"))
struct UsageDocumentIntegrationTests {
    /// Sends every request to httpbin's `/anything` echo, keeping path and query.
    struct LoopbackTransport: Transport {
        let server = URL(string: ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? "http://127.0.0.1:9")!
        let transport = URLSessionTransport()

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            var moved = request
            let original = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
            components.percentEncodedPath = "/anything" + original.percentEncodedPath
            components.percentEncodedQuery = original.percentEncodedQuery
            moved.url = components.url
            return try await transport.send(moved)
        }
    }

    struct Echo: Decodable {
        let method: String
        let url: String
        let args: [String: String]
        let headers: [String: String]
    }

    let connect: Connect = {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "usage.callbacks")
        return Connect(configuration: configuration, transport: LoopbackTransport())
    }()

    @Test func todoConnectorGetsTheTodo() async throws {
        let echo = try await connect.request(TodoConnector.get(id: 123)).decoded(toType: Echo.self).value
        #expect(echo.method == "GET")
        #expect(echo.url.hasSuffix("/anything/todos/123"))
    }

    @Test func advancedTodoConnectorSendsPathQueryAndBody() async throws {
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)
        let connector = AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo)

        let echo = try await connect.request(connector).decoded(toType: Echo.self).value
        #expect(echo.method == "PUT")
        #expect(echo.url.hasSuffix("/anything/users/1/todos/2?action=update"))
        #expect(echo.args == ["action": "update"])
        #expect(echo.headers["Content-Type"] == "application/json")

        let sent = try await connect.request(connector).decoded(toType: Todo.self, keyPath: "json").value
        #expect(sent.title == "Test Todo" && sent.userId == 2 && sent.id == 1 && !sent.completed)
    }

    @Test func observeDeliversTheDecodedResult() async throws {
        let result: Result<Echo, Error> = await withCheckedContinuation { continuation in
            connect.request(TodoConnector.get(id: 7), debugResponse: false).decoded(toType: Echo.self).observe { result in
                continuation.resume(returning: result)
            }
        }
        let echo = try result.get()
        #expect(echo.url.hasSuffix("/todos/7"))
    }

    @Test func mediaConnectorUploadsFilesAndFieldsAsTheUploadsChapterSays() async throws {
        struct UploadEcho: Decodable {
            let url: String
            let form: [String: String]
            let files: [String: String]
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("usage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("beach.jpg")
        try Data("jpeg bytes".utf8).write(to: photo)

        let body = try await uploadAlbum(photos: [photo], connect: connect).value
        let echo = try JSONDecoder().decode(UploadEcho.self, from: body)
        #expect(echo.url.hasSuffix("/anything/api/v1/albums"))
        #expect(echo.form == ["title": "Holiday", "isPublic": "true"])
        #expect(echo.files == ["photos": "jpeg bytes"])

        let failure = await connect.upload(files: [File(key: "f", fileURL: directory.appendingPathComponent("gone"))],
            to: MediaConnector.avatar(userId: 1)).asyncResult
        guard case .failure(let error) = failure else {
            Issue.record("a missing file must fail the upload")
            return
        }
        #expect(describeUploadFailure(error).hasPrefix("no file at"))
    }
}

/// What a stub transport saw, in order; stubs may be called from any thread.
final class Recorded<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `values` is only touched under `lock`.
    private let lock = NSLock()
    private var values: [Value] = []

    func add(_ value: Value) {
        lock.withLock { values.append(value) }
    }

    var all: [Value] {
        lock.withLock { values }
    }
}

/// Usage.md's `MirrorOnOutage` sends the same request to the mirror: path, query and their
/// percent-encoding as they were sent.
@Test func mirrorOnOutageResendsTheSameRequestToTheMirror() async throws {
    struct Item: Connector {
        var baseURL: URL { URL(string: "https://api.example.org/v1")! }
        var endpoint: String { "/items/{name}" }
        var parameters: ParametersRepresentable? {
            CompositeParameters(.path(key: "name", value: "a/b c"), .query(key: "page", value: "2+3"))
        }
    }
    let sent = Recorded<String>()
    let transport = StubTransport { request in
        sent.add(request.url?.absoluteString ?? "")
        let status = request.url?.host == "mirror.example.org" ? 200 : 503
        return StubTransport.Reply(statusCode: status, body: Data("{}".utf8))
    }
    let connect = Connect(
        middleware: ConnectMiddleware(retriers: [MirrorOnOutage(mirrorHost: "mirror.example.org")]), transport: transport)
    _ = try await connect.request(Item()).value
    #expect(sent.all == [
        "https://api.example.org/v1/items/a%2Fb%20c?page=2%2B3",
        "https://mirror.example.org/v1/items/a%2Fb%20c?page=2%2B3",
    ])
}

/// Usage.md's `LegacyReportConnector` decodes its dates with its own decoder, while the
/// configuration's decoder (ISO 8601 here) would fail on them.
@Test func aConnectorsOwnDecoderDecodesItsResponses() async throws {
    struct Report: Decodable, Sendable { let createdAt: Date }
    let configuration = ConnectConfiguration()
    configuration.jsonDecoder.dateDecodingStrategy = .iso8601
    let transport = StubTransport { _ in StubTransport.Reply(statusCode: 200, body: Data(#"{"createdAt":86400}"#.utf8)) }
    let connect = Connect(configuration: configuration, transport: transport)
    let report = try await connect.request(LegacyReportConnector.report(id: 7)).decoded(toType: Report.self).value
    #expect(report.createdAt == Date(timeIntervalSince1970: 86400))
}

/// Usage.md's `LegacyReportConnector` encodes its dates with its own encoder, in seconds, while the
/// configuration's encoder writes ISO 8601.
@Test func aConnectorsOwnEncoderEncodesItsBodies() async throws {
    let configuration = ConnectConfiguration()
    configuration.jsonEncoder.dateEncodingStrategy = .iso8601
    let sent = Recorded<Data>()
    let transport = StubTransport { request in
        sent.add(request.httpBody ?? Data())
        return StubTransport.Reply(statusCode: 201, body: Data())
    }
    let connect = Connect(configuration: configuration, transport: transport)
    let report = LegacyReport(title: "Q3", createdAt: Date(timeIntervalSince1970: 86400))
    _ = try await connect.request(LegacyReportConnector.file(report)).value
    let body = try #require(sent.all.first)
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    #expect(object["createdAt"] as? Int == 86400, "sent: \(String(decoding: body, as: UTF8.self))")
    #expect(object["title"] as? String == "Q3")
}

/// Usage.md's `Connect.todo(id:)`: a call that knows its response type delivers the decoded model.
@Test func aCallThatKnowsItsResponseTypeDeliversTheModel() async throws {
    let transport = StubTransport { request in
        let id = request.url?.lastPathComponent ?? "?"
        return StubTransport.Reply(
            statusCode: 200, body: Data(#"{"userId":1,"id":\#(id),"title":"typed","completed":true}"#.utf8))
    }
    let todo = try await Connect(transport: transport).todo(id: 42).value
    #expect(todo.id == 42 && todo.title == "typed" && todo.completed)
}

/// Usage.md's `request(_:countedBy:)`: the count goes up at the call and back down once the
/// request ends, by success, failure or cancellation.
@Test func anActivityCounterCountsEachRequestOnceHoweverItEnds() async throws {
    let gate = AsyncStream<Void>.makeStream()
    let transport = StubTransport { request in
        if request.url?.path == "/todos/3" { for await _ in gate.stream {} }  // held until cancelled
        return StubTransport.Reply(statusCode: request.url?.path == "/todos/1" ? 200 : 500)
    }
    let connect = Connect(transport: transport)
    let activity = ActivityCounter()
    let ok = connect.request(TodoConnector.get(id: 1), countedBy: activity)
    let failing = connect.request(TodoConnector.get(id: 2), countedBy: activity)
    let held = connect.request(TodoConnector.get(id: 3), countedBy: activity)
    _ = await ok.asyncResult
    _ = await failing.asyncResult
    // Their observers run on the callback queue, perhaps just after the awaits return.
    for _ in 0..<200 where activity.inFlight != 1 { try await Task.sleep(nanoseconds: 10_000_000) }
    #expect(activity.inFlight == 1, "the held request is still in flight")
    held.cancel()
    _ = await held.asyncResult
    gate.continuation.finish()
    for _ in 0..<200 where activity.inFlight != 0 { try await Task.sleep(nanoseconds: 10_000_000) }
    #expect(activity.inFlight == 0)
}

/// Usage.md's `TodoDetailModel`: a second `show` cancels the first load, whose request ends
/// cancelled, and shows the second todo with no failure.
@MainActor
@Test func aViewModelCancelsTheLoadANewerOneReplaces() async throws {
    let first = AsyncStream<Void>.makeStream()
    let started = AsyncStream<Void>.makeStream()
    let firstCancelled = Recorded<Bool>()
    let transport = StubTransport { request in
        if request.url?.path == "/todos/1" {
            started.continuation.yield()
            for await _ in first.stream {}  // held until its request is cancelled
            firstCancelled.add(Task.isCancelled)
        }
        let id = request.url?.lastPathComponent ?? "0"
        return StubTransport.Reply(
            statusCode: 200, body: Data(#"{"userId":1,"id":\#(id),"title":"t\#(id)","completed":false}"#.utf8))
    }
    let connect = Connect(transport: transport)
    let model = TodoDetailModel()
    model.show(id: 1, connect: connect)
    for await _ in started.stream { break }
    model.show(id: 2, connect: connect)
    for _ in 0..<200 where model.todo == nil || firstCancelled.all.isEmpty {
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    first.continuation.finish()
    try await Task.sleep(nanoseconds: 50_000_000)  // not an assertion: room for a late first load
    #expect(firstCancelled.all == [true], "the first load's request was cancelled with its task")
    #expect(model.todo?.id == 2)
    #expect(model.failure == nil)
    #expect(transport.requests.map(\.url?.path) == ["/todos/1", "/todos/2"])
}

/// Usage.md's `describeTodoRequest`: the command, without a request sent.
@Test func aConnectorsRequestIsDescribedAsACurlCommand() throws {
    let transport = StubTransport { _ in
        Issue.record("nothing is sent")
        return StubTransport.Reply()
    }
    let command = try describeTodoRequest(connect: Connect(transport: transport))
    #expect(command.hasPrefix("$ curl -v"))
    #expect(command.hasSuffix(#""https://jsonplaceholder.typicode.com/todos/1""#))
    #expect(transport.requests.isEmpty)
}

/// Usage.md's `fetchTodoThroughAStub`: the stub's `requests` holds the one request sent.
@Test func aStubTransportRecordsTheRequestsItAnswered() async throws {
    let requests = try await fetchTodoThroughAStub()
    #expect(requests.map(\.url?.absoluteString) == ["https://jsonplaceholder.typicode.com/todos/7"])
    #expect(requests.map(\.httpMethod) == ["GET"])
}

/// Usage.md's `stayOnOurHost`, called directly with a `Redirect` made by hand, stops at another
/// host and follows on its own.
@Test func aRedirectDecisionIsTestedWithARedirectMadeByHand() async throws {
    #expect(await stayOnOurHostStopsAtAnotherHost())
    // As the sample's comment says to use it.
    let policy = RedirectPolicy.decide(stayOnOurHost)
    #expect(policy.maximumHops == 10)
    let url = URL(string: "https://api.myserver.com/old")!
    let response = Response(
        request: URLRequest(url: url),
        httpResponse: try #require(HTTPURLResponse(url: url, statusCode: 301, httpVersion: nil, headerFields: nil)),
        data: Data())
    let next = URLRequest(url: URL(string: "https://api.myserver.com/new")!)
    let decision = await stayOnOurHost(Redirect(response: response, proposedRequest: next, hop: 2))
    guard case .follow = decision else {
        Issue.record("expected .follow on the API's own host, got \(decision)")
        return
    }
}

/// The values Usage.md lists as made by hand keep what they are given, and the errors compare and
/// describe themselves as the library's own.
@Test func theLibrarysValuesCanBeMadeByHand() throws {
    let url = URL(string: "https://api.myserver.com/old")!
    let response = Response(
        request: URLRequest(url: url),
        httpResponse: try #require(HTTPURLResponse(url: url, statusCode: 307, httpVersion: nil, headerFields: nil)),
        data: Data("moved".utf8))
    let redirect = Redirect(
        response: response, proposedRequest: URLRequest(url: URL(string: "https://api.myserver.com/new")!), hop: 3)
    #expect(redirect.hop == 3)
    #expect(redirect.response.statusCode == 307 && redirect.response.data == Data("moved".utf8))
    #expect(redirect.proposedRequest.url?.path == "/new")
    let failure = DecodingFailure(
        type: "Todo", keyPath: "data", codingPath: "data.id", reason: "missing key 'id'", underlyingError: nil,
        response: response)
    let error = ConnectError.decoding(failure)
    #expect(error.description.contains("Could not decode Todo at key path 'data': missing key 'id'"))
    #expect(failure.codingPath == "data.id" && failure.response?.statusCode == 307)
    #expect(MissingJSONKeys(keys: ["id", "user.name"]) == MissingJSONKeys(keys: ["id", "user.name"]))
    #expect(MissingJSONKeys(keys: ["id", "user.name"]).description == "Missing JSON keys: id, user.name")
    #expect(TokenRefreshCancelled(underlying: CancellationError()).underlying is CancellationError)
    #expect(TokenRefreshLimitReached().description.contains("too many refreshes"))
    #expect(ErrorMessage(message: "quota").message == "quota")
}
