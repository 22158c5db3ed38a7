import Dispatch
import Foundation
import Testing

@testable import SwiftConnect

@Suite("RequestBuildCache")
struct RequestBuildCacheTests {
    /// The template parsed without a cache.
    func parsed(_ endpoint: String) throws -> EndpointTemplate {
        try EndpointTemplate(endpoint)
    }

    func expectSame(_ lhs: EndpointTemplate, _ rhs: EndpointTemplate, sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(lhs.path == rhs.path, sourceLocation: sourceLocation)
        #expect(lhs.query == rhs.query, sourceLocation: sourceLocation)
        #expect(lhs.slots == rhs.slots, sourceLocation: sourceLocation)
        #expect(lhs.pathStartsWithSlash == rhs.pathStartsWithSlash, sourceLocation: sourceLocation)
    }

    @Test func firstAndLaterLookupsGiveTheParsedTemplate() throws {
        let cache = RequestBuildCache(capacity: 8)
        let endpoint = "/users/{userId}/todos/{todoId}?expand={what}"
        let first = try cache.template(for: endpoint)
        let second = try cache.template(for: endpoint)
        expectSame(first, try parsed(endpoint))
        expectSame(second, try parsed(endpoint))
        #expect(cache.count == 1)
    }

    @Test func differentEndpointsGetTheirOwnTemplates() throws {
        let cache = RequestBuildCache(capacity: 8)
        let endpoints = ["/a/{id}", "/b/{id}", "/a/{id}?x=1", "", "a/{id}"]
        for endpoint in endpoints + endpoints {
            expectSame(try cache.template(for: endpoint), try parsed(endpoint))
        }
        #expect(cache.count == endpoints.count)
    }

    @Test func malformedEndpointThrowsEveryTimeAndIsNotKept() {
        let cache = RequestBuildCache(capacity: 8)
        for _ in 0..<2 {
            let error = #expect(throws: ConnectError.self) { try cache.template(for: "/users/{id") }
            guard case .invalidRequest(.malformedEndpoint(let endpoint, let detail))? = error else {
                Issue.record("expected malformedEndpoint, got \(String(describing: error))")
                return
            }
            #expect(endpoint == "/users/{id")
            #expect(detail == "unclosed slot {id")
        }
        #expect(cache.count == 0)
    }

    @Test func theCacheNeverHoldsMoreThanItsCapacity() throws {
        let cache = RequestBuildCache(capacity: 4)
        for id in 0..<100 {
            let endpoint = "/items/\(id)/{slot}"
            expectSame(try cache.template(for: endpoint), try parsed(endpoint))
            #expect(cache.count == min(id + 1, 4))
        }
        // Evicted endpoints are parsed again, correctly.
        expectSame(try cache.template(for: "/items/0/{slot}"), try parsed("/items/0/{slot}"))
        #expect(cache.count == 4)
    }

    /// The template used last is checked before the dictionary: lookups that alternate, repeat,
    /// or come after the last one was evicted must still get their own template.
    @Test func theLastTemplateIsServedOnlyForItsOwnEndpoint() throws {
        let cache = RequestBuildCache(capacity: 2)
        let built = ["/a/", "{id}"].joined()  // equal to "/a/{id}", in storage of its own
        let sequence = ["/a/{id}", built, "/a/{id}?x={y}", "/a/{id}", "/b/{id}", "/c/{id}", "/a/{id}", "/a/{id}"]
        for endpoint in sequence {
            expectSame(try cache.template(for: endpoint), try parsed(endpoint))
        }
        #expect(cache.count == 2)
    }

    /// `"é"` and `"e\u{301}"` are equal `String`s but different bytes, which encode differently:
    /// each endpoint gets its own template, whether it is the one used last or not.
    @Test func canonicallyEquivalentEndpointsKeepTheirOwnBytes() throws {
        let cache = RequestBuildCache(capacity: 8)
        let composed = "/caf\u{E9}/{a}"
        let decomposed = "/cafe\u{301}/{a}"
        #expect(composed == decomposed)  // what String says, and why the cache must not ask it
        for endpoint in [composed, decomposed, "/other", composed, "/other", decomposed] {
            expectSame(try cache.template(for: endpoint), try parsed(endpoint))
        }
        #expect(try cache.template(for: decomposed).path.first == .literal("/cafe%CC%81/"))
        #expect(cache.count == 3)
    }

