import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("AuthorizedConnector")
struct AuthorizedConnectorTests {
    struct AuthorizedTestConnector: Connector, AuthorizedConnector {
        var baseURL: URL = URL(string: "https://h.test")!
        var endpoint: String = "/me"
        var headers: [HTTPHeader] = []
        var authorizationToken: AuthorizationToken?
    }

    @Test(arguments: [
        (AuthorizationToken.bearer(token: "abc.def"), "Bearer abc.def"),
        (.basic(username: "Aladdin", password: "open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        (.custom(token: "Token t-1"), "Token t-1"),
    ])
    func tokenIsSentAsTheAuthorizationHeader(token: AuthorizationToken, value: String) throws {
        let request = try AuthorizedTestConnector(authorizationToken: token).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Authorization") == value)
    }

    class PlainClassConnector: Connector {
        var baseURL: URL { URL(string: "https://h.test")! }
        var endpoint: String { "/me" }
    }

    /// A subclass that conforms where its superclass does not: the type that decides is the
    /// connector's own, not its superclass's.
    final class AuthorizedSubclassConnector: PlainClassConnector, AuthorizedConnector {
        var authorizationToken: AuthorizationToken? { .bearer(token: "sub") }
    }

    /// The builder remembers which connector types do not conform; building one never changes
    /// what another gets, in any order, however often.
    @Test func typesThatDoNotConformNeverHideTheTokenOfTypesThatDo() throws {
        struct Plain: Connector {
            var baseURL: URL = URL(string: "https://h.test")!
            var endpoint: String = "/me"
        }
        let connectors: [Connector] = [
            Plain(), AuthorizedTestConnector(authorizationToken: .bearer(token: "t")), PlainClassConnector(),
            AuthorizedSubclassConnector(),
        ]
        for round in 0..<3 {
            for connector in round == 1 ? connectors.reversed() : connectors {
                let authorization = try connector.asURLRequest().value(forHTTPHeaderField: "Authorization")
                let expected = (connector as? AuthorizedConnector)?.authorizationToken?.header.value
                #expect(authorization == expected, "\(type(of: connector)), round \(round)")
            }
        }
        let subclassRequest = try AuthorizedSubclassConnector().asURLRequest()
        #expect(subclassRequest.value(forHTTPHeaderField: "Authorization") == "Bearer sub")
    }

    /// A subclass held as its base class is passed as the base class's type: what it sends must
    /// still follow its own, after a plain instance of the base class was built, and before.
    @Test func aSubclassHeldAsItsBaseClassSendsItsTokenWhateverWasBuiltBefore() throws {
        let plain: PlainClassConnector = PlainClassConnector()
        let secure: PlainClassConnector = AuthorizedSubclassConnector()
        let connect = Connect()
        for round in 0..<2 {
            #expect(try connect.urlRequest(for: plain).value(forHTTPHeaderField: "Authorization") == nil)
            #expect(
                try connect.urlRequest(for: secure).value(forHTTPHeaderField: "Authorization") == "Bearer sub",
                "round \(round)")
            #expect(try secure.asURLRequest().value(forHTTPHeaderField: "Authorization") == "Bearer sub")
            #expect(RequestBuilder.authorizationToken(of: secure) == .bearer(token: "sub"))
            #expect(RequestBuilder.authorizationToken(of: plain) == nil)
        }
        // A class is cast every time; a struct that does not conform is remembered, and not cast again.
        #expect(!RequestBuildCache.shared.isUnauthorizedType(ObjectIdentifier(PlainClassConnector.self)))
        struct PlainStruct: Connector {
            var baseURL: URL { URL(string: "https://h.test")! }
            var endpoint: String { "/me" }
        }
        _ = try connect.urlRequest(for: PlainStruct())
        #expect(RequestBuildCache.shared.isUnauthorizedType(ObjectIdentifier(PlainStruct.self)))
    }

    /// `as?` looks inside an optional: a `nil` connector of an optional type does not conform,
    /// a wrapped one does. Failing for the first must not hide the second's token.
    @Test func anOptionalConnectorTypeIsCastForEveryValue() throws {
        let none: OptionalAuthorized? = nil
        let some: OptionalAuthorized? = OptionalAuthorized()
        #expect(try none.asURLRequest().value(forHTTPHeaderField: "Authorization") == nil)
        #expect(try some.asURLRequest().value(forHTTPHeaderField: "Authorization") == "Bearer wrapped")
        #expect(try none.asURLRequest().value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func headerTokenIsSentUnderItsOwnName() throws {
        let request = try AuthorizedTestConnector(authorizationToken: .header(name: "X-API-Key", value: "k-1"))
            .asURLRequest()
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "k-1")
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test(arguments: [
        AuthorizationToken.bearer(token: "fresh"), .basic(username: "u", password: "p"), .custom(token: "fresh"),
        .header(name: "Authorization", value: "fresh"),
    ])
    func tokenOverridesTheConnectorsAuthorizationHeader(token: AuthorizationToken) throws {
        let connector = AuthorizedTestConnector(
            headers: [HTTPHeader(name: "authorization", value: "Bearer stale")], authorizationToken: token)
        let request = try connector.asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Authorization") == token.header.value)
        let authorizationFields = request.allHTTPHeaderFields?.filter { $0.key.lowercased() == "authorization" }
        #expect(authorizationFields?.count == 1)
    }

    @Test func headerTokenOverridesAConnectorHeaderOfTheSameNameAndLeavesOthers() throws {
        let connector = AuthorizedTestConnector(
            headers: [HTTPHeader(name: "x-api-key", value: "stale"), .authorization("Bearer kept")],
            authorizationToken: .header(name: "X-API-Key", value: "fresh"))
        let request = try connector.asURLRequest()
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "fresh")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer kept")
    }

