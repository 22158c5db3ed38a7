import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

@Suite("StubTransport")
struct StubTransportTests {
    private let request = URLRequest(url: URL(string: "http://example.test/things?page=2")!)

    @Test func replyDefaultsToAnEmpty200() {
        let reply = StubTransport.Reply()
        #expect(reply.statusCode == 200)
        #expect(reply.headers.isEmpty)
        #expect(reply.body.isEmpty)
    }

    @Test func jsonReplyEncodesTheValueAndSetsTheContentType() throws {
        let reply = try StubTransport.Reply.json(Fixtures.Todo(id: 1, title: "t"), statusCode: 201)
        #expect(reply.statusCode == 201)
        #expect(reply.headers["Content-Type"] == "application/json")
        #expect(try JSONDecoder().decode(Fixtures.Todo.self, from: reply.body) == Fixtures.Todo(id: 1, title: "t"))
    }

    @Test func jsonReplyKeepsAGivenContentTypeWhateverItsCase() throws {
        let reply = try StubTransport.Reply.json([1, 2], headers: ["content-type": "application/problem+json"])
        #expect(reply.headers == ["content-type": "application/problem+json"])
    }

    @Test func sendAnswersWithTheRepliesStatusHeadersAndBody() async throws {
        let transport = StubTransport { _ in
            StubTransport.Reply(statusCode: 202, headers: ["X-Job": "17"], body: Data("queued".utf8))
        }
        let (data, response) = try await transport.send(request)
        #expect(data == Data("queued".utf8))
        #expect(response.statusCode == 202)
        #expect(response.value(forHTTPHeaderField: "x-job") == "17")
        #expect(response.url == request.url)
    }

    @Test func sendPassesTheRequestToTheClosure() async throws {
        let seen = Fixtures.Recorder<URLRequest>()
        var request = request
        request.httpMethod = "PATCH"
        request.httpBody = Data("{}".utf8)
        _ = try await StubTransport { request in
            seen.append(request)
            return StubTransport.Reply()
        }.send(request)
        #expect(seen.values.first?.httpMethod == "PATCH")
        #expect(seen.values.first?.httpBody == Data("{}".utf8))
        #expect(seen.values.first?.url == request.url)
    }

    @Test func sendRethrowsTheClosuresErrorUnchanged() async throws {
        let transport = StubTransport { _ in throw URLError(.badServerResponse) }
        let error = await #expect(throws: URLError.self) { try await transport.send(request) }
        #expect(error?.code == .badServerResponse)
    }

    @Test func sendInACancelledTaskThrowsWithoutCallingTheClosure() async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { _ in
            calls.increment()
            return StubTransport.Reply()
        }
        let request = request
        let gate = Fixtures.Gate()
        let task = Task {
            try? await gate.wait()
            return try await transport.send(request)
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(calls.value == 0)
        #expect(transport.requests.isEmpty, "a request the closure never saw is not recorded")
    }

    @Test func requestWithoutAURLIsAnInvalidResponse() async throws {
        var request = request
        request.url = nil
        let transport = StubTransport { _ in StubTransport.Reply() }
        await #expect(throws: ConnectError.self) { _ = try await transport.send(request) }
    }

    @Test func connectOverAStubTransportDecodesItsReply() async throws {
        let transport = StubTransport { request in
            try StubTransport.Reply.json(Fixtures.Todo(id: 5, title: request.url?.path ?? ""))
        }
        let todo = try await makeConnect(transport: transport).request(TestConnector(endpoint: "/todos/5"))
            .decoded(toType: Fixtures.Todo.self).value
        #expect(todo == Fixtures.Todo(id: 5, title: "/todos/5"))
    }

    @Test func closureErrorBecomesATransportErrorThroughConnect() async throws {
        let transport = StubTransport { _ in throw URLError(.dnsLookupFailed) }
        let result = await makeConnect(transport: transport).request(TestConnector()).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        guard case .transport(let underlying) = error else {
            Issue.record("expected .transport, got \(error)")
            return
        }
        #expect((underlying as? URLError)?.code == .dnsLookupFailed)
    }

    @Test func requestsRecordsWhatConnectSentInOrderRetriesAndHopsIncluded() async throws {
        let calls = Fixtures.Counter()
        let transport = StubTransport { request in
            switch (calls.increment(), request.url?.path) {
            case (1, _): return StubTransport.Reply(statusCode: 503, headers: ["Retry-After": "0"])
            case (_, "/old"): return StubTransport.Reply(statusCode: 307, headers: ["Location": "/new"])
            default: return StubTransport.Reply(statusCode: 200, body: Data("ok".utf8))
            }
        }
        #expect(transport.requests.isEmpty)
        let copy = transport
        let connect = makeConnect(
            transport: transport, middleware: ConnectMiddleware(retriers: [RetryPolicy(baseDelay: 0, jitter: 0)]))
        let call = TestConnector(
            endpoint: "/old", method: .put, headers: [.contentType("text/plain")],
            parameters: Parameter.data(Data("body".utf8), contentType: "text/plain"))
        _ = try await connect.request(call).value
        let paths = copy.requests.map { $0.url?.path }
        #expect(paths == ["/old", "/old", "/new"])
        #expect(copy.requests.map(\.httpMethod) == ["PUT", "PUT", "PUT"])
        #expect(copy.requests.map(\.httpBody) == Array(repeating: Data("body".utf8), count: 3))
    }

    @Test func removeAllRequestsForgetsTheRequestsForEveryCopy() async throws {
        let transport = StubTransport { _ in StubTransport.Reply() }
        _ = try await transport.send(request)
        #expect(transport.requests.map(\.url) == [request.url])
        let copy = transport
        copy.removeAllRequests()
        #expect(transport.requests.isEmpty)
        _ = try await transport.send(request)
        #expect(copy.requests.count == 1)
    }
}
