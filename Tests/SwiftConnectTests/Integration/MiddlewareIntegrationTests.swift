import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Middleware, redirect policies and retries against a real HTTP server (httpbin), checked from
/// its side of the wire.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct MiddlewareIntegrationTests {
    struct Call: Connector, AuthorizedConnector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .get
        var headers: [HTTPHeader] = []
        var parameters: ParametersRepresentable? = nil
        var authorizationToken: AuthorizationToken? = nil
        var redirectPolicy: RedirectPolicy? = nil
        var acceptableStatusCodes: Range<Int> = 200..<300
    }

    struct Headers: Decodable, Sendable {
        let headers: [String: String]

        func value(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Adds a bearer token, an API key and a harmless marker to every request, counting its runs.
    struct CredentialAdapter: RequestAdapter {
        let runs = PipelineFixtures.Counter()

        func adapt(_ request: URLRequest) async throws -> URLRequest {
            var request = request
            request.setValue("Bearer adapter-token", forHTTPHeaderField: "Authorization")
            request.setValue("adapter-key", forHTTPHeaderField: "X-Adapter-Api-Key")
            request.setValue("\(runs.increment())", forHTTPHeaderField: "X-Adapted")
            return request
        }
    }

    private func connect(
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        configure: (inout ConnectConfiguration) -> Void = { _ in }
    ) -> Connect {
        HTTPBin.connect(middleware: middleware, configure: configure)
    }

    /// `/redirect-to?url=<target>` on httpbin.
    private func redirect(to target: String, status: Int? = nil, method: HTTPMethod = .get) -> Call {
        var query: [ParametersRepresentable] = [Parameter.query(key: "url", value: target)]
        if let status { query.append(Parameter.query(key: "status_code", value: "\(status)")) }
        return Call(endpoint: "/redirect-to", method: method, parameters: CompositeParameters(query))
    }

    private var otherOriginHeaders: String {
        HTTPBin.otherOriginURL.appendingPathComponent("headers").absoluteString
    }

    // MARK: Credentials on redirects

    @Test func crossOriginRedirectDropsTheAuthorizedConnectorsAPIKey() async throws {
        var call = redirect(to: otherOriginHeaders)
        call.authorizationToken = .header(name: "X-API-Key", value: "key-123")
        call.headers = [HTTPHeader(name: "X-Trace", value: "kept")]
        let received = try await connect().request(call).decoded(toType: Headers.self).value
        #expect(received.value("Host")?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.value("X-API-Key") == nil)
        #expect(received.value("Authorization") == nil)
        #expect(received.value("X-Trace") == "kept")
    }

    @Test func sameOriginRedirectKeepsTheAuthorizedConnectorsAPIKey() async throws {
        var call = redirect(to: "/headers")
        call.authorizationToken = .header(name: "X-API-Key", value: "key-123")
        let received = try await connect().request(call).decoded(toType: Headers.self).value
        #expect(received.value("X-API-Key") == "key-123")
    }

    @Test func crossOriginRedirectDropsCredentialsAnAdapterAdded() async throws {
        let adapter = CredentialAdapter()
        let received = try await connect(middleware: ConnectMiddleware(adapters: [adapter]))
            .request(redirect(to: otherOriginHeaders)).decoded(toType: Headers.self).value
        #expect(received.value("Host")?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.value("Authorization") == nil)
        #expect(received.value("X-Adapter-Api-Key") == nil)
        #expect(received.value("X-Adapted") == "1")
        #expect(adapter.runs.value == 1)
    }

    @Test func sameOriginRedirectKeepsCredentialsAnAdapterAdded() async throws {
        let received = try await connect(middleware: ConnectMiddleware(adapters: [CredentialAdapter()]))
            .request(redirect(to: "/headers")).decoded(toType: Headers.self).value
        #expect(received.value("Authorization") == "Bearer adapter-token")
        #expect(received.value("X-Adapter-Api-Key") == "adapter-key")
    }

    /// A token header whose name says nothing (`X-Auth-Key` under `.header(name:value:)`, a
    /// `TokenAuthenticator`'s `X-Access`) is a credential all the same: it never reaches another
    /// origin — on a redirect or a retrier's `.redirect(to:)` — and debug output redacts it. The same
    /// origin still gets it. With no middleware (`DirectExchange`) and through the pipeline.
    @Test(arguments: [false, true])
    func crossOriginRedirectDropsATokenHeaderWhateverItsName(throughThePipeline: Bool) async throws {
        let logger = CapturingLogger()
        let middleware = ConnectMiddleware(adapters: throughThePipeline ? [ClosureAdapter { $0 }] : [])
        let connect = connect(middleware: middleware) { $0.logger = logger }
        var away = redirect(to: otherOriginHeaders)
        away.authorizationToken = .header(name: "X-Auth-Key", value: "cred-123")
        let received = try await connect.request(away, debugResponse: true).decoded(toType: Headers.self).value
        #expect(received.value("Host")?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(received.value("X-Auth-Key") == nil)
        #expect(!logger.messages.isEmpty)
        #expect(!logger.messages.joined().contains("cred-123"))

        var home = redirect(to: "/headers")
        home.authorizationToken = .header(name: "X-Auth-Key", value: "cred-123")
        let kept = try await connect.request(home).decoded(toType: Headers.self).value
        #expect(kept.value("X-Auth-Key") == "cred-123")
    }

    @Test func tokenAuthenticatorsOwnHeaderNeverReachesAnotherOrigin() async throws {
        struct Unused: TokenRefresher {
            func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken { AccessToken("unused") }
        }
        let logger = CapturingLogger()
        let authenticator = TokenAuthenticator(
            token: AccessToken("access-123"), refresher: Unused(),
            header: { HTTPHeader(name: "X-Access", value: $0.value) })
        let retrier = ClosureRetrier { attempt in
            attempt.number == 1 && attempt.statusCode == 503
                ? .redirect(to: HTTPBin.otherOriginURL.appendingPathComponent("headers")) : .doNotRetry
        }
        let connect = connect(middleware: ConnectMiddleware([authenticator, ConnectMiddleware(retriers: [retrier])])) {
            $0.logger = logger
        }
        let redirected = try await connect.request(redirect(to: otherOriginHeaders), debugResponse: true)
            .decoded(toType: Headers.self).value
        #expect(redirected.value("Host")?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(redirected.value("X-Access") == nil)
        let retried = try await connect.request(Call(endpoint: "/status/503"), debugResponse: true)
            .decoded(toType: Headers.self).value
        #expect(retried.value("Host")?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
        #expect(retried.value("X-Access") == nil)
        #expect(logger.messages.contains { $0.contains("X-Access: <redacted>") })
        #expect(!logger.messages.joined().contains("access-123"))

        let home = try await connect.request(redirect(to: "/headers")).decoded(toType: Headers.self).value
        #expect(home.value("X-Access") == "access-123")
    }

    @Test func decidePolicySeesTheCrossOriginProposalWithoutCredentials() async throws {
        let proposals = PipelineFixtures.Recorder<URLRequest>()
        let connect = connect(middleware: ConnectMiddleware(adapters: [CredentialAdapter()])) { configuration in
            configuration.redirectPolicy = .decide { redirect in
                proposals.append(redirect.proposedRequest)
                return .follow
            }
        }
        let received = try await connect.request(redirect(to: otherOriginHeaders)).decoded(toType: Headers.self).value
        let proposed = try #require(proposals.values.first)
        #expect(proposals.values.count == 1)
        #expect(proposed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(proposed.value(forHTTPHeaderField: "X-Adapter-Api-Key") == nil)
        #expect(received.value("Authorization") == nil)
    }

    // MARK: Redirect policies

    @Test func followWithMaximumHopsEndsALongerChainWithTooManyRedirects() async throws {
        var tooLong = Call(endpoint: "/redirect/3")
        tooLong.redirectPolicy = .follow(maximumHops: 2)
        let result = await connect().request(tooLong).asyncResult
        guard case .tooManyRedirects(let last)? = result.failureValue as? ConnectError else {
            Issue.record("expected tooManyRedirects, got \(result)")
            return
        }
        #expect(last.statusCode == 302)

        var shortEnough = Call(endpoint: "/redirect/2")
        shortEnough.redirectPolicy = .follow(maximumHops: 2)
        let response = try await connect().response(shortEnough).value
        #expect(response.url?.path == "/get")
    }

    @Test func doNotFollowHandsBackTheRedirect() async throws {
        let connect = connect { $0.redirectPolicy = .doNotFollow }
        let result = await connect.request(Call(endpoint: "/redirect/1")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        #expect(error.statusCode == 302)
        #expect(error.response?.headers["Location"]?.hasSuffix("/get") == true)

        var accepting = Call(endpoint: "/redirect/1")
        accepting.acceptableStatusCodes = 200..<400
        let response = try await connect.response(accepting).value
        #expect(response.statusCode == 302)
    }

    /// A 3xx without a `Location` cannot be followed, so it is the response: status and headers
    /// (FoundationNetworking never reports it to the delegate as received, and drops its body).
    /// httpbin's `/status/308` answers one. Checked with no middleware (`DirectExchange`) and
    /// through the pipeline (an adapter), whatever the policy.
    @Test(arguments: [false, true])
    func redirectStatusWithoutALocationIsTheResponse(throughThePipeline: Bool) async throws {
        let middleware = ConnectMiddleware(adapters: throughThePipeline ? [ClosureAdapter { $0 }] : [])
        var accepting = Call(endpoint: "/status/308")
        accepting.acceptableStatusCodes = 200..<400
        for policy in [RedirectPolicy.doNotFollow, .follow] {
            let response = try await connect(middleware: middleware) { $0.redirectPolicy = policy }
                .response(accepting).value
            #expect(response.statusCode == 308)
            #expect(response.headers["Server"] == "gunicorn")
        }
        let result = await connect(middleware: middleware).request(Call(endpoint: "/status/308")).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        #expect(error.statusCode == 308)
    }

    @Test func connectorPolicyOverridesTheConfigurationsAgainstARealServer() async throws {
        var call = Call(endpoint: "/redirect/2")
        call.redirectPolicy = .follow
        let response = try await connect { $0.redirectPolicy = .doNotFollow }.response(call).value
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
    }

    // MARK: Retrier redirect and retries

    @Test func retrierRedirectResendsThePostToAnotherOriginWithoutTheConnectorsCredentials() async throws {
        struct Echoed: Decodable, Sendable {
            let method: String
            let json: [String: String]?
            let headers: [String: String]
        }
        let target = HTTPBin.otherOriginURL.appendingPathComponent("anything/mirror")
        let retrier = ClosureRetrier { attempt in
            attempt.number == 1 && attempt.statusCode == 503 ? .redirect(to: target) : .doNotRetry
        }
        let stamps = PipelineFixtures.Counter()
        let stamping = ClosureAdapter { request in
            var request = request
            request.setValue("\(stamps.increment())", forHTTPHeaderField: "X-Attempt")
            return request
        }
        let call = Call(
            endpoint: "/status/503", method: .post, parameters: Parameter.jsonObject(value: ["name": "kept"]),
            authorizationToken: .bearer(token: "connector-token"))
        let echo = try await connect(middleware: ConnectMiddleware(adapters: [stamping], retriers: [retrier]))
            .request(call).decoded(toType: Echoed.self).value
        #expect(echo.method == "POST")
        #expect(echo.json == ["name": "kept"])
        #expect(echo.headers["Authorization"] == nil)
        #expect(echo.headers["X-Attempt"] == "2")
        #expect(echo.headers["Host"]?.hasPrefix(HTTPBin.otherOriginURL.host!) == true)
    }

    @Test func retryPolicyResendsA503UpToTheMaximumAttempts() async throws {
        let delays = PipelineFixtures.Recorder<TimeInterval>()
        let runs = PipelineFixtures.Counter()
        let counting = ClosureAdapter { request in
            runs.increment()
            return request
        }
        let policy = RetryPolicy(maximumAttempts: 3, baseDelay: 0.5, multiplier: 2, jitter: 0)
        let connect = connect(middleware: ConnectMiddleware(adapters: [counting], retriers: [policy])) {
            $0.sleep = { delays.append($0) }
        }
        let result = await connect.request(Call(endpoint: "/status/503")).asyncResult
        #expect((result.failureValue as? ConnectError)?.statusCode == 503)
        #expect(runs.value == 3)
        #expect(delays.values == [0.5, 1])
    }

    /// A connection that closes in the middle of the body (a `Content-Length` not reached, a
    /// chunked body without its last chunk: the test server's `/cut`) is a lost connection, as
    /// Apple's URLSession calls it — FoundationNetworking says `.unknown` — and the policy retries
    /// it. libcurl's own words stay the error's description.
    @Test(arguments: [false, true])
    func retryPolicyRetriesAConnectionLostInTheMiddleOfTheBody(chunked: Bool) async throws {
        let runs = PipelineFixtures.Counter()
        let counting = ClosureAdapter { request in
            runs.increment()
            return request
        }
        let policy = RetryPolicy(maximumAttempts: 2, baseDelay: 0, jitter: 0)
        let connect = connect(middleware: ConnectMiddleware(adapters: [counting], retriers: [policy])) {
            $0.sleep = { _ in }
        }
        let call = Call(endpoint: "/cut", parameters: chunked ? Parameter.query(key: "chunked", value: "1") : nil)
        let result = await connect.request(call).asyncResult
        let error = try #require(result.failureValue as? ConnectError)
        guard case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(error)")
            return
        }
        #expect((underlying as? URLError)?.code == .networkConnectionLost)
        #expect(runs.value == 2)
        #if canImport(FoundationNetworking)
            // libcurl 7 says "transfer closed with …", libcurl 8 "end of response with …".
            let text = error.localizedDescription
            #expect(text.contains("transfer closed with") || text.contains("end of response with"), "\(text)")
        #endif
    }

    @Test func tokenAuthenticatorFetchesATokenAndTheServerAcceptsIt() async throws {
        struct Bearer: Decodable, Sendable {
            let authenticated: Bool
            let token: String
        }
        let authenticator = TokenAuthenticator(token: nil) { _ in AccessToken("fetched-token") }
        let bearer = try await connect(middleware: authenticator).request(Call(endpoint: "/bearer"))
            .decoded(toType: Bearer.self).value
        #expect(bearer.authenticated)
        #expect(bearer.token == "fetched-token")
    }

    @Test func tokenAuthenticatorIsSkippedForAConnectorWithoutMiddleware() async throws {
        struct Login: Connector {
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/bearer" }
            var middleware: ConnectorMiddleware { .none }
        }
        let refreshed = PipelineFixtures.Counter()
        let authenticator = TokenAuthenticator(token: AccessToken("t")) { _ in
            refreshed.increment()
            return AccessToken("t2")
        }
        let result = await connect(middleware: authenticator).request(Login()).asyncResult
        #expect((result.failureValue as? ConnectError)?.statusCode == 401)
        #expect(refreshed.value == 0)
    }
}