    @Test func noTokenKeepsTheConnectorsOwnAuthorization() throws {
        let connector = AuthorizedTestConnector(headers: [.authorization("Bearer own")], authorizationToken: nil)
        #expect(try connector.asURLRequest().value(forHTTPHeaderField: "Authorization") == "Bearer own")
    }

    @Test func noTokenSendsNoAuthorization() throws {
        let request = try AuthorizedTestConnector(authorizationToken: nil).asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func tokenOverridesADefaultAuthorizationHeaderAndIsSent() async throws {
        let transport = RecordingTransport()
        let connect = makeConfiguredConnect(transport: transport) { configuration in
            configuration.defaultHeaders = [.authorization("Bearer default"), .userAgent("tests")]
        }
        _ = try await connect.request(AuthorizedTestConnector(authorizationToken: .bearer(token: "mine"))).value
        let sent = try #require(transport.requests.first)
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer mine")
        #expect(sent.value(forHTTPHeaderField: "User-Agent") == "tests")
    }

    @Test(arguments: [
        (AuthorizationToken.bearer(token: "t\r\nX-Injected: 1"), "Authorization"),
        (.custom(token: "t\n"), "Authorization"),
        (.header(name: "X-API-Key", value: "k\u{0}"), "X-API-Key"),
        (.header(name: "X API Key", value: "k"), "X API Key"),
    ])
    func tokenThatWouldBreakTheHeaderFailsBeforeSending(token: AuthorizationToken, invalidHeader: String) async {
        let connector = AuthorizedTestConnector(authorizationToken: token)
        #expect(rejectionReason(building: connector) == .invalidHeader(name: invalidHeader))
        await expectRejectedBeforeSending(connector, with: .invalidHeader(name: invalidHeader))
    }

    /// A token with nothing in it (a key not loaded yet) would go out as `Authorization: Bearer`,
    /// a request the server can only refuse: the build fails instead, and nothing is sent.
    @Test(arguments: [
        AuthorizationToken.bearer(token: ""), .bearer(token: "  "), .custom(token: ""),
        .header(name: "X-API-Key", value: " \t"), .basic(username: "", password: ""),
    ])
    func anEmptyTokenFailsBeforeSending(token: AuthorizationToken) async {
        let connector = AuthorizedTestConnector(authorizationToken: token)
        #expect(rejectionReason(building: connector) == .emptyToken)
        await expectRejectedBeforeSending(connector, with: .emptyToken)
    }

    /// RFC 6750's token has no space: a token given with its own scheme would go out as
    /// `Authorization: Bearer Bearer abc`, which the server refuses as a wrong token (and a token
    /// authenticator would take for an expired one). Spaces around it are trimmed, as a header's.
    @Test(arguments: ["Bearer abc", "abc def", "abc\tdef", " Bearer abc "])
    func aBearerTokenWithASpaceInsideFailsBeforeSending(token: String) async throws {
        let connector = AuthorizedTestConnector(authorizationToken: .bearer(token: token))
        #expect(rejectionReason(building: connector) == .invalidBearerToken)
        await expectRejectedBeforeSending(connector, with: .invalidBearerToken)
        #expect(
            ConnectError.invalidRequest(.invalidBearerToken).localizedDescription.contains("without 'Bearer '"))
    }

