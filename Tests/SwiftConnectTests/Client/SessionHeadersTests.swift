import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The headers in a session configuration's `httpAdditionalHeaders` become headers of each built
/// request, so that the build checks them and a redirect to another origin can remove the
/// credentials among them (URLSession would add them to every hop, unchecked).
@Suite("Session configuration headers")
struct SessionHeadersTests {
    struct Call: Connector {
        var baseURL = URL(string: "https://api.test")!
        var endpoint = "/items"
        var headers: [HTTPHeader] = []
    }

    static func configuration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = [
            "Authorization": "Bearer from-session", "cookie": "session=1", "X-API-Key": "k",
            "X-Trace": "kept", "Accept-Language": "fr",
        ]
        return configuration
    }

    static func names(_ headers: [AnyHashable: Any]?) -> [String] {
        (headers ?? [:]).keys.compactMap { $0.base as? String }.sorted()
    }

    @Test func theTransportTakesEveryHeaderOutOfItsSessionAndLeavesTheCallersConfiguration() throws {
        let configuration = Self.configuration()
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        let transport = try #require(Connect(configuration: settings).transport as? URLSessionTransport)
        #expect(
            transport.sessionHeaders == [
                HTTPHeader(name: "Accept-Language", value: "fr"),
                HTTPHeader(name: "Authorization", value: "Bearer from-session"),
                HTTPHeader(name: "X-API-Key", value: "k"), HTTPHeader(name: "X-Trace", value: "kept"),
                HTTPHeader(name: "cookie", value: "session=1"),
            ])
        #expect(Self.names(transport.session.configuration.httpAdditionalHeaders).isEmpty)
        #expect(Self.names(configuration.httpAdditionalHeaders).count == 5, "the caller's configuration is not changed")
    }

    /// A transport made by hand, used alone or wrapped in a transport of one's own, is a plain
    /// URLSession: its session keeps every header, as nothing would add them back.
    @Test func aTransportMadeByHandKeepsEveryHeaderInItsSession() {
        let transport = URLSessionTransport(configuration: Self.configuration())
        #expect(transport.sessionHeaders.isEmpty)
        #expect(Self.names(transport.session.configuration.httpAdditionalHeaders).count == 5)
    }

    @Test func builtRequestsCarryTheSessionsHeadersBelowEveryOtherHeader() throws {
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = Self.configuration()
        let connect = Connect(configuration: settings)
        let request = try connect.urlRequest(for: Call())
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer from-session")
        #expect(request.value(forHTTPHeaderField: "Cookie") == "session=1")
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "k")
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "kept")
        #expect(request.value(forHTTPHeaderField: "Accept-Language") == "fr")

        settings.defaultHeaders = [.authorization(bearerToken: "default")]
        let withDefault = Connect(configuration: settings)
        #expect(try withDefault.urlRequest(for: Call()).value(forHTTPHeaderField: "Authorization") == "Bearer default")
        let own = Call(headers: [.authorization(bearerToken: "connector")])
        #expect(try withDefault.urlRequest(for: own).value(forHTTPHeaderField: "Authorization") == "Bearer connector")
    }

    @Test func uploadsCarryThemToo() throws {
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = Self.configuration()
        let connect = Connect(configuration: settings)
        struct Post: Connector {
            let baseURL = URL(string: "https://api.test")!
            let endpoint = "/upload"
            let method = HTTPMethod.post
        }
        let (request, _) = try connect.uploadRequest(files: [], to: Post())
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer from-session")
    }

    @Test func aCredentialFromTheSessionWithALineBreakIsAnInvalidHeader() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["Authorization": "Bearer a\r\nX-Injected: 1"]
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        do {
            _ = try Connect(configuration: settings).urlRequest(for: Call())
            Issue.record("expected an invalid header")
        } catch ConnectError.invalidRequest(let reason) {
            #expect(reason == .invalidHeader(name: "Authorization"))
        } catch {
            Issue.record("expected invalidRequest, got \(error)")
        }
    }

    /// A name or value that is not a string has no one text to send (FoundationNetworking traps on
    /// one): the request fails with `invalidHeader`, rather than send `2 bytes` or `<null>`. An
    /// `NSString` is a string.
    @Test(arguments: ["X-Data", "X-Null", "X-Number", "X-List"])
    func aSessionHeaderThatIsNotAStringFailsTheRequest(name: String) throws {
        let values: [String: Any] = [
            "X-Data": Data([1, 2]), "X-Null": NSNull(), "X-Number": 2, "X-List": ["a", "b"],
        ]
        let value = values[name] as Any
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = [name: value, "X-Text": NSString(string: "text")]
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        #expect(throws: ConnectError.invalidRequest(.invalidHeader(name: name))) {
            try Connect(configuration: settings).urlRequest(for: Call())
        }
        configuration.httpAdditionalHeaders = [1: "v", "X-Text": NSString(string: "text")]
        settings.sessionConfiguration = configuration
        #expect(throws: ConnectError.invalidRequest(.invalidHeader(name: "1"))) {
            try Connect(configuration: settings).urlRequest(for: Call())
        }
        configuration.httpAdditionalHeaders = ["X-Text": NSString(string: "text")]
        settings.sessionConfiguration = configuration
        #expect(
            try Connect(configuration: settings).urlRequest(for: Call()).value(forHTTPHeaderField: "X-Text") == "text")
    }

    /// URLSession would send these as they are: a line break adds a header of its own, and a
    /// `Content-Length` cuts the body short and leaves the rest on the connection for the next
    /// request to trip over. Neither is sent.
    @Test(arguments: [
        ("X-Other", "o\r\nX-Injected: 2", InvalidRequestReason.invalidHeader(name: "X-Other")),
        ("X-Nul", "a\u{0}b", .invalidHeader(name: "X-Nul")),
        ("X A", "v", .invalidHeader(name: "X A")),
        ("Content-Length", "1", .reservedHeader(name: "Content-Length")),
        ("Transfer-Encoding", "chunked", .reservedHeader(name: "Transfer-Encoding")),
    ])
    func anInvalidOrFramingHeaderFromTheSessionFailsTheRequestAndNothingIsSent(
        name: String, value: String, reason: InvalidRequestReason
    ) async {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = [name: value]
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        let connect = Connect(configuration: settings)
        let transport = connect.transport as? URLSessionTransport
        #expect(transport?.session.configuration.httpAdditionalHeaders?.isEmpty ?? true)
        // 127.0.0.1:9 (discard): a request that went out would fail as a transport error instead.
        let call = Call(baseURL: URL(string: "http://127.0.0.1:9")!)
        let result = await connect.request(call).asyncResult
        guard case .failure(ConnectError.invalidRequest(let got)) = result else {
            Issue.record("expected invalidRequest, got \(result)")
            return
        }
        #expect(got == reason)
    }
}
