import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Credential headers in a session configuration's `httpAdditionalHeaders` become headers of each
/// built request, so that a redirect to another origin can remove them (URLSession would add them to
/// every hop).
@Suite("Session credential headers")
struct SessionCredentialHeadersTests {
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

    @Test func theTransportTakesCredentialsOutOfItsSessionAndLeavesTheRestAndTheCallersConfiguration() throws {
        let configuration = Self.configuration()
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        let transport = try #require(Connect(configuration: settings).transport as? URLSessionTransport)
        #expect(
            transport.sessionCredentialHeaders == [
                HTTPHeader(name: "Authorization", value: "Bearer from-session"),
                HTTPHeader(name: "X-API-Key", value: "k"), HTTPHeader(name: "cookie", value: "session=1"),
            ])
        #expect(Self.names(transport.session.configuration.httpAdditionalHeaders) == ["Accept-Language", "X-Trace"])
        #expect(Self.names(configuration.httpAdditionalHeaders).count == 5, "the caller's configuration is not changed")
    }

    @Test func aSessionWithoutCredentialHeadersKeepsItsHeaders() throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Trace": "kept"]
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = configuration
        let transport = try #require(Connect(configuration: settings).transport as? URLSessionTransport)
        #expect(transport.sessionCredentialHeaders.isEmpty)
        #expect(Self.names(transport.session.configuration.httpAdditionalHeaders) == ["X-Trace"])
    }

    /// A transport made by hand, used alone or wrapped in a transport of one's own, is a plain
    /// URLSession: its session keeps every header, as nothing would add them back.
    @Test func aTransportMadeByHandKeepsEveryHeaderInItsSession() {
        let transport = URLSessionTransport(configuration: Self.configuration())
        #expect(transport.sessionCredentialHeaders.isEmpty)
        #expect(Self.names(transport.session.configuration.httpAdditionalHeaders).count == 5)
    }

    @Test func builtRequestsCarryTheSessionsCredentialsBelowEveryOtherHeader() throws {
        var settings = ConnectConfiguration()
        settings.sessionConfiguration = Self.configuration()
        let connect = Connect(configuration: settings)
        let request = try connect.urlRequest(for: Call())
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer from-session")
        #expect(request.value(forHTTPHeaderField: "Cookie") == "session=1")
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "k")
        #expect(request.value(forHTTPHeaderField: "X-Trace") == nil, "URLSession adds the others itself")

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
}
