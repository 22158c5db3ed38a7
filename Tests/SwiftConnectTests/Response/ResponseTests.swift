import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// Adds `X-Adapted: yes`.
private struct MarkingAdapter: RequestAdapter {
    func adapt(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("yes", forHTTPHeaderField: "X-Adapted")
        return request
    }
}

@Suite("Response")
struct ResponseTests {
    @Test func responseKeepsStatusHeadersAndBody() {
        let response = Fixtures.response(
            status: 201, body: #"{"id":1}"#, headers: ["Content-Type": "application/json", "Location": "/todos/1"])
        #expect(response.statusCode == 201)
        #expect(response.headers["Location"] == "/todos/1")
        #expect(response.data == Data(#"{"id":1}"#.utf8))
    }

    @Test(arguments: ["X-Total-Count", "x-total-count", "X-TOTAL-COUNT", "x-Total-count"])
    func headerLookupIsCaseInsensitive(name: String) {
        let response = Fixtures.response(status: 200, headers: ["X-Total-Count": "42"])
        #expect(response.headers[name] == "42")
        #expect(response.headers.value(for: name) == "42")
    }

    @Test func absentHeaderIsNil() {
        #expect(Fixtures.response(status: 200).headers["X-Missing"] == nil)
    }

    @Test func urlIsTheResponsesURL() {
        let response = Fixtures.response(status: 200, url: "http://example.test/final")
        #expect(response.url == URL(string: "http://example.test/final"))
    }

    @Test func connectResponseGivesStatusCodeAndHeaders() async throws {
        let transport = StubTransport { _ in
            Fixtures.json(
                #"{"id":10,"title":"created"}"#, status: 201, headers: ["X-Total-Count": "37", "Location": "/todos/10"])
        }
        let response = try await makeConnect(transport: transport)
            .response(TestConnector(endpoint: "/todos", method: .post)).value
        #expect(response.statusCode == 201)
        #expect(response.headers["x-total-count"] == "37")
        #expect(response.headers["X-Total-Count"] == "37")
        #expect(response.headers["location"] == "/todos/10")
        #expect(
            try response.decoded(toType: PipelineFixtures.Todo.self) == PipelineFixtures.Todo(id: 10, title: "created"))
    }

    @Test func connectResponseKeepsTheRequestAsSentAfterMiddleware() async throws {
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [MarkingAdapter()]))
        let response = try await connect.response(
            TestConnector(endpoint: "/todos/{id}", parameters: Parameter.path(key: "id", value: "3"))
        ).value
        #expect(response.request.value(forHTTPHeaderField: "X-Adapted") == "yes")
        #expect(response.request.url?.path == "/todos/3")
        #expect(response.url?.path == "/todos/3")
    }

    @Test func noContentResponseHasAnEmptyBody() async throws {
        let transport = StubTransport { _ in StubTransport.Reply(statusCode: 204) }
        let response = try await makeConnect(transport: transport).response(TestConnector(method: .delete)).value
        #expect(response.statusCode == 204)
        #expect(response.data.isEmpty)
    }

    @Test func requestGivesTheBodyOfTheResponse() async throws {
        let transport = StubTransport { _ in Fixtures.json(#"{"ok":true}"#) }
        let data = try await makeConnect(transport: transport).request(TestConnector()).value
        #expect(data == Data(#"{"ok":true}"#.utf8))
    }

    @Test func dataOfFutureOfResponseIsTheBody() async throws {
        let transport = StubTransport { _ in Fixtures.json(#"[1,2]"#) }
        let data = try await makeConnect(transport: transport).response(TestConnector()).data.value
        #expect(data == Data("[1,2]".utf8))
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension ResponseTests {
    /// After a redirect the response's URL is where the answer came from, not the URL requested.
    @Test func responseURLIsTheFinalOneWhenItDiffersFromTheRequests() throws {
        let requested = try #require(URL(string: "http://example.test/start"))
        let final = try #require(URL(string: "http://example.test/final"))
        let http = try #require(
            HTTPURLResponse(url: final, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]))
        let response = Response(request: URLRequest(url: requested), httpResponse: http, data: Data())
        #expect(response.url == final)
    }
}
