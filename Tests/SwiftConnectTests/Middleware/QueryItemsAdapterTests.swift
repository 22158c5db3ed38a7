import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// `QueryItemsAdapter` appends query items to every request, encoded as query parameters are.
@Suite("QueryItemsAdapter")
struct QueryItemsAdapterTests {
    struct Search: Connector {
        var endpoint = "/search"
        var query: [Parameter] = [.query(key: "q", value: "1+1=2 & co")]
        var baseURL: URL { URL(string: "https://api.test/v1")! }
        var parameters: ParametersRepresentable? { CompositeParameters(query) }
    }

    func sent(
        _ connector: some Connector, through adapter: QueryItemsAdapter,
        retriers: [any RequestRetrier] = [],
        reply: @escaping @Sendable (URLRequest) async throws -> StubTransport.Reply = { _ in Fixtures.json("{}") }
    ) async -> (urls: [String], result: Result<Data, any Error>) {
        let transport = RecordingTransport(reply)
        let connect = Fixtures.connect(
            transport: transport, middleware: ConnectMiddleware(adapters: [adapter], retriers: retriers)
        ) { _ in }
        let result = await connect.request(connector).asyncResult
        return (transport.requests.map { $0.url?.absoluteString ?? "" }, result)
    }

    @Test func itemsFollowTheQueryEncodedAsQueryParametersAre() async {
        let adapter = QueryItemsAdapter([
            URLQueryItem(name: "api_key", value: "k+1 &=/?#é"),
            URLQueryItem(name: "flag", value: nil),
            URLQueryItem(name: "a b", value: ""),
        ])
        let (urls, _) = await sent(Search(), through: adapter)
        #expect(
            urls == [
                "https://api.test/v1/search?q=1%2B1%3D2%20%26%20co&api_key=k%2B1%20%26%3D%2F%3F%23%C3%A9&flag&a%20b="
            ])
    }

    @Test func aURLWithoutAQueryGetsOneAndTheFragmentStaysLast() async throws {
        let adapter = QueryItemsAdapter([URLQueryItem(name: "api_key", value: "k")])
        let (plain, _) = await sent(Search(query: []), through: adapter)
        #expect(plain == ["https://api.test/v1/search?api_key=k"])
        // A connector's endpoint has no fragment; an adapter before this one may have set one.
        let withFragment = try QueryItemsAdapter.appending(
            [URLQueryItem(name: "api_key", value: "k")], to: try #require(URL(string: "https://api.test/p#top")))
        #expect(withFragment.absoluteString == "https://api.test/p?api_key=k#top")
        let (afterAmpersand, _) = await sent(Search(endpoint: "/search?x=1&", query: []), through: adapter)
        #expect(afterAmpersand == ["https://api.test/v1/search?x=1&api_key=k"])
    }

    @Test func theQueryAlreadyThereIsKeptByteForByte() throws {
        // Escapes of the query already there are not decoded and written again (`%2B` stays, `+`
        // stays a `+`), as `URLComponents.queryItems` would.
        let url = try #require(URL(string: "https://api.test/p?a=%2B+b&c=%7e"))
        let appended = try QueryItemsAdapter.appending([URLQueryItem(name: "k", value: "v")], to: url)
        #expect(appended.absoluteString == "https://api.test/p?a=%2B+b&c=%7e&k=v")
        let nothing = try QueryItemsAdapter.appending([URLQueryItem(name: "", value: nil)], to: url)
        #expect(nothing == url)
    }

    @Test func userInfoIPv6HostsAndEncodedFragmentsAreKept() throws {
        let item = [URLQueryItem(name: "k", value: "v")]
        let cases = [
            ("https://u:p%40x@h.test/p?x=1#f", "https://u:p%40x@h.test/p?x=1&k=v#f"),
            ("http://[::1]:8080/p", "http://[::1]:8080/p?k=v"),
            ("https://h.test/p?&#a%23b?c", "https://h.test/p?&k=v#a%23b?c"),
            ("https://h.test", "https://h.test?k=v"),
        ]
        for (given, expected) in cases {
            let url = try #require(URL(string: given))
            #expect(try QueryItemsAdapter.appending(item, to: url).absoluteString == expected)
        }
    }

    @Test func itemsAreAskedForEachRequestAndARetryCarriesThemOnce() async {
        let calls = Fixtures.Counter()
        let adapter = QueryItemsAdapter { request in
            let number = calls.increment()
            return [URLQueryItem(name: "sig", value: "\(request.url?.path ?? "")#\(number)")]
        }
        let retryOnce = ClosureRetrier { attempt in attempt.number == 1 ? .retry : .doNotRetry }
        let (urls, _) = await sent(Search(query: []), through: adapter, retriers: [retryOnce]) { request in
            Fixtures.json("{}", status: request.url?.query?.hasSuffix("%231") == true ? 503 : 200)
        }
        #expect(
            urls == [
                "https://api.test/v1/search?sig=%2Fv1%2Fsearch%231",
                "https://api.test/v1/search?sig=%2Fv1%2Fsearch%232",
            ])
    }

    @Test func aThrowingClosureFailsTheRequestAndNothingIsSent() async {
        let adapter = QueryItemsAdapter { _ in throw Fixtures.TestError(code: "no key") }
        let (urls, result) = await sent(Search(), through: adapter)
        #expect(urls.isEmpty)
        #expect(Fixtures.error(of: result) as? Fixtures.TestError == Fixtures.TestError(code: "no key"))
    }

    @Test func aCredentialItemStaysWithTheFirstOrigin() async {
        // A retrier's redirect to another origin: the adapter runs again, but its `api_key` is
        // taken off there; the connector's own query goes along.
        let adapter = QueryItemsAdapter([
            URLQueryItem(name: "api_key", value: "k"), URLQueryItem(name: "v", value: "2"),
        ])
        let mirror = ClosureRetrier { attempt in
            attempt.number == 1 ? .redirect(to: URL(string: "https://mirror.test/v1/search?q=x")!) : .doNotRetry
        }
        let (urls, _) = await sent(Search(query: []), through: adapter, retriers: [mirror]) { request in
            Fixtures.json("{}", status: request.url?.host == "mirror.test" ? 200 : 503)
        }
        #expect(urls == ["https://api.test/v1/search?api_key=k&v=2", "https://mirror.test/v1/search?q=x&v=2"])
    }
}

/// Against httpbin: the server reads back exactly the names and values given, where
/// `URLComponents.queryItems` would have sent a `+` that the server reads as a space.
@Suite("QueryItemsAdapter: over the wire", .enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason))
struct QueryItemsAdapterIntegrationTests {
    struct Anything: Connector {
        var baseURL: URL { HTTPBin.baseURL }
        var endpoint: String { "/anything" }
        var parameters: ParametersRepresentable? { Parameter.query(key: "q", value: "1+1=2 & co") }
    }

    @Test func theServerReadsTheItemsAsGiven() async throws {
        let adapter = QueryItemsAdapter([URLQueryItem(name: "api_key", value: "k+1 &=/?#é")])
        let connect = HTTPBin.connect(middleware: ConnectMiddleware(adapters: [adapter]))
        let echo = try await connect.request(Anything()).decoded(toType: Echo.self).value
        #expect(echo.args == ["q": .one("1+1=2 & co"), "api_key": .one("k+1 &=/?#é")])
    }
}