    /// One visit answers for the three memos, each only for what it was told: the base found
    /// valid last, a template held, a type remembered as not conforming.
    @Test func recallAnswersOnlyForWhatWasRemembered() throws {
        let cache = RequestBuildCache(capacity: 8)
        let base = "https://api.example.com/v1"
        let endpoint = "/users/{id}"
        let type = ObjectIdentifier(TestConnector.self)
        let other = ObjectIdentifier(Int.self)

        var recalled = cache.recall(base: base, endpoint: endpoint, connectorType: type)
        #expect(recalled.layout == nil && recalled.template == nil && !recalled.isUnauthorizedType)

        let layout = try #require(cache.validBaseLayout(base))
        _ = try cache.template(for: endpoint)
        cache.rememberUnauthorizedType(type)
        recalled = cache.recall(base: base, endpoint: endpoint, connectorType: type)
        #expect(recalled.layout == layout)
        expectSame(try #require(recalled.template), try parsed(endpoint))
        #expect(recalled.isUnauthorizedType)

        // Another base (even one equal as a `String`), endpoint or type gets nothing.
        recalled = cache.recall(base: "https://other.test", endpoint: "/users/{id}/x", connectorType: other)
        #expect(recalled.layout == nil && recalled.template == nil && !recalled.isUnauthorizedType)
        #expect(cache.recall(base: base + "/", endpoint: endpoint, connectorType: type).layout == nil)
        #expect(cache.recall(base: "https://caf\u{E9}.test", endpoint: endpoint, connectorType: type).layout == nil)
        _ = cache.validBaseLayout("https://caf\u{E9}.test")
        #expect(cache.recall(base: "https://cafe\u{301}.test", endpoint: endpoint, connectorType: type).layout == nil)
    }

    /// A request built with a cache leaves in it what the next build recalls in one visit: the
    /// base's layout, the template and, for a connector that is not an `AuthorizedConnector`, its
    /// type.
    @Test func buildingARequestFillsWhatTheNextBuildRecalls() throws {
        let cache = RequestBuildCache(capacity: 8)
        let connector = TestConnector(
            baseURL: URL(string: "https://api.example.com/v1")!, endpoint: "/users/{id}",
            parameters: Parameter.path(key: "id", value: "7"))
        let parameters = try RequestBuilder.parameters(of: connector, encoder: JSONEncoder())
        for _ in 0..<2 {
            let request = try RequestBuilder.makeRequest(
                for: connector, parameters: parameters, body: nil, baseURL: nil, cache: cache)
            #expect(request.url?.absoluteString == "https://api.example.com/v1/users/7")
        }
        let recalled = cache.recall(
            base: connector.baseURL.absoluteString, endpoint: connector.endpoint,
            connectorType: ObjectIdentifier(TestConnector.self))
        #expect(recalled.layout != nil)
        #expect(recalled.template != nil)
        #expect(recalled.isUnauthorizedType)
        #expect(cache.count == 1)
    }

    @Test func sharedCacheIsBounded() {
        #expect(RequestBuildCache.shared.capacity == 256)
    }

    @Test func buildingARequestKeepsItsTemplateInTheSharedCache() throws {
        let endpoint = "/cache-probe/\(UInt64.random(in: 0...UInt64.max))/{id}"
        let connector = TestConnector(
            baseURL: URL(string: "https://api.example.com")!, endpoint: endpoint,
            parameters: Parameter.path(key: "id", value: "1"))
        _ = try connector.asURLRequest()
        #expect(RequestBuildCache.shared.contains(endpoint))
    }

    @Test(timeLimit(minutes: 1))
    func concurrentLookupsGiveTheSameTemplatesAsParsing() throws {
        // More endpoints than the capacity, so that threads also evict and re-insert concurrently.
        let cache = RequestBuildCache(capacity: 16)
        let endpoints = (0..<40).map { "/tenants/{tenant}/items/\($0)/{id}?v=\($0 % 3)&q={q}" }
        let expected = try endpoints.map(parsed)
        let mismatches = LockedBox(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<500 {
                let index = (worker * 7 + round) % endpoints.count
                guard let template = try? cache.template(for: endpoints[index]),
                    template.path == expected[index].path, template.query == expected[index].query,
                    template.slots == expected[index].slots
                else {
                    mismatches.withLock { $0 += 1 }
                    continue
                }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(cache.count <= 16)
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension RequestBuildCacheTests {
    /// A cache made with no room, or less, still keeps one template: the one used last.
    @Test(arguments: [0, -3])
    func aCacheWithoutRoomKeepsOneTemplate(capacity: Int) throws {
        let cache = RequestBuildCache(capacity: capacity)
        #expect(cache.capacity == 1)
        _ = try cache.template(for: "/first/{id}")
        _ = try cache.template(for: "/second/{id}")
        #expect(cache.count == 1)
        #expect(cache.contains("/second/{id}"))
    }
}