    @Test(arguments: [" abc.def-_~+/== ", "eyJhbGciOiJIUzI1NiJ9.e30.ZRrH"])
    func aBearerTokenIsSentTrimmed(token: String) throws {
        let request = try AuthorizedTestConnector(authorizationToken: .bearer(token: token)).asURLRequest()
        let expected = token.trimmingCharacters(in: .whitespaces)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer \(expected)")
        #expect(AuthorizationToken.bearer(token: token).header.value == "Bearer \(expected)")
    }

    /// Either half of Basic credentials may be empty: an API key goes as the username with no
    /// password (Stripe's), or as the password with no username.
    @Test(arguments: [("sk_test_1", ""), ("", "key-2")])
    func basicCredentialsWithOneHalfEmptyAreSent(username: String, password: String) throws {
        let connector = AuthorizedTestConnector(authorizationToken: .basic(username: username, password: password))
        let request = try connector.asURLRequest()
        let encoded = Data("\(username):\(password)".utf8).base64EncodedString()
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic \(encoded)")
    }

    /// RFC 7617: a user-id cannot hold a colon; `base64("a:b:c")` reads as user `a`, password
    /// `b:c`. A password with colons is fine.
    @Test func basicUsernameWithAColonFailsBeforeSending() async throws {
        let connector = AuthorizedTestConnector(authorizationToken: .basic(username: "ad:min", password: "pw"))
        #expect(rejectionReason(building: connector) == .invalidBasicUsername)
        await expectRejectedBeforeSending(connector, with: .invalidBasicUsername)
        let request = try AuthorizedTestConnector(authorizationToken: .basic(username: "admin", password: "p:w"))
            .asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YWRtaW46cDp3")
    }

    @Test func basicTokenWithLineBreaksIsStillSafeBecauseItIsBase64() throws {
        let request = try AuthorizedTestConnector(authorizationToken: .basic(username: "u\r\n", password: "p"))
            .asURLRequest()
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic dQ0KOnA=")
    }
}

/// A connector type whose optional is a connector too, as a user could write. Public: the
/// optional's conformance to the public `Connector` needs public witnesses.
public struct OptionalAuthorized: AuthorizedConnector {
    /// Always a bearer token, `wrapped`.
    public var authorizationToken: AuthorizationToken? { .bearer(token: "wrapped") }
}

extension Optional: Connector where Wrapped == OptionalAuthorized {
    /// A test host.
    public var baseURL: URL { URL(string: "https://h.test")! }
    /// The same path for `nil` and a wrapped value.
    public var endpoint: String { "/me" }
}
