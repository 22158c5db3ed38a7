import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// A refresher that counts its calls, records the token it was asked to replace, and answers with
/// `body`.
private final class CountingRefresher: TokenRefresher, @unchecked Sendable {
    // @unchecked Sendable: `replaced` is a thread-safe recorder, `body` a Sendable closure.
    let calls = Fixtures.Counter()
    let replaced = Fixtures.Recorder<AccessToken?>()
    private let body: @Sendable (Int) async throws -> AccessToken

    /// `body` receives the call number, from 1.
    init(_ body: @escaping @Sendable (Int) async throws -> AccessToken) {
        self.body = body
    }

    func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken {
        replaced.append(expired)
        return try await body(calls.increment())
    }
}

/// A refresher that tests hold open: each call opens `started`, then waits for `mayFinish` before
/// answering with `answer`.
private final class HeldRefresher: TokenRefresher, @unchecked Sendable {
    // @unchecked Sendable: its gates and counter are thread-safe, `answer` a Sendable closure.
    let calls = Fixtures.Counter()
    let started = Fixtures.Gate()
    let mayFinish = Fixtures.Gate()
    private let answer: @Sendable () throws -> AccessToken

    init(_ answer: @escaping @Sendable () throws -> AccessToken) {
        self.answer = answer
    }

    func refreshToken(replacing expired: AccessToken?) async throws -> AccessToken {
        calls.increment()
        started.open()
        try await mayFinish.wait()
        return try answer()
    }
}

private struct RefreshFailed: Error, Equatable {}

/// A clock tests move by hand.
private final class Clock: @unchecked Sendable {
    // @unchecked Sendable: `date` is only touched under `lock`.
    private let lock = NSLock()
    private var date: Date

    init(_ date: Date) { self.date = date }

    var now: Date { lock.withLock { date } }

    func advance(by seconds: TimeInterval) { lock.withLock { date += seconds } }
}

private let start = Date(timeIntervalSince1970: 1_700_000_000)

/// A server that accepts only `Authorization: Bearer <accepted>`, answering `401` to anything else.
private func server(accepting accepted: String) -> RecordingTransport {
    RecordingTransport { request in
        request.value(forHTTPHeaderField: "Authorization") == "Bearer \(accepted)"
            ? Fixtures.json(#"{"ok":true}"#) : Fixtures.json(#"{"message":"token expired"}"#, status: 401)
    }
}

private func authorization(_ request: URLRequest) -> String? {
    request.value(forHTTPHeaderField: "Authorization")
}

private func isUnauthorized(_ result: Result<Data, any Error>) -> Bool {
    guard case .unacceptableStatus(let response, _)? = Fixtures.error(of: result) as? ConnectError else { return false }
    return response.statusCode == 401
}

// MARK: - Errors

@Suite("TokenAuthenticator: errors")
struct TokenAuthenticatorErrorTests {
    /// Apps show `error.localizedDescription`, which said only "The operation could not be
    /// completed. (SwiftConnect.TokenRefreshCancelled error 1.)".
    @Test func theRefreshErrorsLocalizedDescriptionsSayWhatHappened() async throws {
        let cancelling = TokenAuthenticator(token: nil) { _ in throw ConnectError.cancelled }
        let cancelled = try #require(
            Fixtures.error(
                of: await Middleware.connect(transport: server(accepting: "new"), middleware: cancelling)
                    .request(Middleware.Call()).asyncResult))
        #expect(cancelled is TokenRefreshCancelled)
        #expect(cancelled.localizedDescription == "\(cancelled)")

        let refresher = CountingRefresher { _ in AccessToken("short", expiresAt: start - 1) }
        let limiting = TokenAuthenticator(token: nil, refresher: refresher, maximumRefreshes: 1, now: { start })
        let connect = Middleware.connect(transport: server(accepting: "nothing"), middleware: limiting)
        _ = await connect.request(Middleware.Call()).asyncResult
        let limited = try #require(Fixtures.error(of: await connect.request(Middleware.Call()).asyncResult))
        #expect(limited is TokenRefreshLimitReached)
        #expect(limited.localizedDescription == "\(limited)")
    }
}

// MARK: - Tokens the header cannot carry

@Suite("TokenAuthenticator: invalid tokens")
struct TokenAuthenticatorInvalidTokenTests {
    /// `URLRequest.setValue` drops a value with CR or LF silently: the request would go out
    /// without its token (or, elsewhere, with a header injected).
    @Test func aTokenWithALineBreakFailsTheRequestAndNothingIsSent() async throws {
        let transport = server(accepting: "never")
        let authenticator = TokenAuthenticator(token: AccessToken("abc\r\nX-Injected: 1")) { _ in AccessToken("x") }
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(invalidRequestReason(of: result) == .invalidHeader(name: "Authorization"))
        #expect(transport.requests.isEmpty)
    }

    /// Nothing is sent with a refused token, so no `401` asks for a refresh: the next request
    /// refreshes it itself. Refused: a line break, which the header cannot carry, and a space
    /// inside a bearer token, as `AuthorizationToken.bearer` is checked — a token that carries its
    /// own `Bearer ` would go out as `Bearer Bearer abc` and be refreshed for nothing on its `401`.
    @Test(arguments: [
        ("bad\r\nX: 1", InvalidRequestReason.invalidHeader(name: "Authorization")), ("Bearer abc", .invalidBearerToken),
    ])
    func aRefusedTokenIsRefreshedBeforeTheNextRequest(token: String, reason: InvalidRequestReason) async throws {
        let transport = server(accepting: "fresh")
        let refresher = CountingRefresher { _ in AccessToken("fresh") }
        let authenticator = TokenAuthenticator(token: AccessToken(token), refresher: refresher)
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = await connect.request(Middleware.Call()).asyncResult
        #expect(invalidRequestReason(of: first) == reason)
        #expect(transport.requests.isEmpty)
        let second = try await connect.request(Middleware.Call()).value
        #expect(second == Data(#"{"ok":true}"#.utf8))
        #expect(refresher.replaced.values == [AccessToken(token)])
        #expect(transport.requests.map(authorization) == ["Bearer fresh"])
    }

    @Test func aRefreshedTokenWithALineBreakFailsTheRetryAndIsNotSent() async throws {
        let transport = server(accepting: "never")
        let authenticator = TokenAuthenticator(token: AccessToken("old")) { _ in AccessToken("new\nX-Injected: 1") }
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(invalidRequestReason(of: result) == .invalidHeader(name: "Authorization"))
        #expect(transport.requests.map(authorization) == ["Bearer old"])
    }

    @Test func aTokenIsSentWithoutTheSpacesAroundIt() async throws {
        let transport = server(accepting: "abc")
        let authenticator = TokenAuthenticator(token: AccessToken(" abc\t")) { _ in AccessToken("x") }
        _ = try await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).value
        #expect(transport.requests.map(authorization) == ["Bearer abc"])
    }

    /// A header of the API's own carries the token as given: only a bearer token has RFC 6750's rules.
    @Test func aTokenInAHeaderOfItsOwnIsNotCheckedAsABearerToken() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"ok":true}"#) }
        let apiKey: @Sendable (AccessToken) -> HTTPHeader = { HTTPHeader(name: "X-API-Key", value: $0.value) }
        let authenticator = TokenAuthenticator(token: AccessToken("key with spaces"), header: apiKey) { _ in
            AccessToken("x")
        }
        _ = try await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).value
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-API-Key") } == ["key with spaces"])
    }
}

// MARK: - The closure form

@Suite("TokenAuthenticator: closure refresher")
struct TokenAuthenticatorClosureTests {
    /// The closure form takes the same `header:` and `retriesPerRequest:` as the refresher form.
    @Test func theClosureFormSendsTheTokenInTheHeaderItNames() async throws {
        let transport = RecordingTransport { request in
            request.value(forHTTPHeaderField: "X-Token") == "fresh"
                ? Fixtures.json(#"{"ok":true}"#) : Fixtures.json("{}", status: 401)
        }
        let header: @Sendable (AccessToken) -> HTTPHeader = { HTTPHeader(name: "X-Token", value: $0.value) }
        let authenticator = TokenAuthenticator(token: AccessToken("stale"), header: header, retriesPerRequest: 1) { _ in
            AccessToken("fresh")
        }
        let data = try await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).value
        #expect(data == Data(#"{"ok":true}"#.utf8))
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-Token") } == ["stale", "fresh"])
        #expect(transport.requests.allSatisfy { authorization($0) == nil })
    }
}

// MARK: - Concurrent 401s

@Suite("TokenAuthenticator: concurrent refresh", timeLimit(minutes: 1))
struct TokenAuthenticatorConcurrencyTests {
    static let count = 50

    /// `count` requests, each tagged with `X-Request: <index>`, sent at once; their results in index order.
    private func sendAll(_ connect: Connect) async -> [Result<Data, any Error>] {
        await withTaskGroup(of: (Int, Result<Data, any Error>).self) { group in
            for index in 0..<Self.count {
                group.addTask {
                    let call = Middleware.Call(headers: [HTTPHeader(name: "X-Request", value: "\(index)")])
                    return (index, await connect.request(call).asyncResult)
                }
            }
            var results = [Result<Data, any Error>?](repeating: nil, count: Self.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    @Test func fiftyConcurrent401sTriggerOneRefreshAndAllSucceedRetriedWithTheNewToken() async throws {
        // Every first attempt is held until all fifty have reached the server, so all of them are
        // rejected with the old token at once.
        let firstRound = Fixtures.Gate(count: Self.count)
        let transport = RecordingTransport { request in
            if authorization(request) == "Bearer new" { return Fixtures.json(#"{"ok":true}"#) }
            firstRound.arrive()
            try await firstRound.wait()
            return Fixtures.json(#"{"message":"token expired"}"#, status: 401)
        }
        let refresher = CountingRefresher { _ in
            try await Task.sleep(nanoseconds: 50_000_000)
            return AccessToken("new")
        }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let results = await sendAll(Middleware.connect(transport: transport, middleware: authenticator))

        #expect(refresher.calls.value == 1)
        #expect(await authenticator.refreshCount == 1)
        #expect(refresher.replaced.values == [AccessToken("old")])
        for (index, result) in results.enumerated() {
            #expect(Fixtures.value(of: result) == Data(#"{"ok":true}"#.utf8), "request \(index): \(result)")
        }
        let sent = transport.requests
        #expect(sent.count == 2 * Self.count)
        for index in 0..<Self.count {
            let mine = sent.filter { $0.value(forHTTPHeaderField: "X-Request") == "\(index)" }.map(authorization)
            #expect(mine == ["Bearer old", "Bearer new"], "request \(index)")
        }
    }

    @Test func fiftyConcurrent401sWithAFailingRefreshAllFailWithTheRefreshError() async throws {
        let firstRound = Fixtures.Gate(count: Self.count)
        let transport = RecordingTransport { request in
            firstRound.arrive()
            try await firstRound.wait()
            return Fixtures.json(#"{"message":"token expired"}"#, status: 401)
        }
        // The refresh fails only once every request has come back 401 and asked to be retried, so
        // all fifty are waiting on the one refresh.
        let retriersAsked = Fixtures.Gate(count: Self.count)
        let refresher = CountingRefresher { _ in
            try await retriersAsked.wait()
            try await Task.sleep(nanoseconds: 100_000_000)
            throw RefreshFailed()
        }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let arrivals = ClosureRetrier { _ in
            retriersAsked.arrive()
            return .doNotRetry
        }
        let middleware = ConnectMiddleware(adapters: [authenticator], retriers: [arrivals, authenticator])
        let results = await sendAll(Middleware.connect(transport: transport, middleware: middleware))

        #expect(refresher.calls.value == 1)
        for (index, result) in results.enumerated() {
            #expect(Fixtures.error(of: result) is RefreshFailed, "request \(index): \(result)")
        }
        #expect(transport.requests.count == Self.count)
        #expect(transport.requests.allSatisfy { authorization($0) == "Bearer old" })
    }

    @Test func fiftyConcurrentRequestsWithAnExpiredTokenShareOneRefreshBeforeSending() async throws {
        let transport = server(accepting: "new")
        let refresher = CountingRefresher { _ in
            try await Task.sleep(nanoseconds: 50_000_000)
            return AccessToken("new", expiresAt: start + 3600)
        }
        let authenticator = TokenAuthenticator(
            token: AccessToken("old", expiresAt: start - 1), refresher: refresher, now: { start })
        let results = await sendAll(Middleware.connect(transport: transport, middleware: authenticator))
        #expect(refresher.calls.value == 1)
        #expect(results.allSatisfy { Fixtures.value(of: $0) != nil })
        #expect(transport.requests.count == Self.count)
        #expect(transport.requests.allSatisfy { authorization($0) == "Bearer new" })
    }

    /// Both halves are sent with the same token and rejected by the server; the second half's
    /// 401s come back only after the refresh the first half started has failed. "Once for all
    /// requests rejected with the same token" means they share that refresh's outcome too.
    @Test func requestsRejectedWithTheSameTokenAfterAFailedRefreshFailWithItsErrorWithoutRefreshingAgain()
        async throws
    {
        let half = Self.count / 2
        let allSent = Fixtures.Gate(count: Self.count)
        let secondHalfMayAnswer = Fixtures.Gate()
        let transport = RecordingTransport { request in
            allSent.arrive()
            try await allSent.wait()
            let index = Int(request.value(forHTTPHeaderField: "X-Request") ?? "") ?? 0
            if index >= half { try await secondHalfMayAnswer.wait() }
            return Fixtures.json(#"{"message":"token expired"}"#, status: 401)
        }
        let refresher = CountingRefresher { _ in throw RefreshFailed() }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher, maximumRefreshes: 1)
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let futures = (0..<Self.count).map { index in
            connect.request(Middleware.Call(headers: [HTTPHeader(name: "X-Request", value: "\(index)")]))
        }
        var results: [Result<Data, any Error>] = []
        for future in futures[..<half] { results.append(await future.asyncResult) }
        secondHalfMayAnswer.open()
        for future in futures[half...] { results.append(await future.asyncResult) }

        #expect(refresher.calls.value == 1)
        let others = results.indices.filter { !(Fixtures.error(of: results[$0]) is RefreshFailed) }
        #expect(
            others.isEmpty,
            "\(others.count) of \(Self.count) did not fail with the refresh's error, e.g. #\(others.first ?? -1): \(others.first.map { "\(results[$0])" } ?? "")"
        )
    }

    @Test func cancellingTheRequestThatStartedTheRefreshDoesNotFailTheOthers() async throws {
        let refresher = HeldRefresher { AccessToken("new") }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = server(accepting: "new")
        let connect = Middleware.connect(transport: transport, middleware: authenticator)

        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        let second = connect.request(Middleware.Call())
        first.cancel()
        let firstResult = await first.asyncResult
        #expect((Fixtures.error(of: firstResult) as? ConnectError)?.isCancellation == true)

        refresher.mayFinish.open()
        let data = try await second.value
        #expect(data == Data(#"{"ok":true}"#.utf8))
        #expect(refresher.calls.value == 1)
        #expect(transport.requests.last.map(authorization) == "Bearer new")
    }
    /// The refresher's own request was cancelled (by `cancelAllRequests()`, say) — not the
    /// requests waiting for a token. They fail with ``TokenRefreshCancelled``, not with
    /// `.cancelled`, and the next request refreshes again instead of getting the same error for two
    /// seconds.
    @Test func aCancelledRefreshIsNotTheWaitingRequestsCancellationAndIsNotRemembered() async throws {
        let refresher = CountingRefresher { call in
            if call == 1 { throw ConnectError.cancelled }
            return AccessToken("new")
        }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = server(accepting: "new")
        let connect = Middleware.connect(transport: transport, middleware: authenticator)

        let first = await connect.request(Middleware.Call()).asyncResult
        let error = Fixtures.error(of: first)
        #expect(error is TokenRefreshCancelled, "\(String(describing: error))")
        #expect((error as? ConnectError)?.isCancellation != true)
        #expect(transport.requests.isEmpty)

        let data = try await connect.request(Middleware.Call()).value
        #expect(data == Data(#"{"ok":true}"#.utf8))
        #expect(refresher.calls.value == 2)
    }

    /// Every request waiting on the cancelled refresh gets the same error, not only the one that
    /// started it.
    @Test func requestsWaitingOnACancelledRefreshFailWithTokenRefreshCancelledToo() async throws {
        let refresher = HeldRefresher { throw ConnectError.cancelled }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        let waiting = (0..<3).map { _ in connect.request(Middleware.Call()) }
        try await Task.sleep(nanoseconds: 50_000_000)  // the others are waiting on the refresh by now
        refresher.mayFinish.open()
        for future in [first] + waiting {
            let error = Fixtures.error(of: await future.asyncResult)
            #expect(error is TokenRefreshCancelled, "\(String(describing: error))")
        }
        #expect(transport.requests.isEmpty)
    }

    /// The same after a `401`: the request is not reported cancelled.
    @Test func aCancelledRefreshAfterA401IsNotTheRequestsCancellation() async throws {
        let refresher = CountingRefresher { _ in throw CancellationError() }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let result = await Middleware.connect(transport: server(accepting: "new"), middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) is TokenRefreshCancelled)
    }
}

// MARK: - One request at a time

@Suite("TokenAuthenticator", timeLimit(minutes: 1))
struct TokenAuthenticatorTests {
    @Test func currentTokenIsSentAsABearerAuthorization() async throws {
        let transport = server(accepting: "current")
        let refresher = CountingRefresher { _ in AccessToken("unused") }
        let authenticator = TokenAuthenticator(token: AccessToken("current"), refresher: refresher)
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer current"])
        #expect(refresher.calls.value == 0)
    }

    /// A connector's own credentials (a `.basic` login, another bearer token, the header in its
    /// `headers`) go as they are; their `401` comes back without a refresh, and the refresh budget
    /// stays for the authenticator's own token.
    @Test func aRequestWithCredentialsOfItsOwnGoesAsItIsAndItsRejectionRefreshesNothing() async throws {
        let transport = server(accepting: "current")
        let refresher = CountingRefresher { _ in AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: AccessToken("current"), refresher: refresher)
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let own: [Middleware.Call] = [
            Middleware.Call(authorizationToken: .basic(username: "u", password: "p")),
            Middleware.Call(authorizationToken: .bearer(token: "connector")),
            Middleware.Call(headers: [.authorization("Token abc")]),
        ]
        for call in own {
            let result = await connect.request(call).asyncResult
            #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 401)
        }
        #expect(transport.requests.map(authorization) == ["Basic dTpw", "Bearer connector", "Token abc"])
        #expect(refresher.calls.value == 0)
        #expect(await authenticator.token == AccessToken("current"))
        // A connector without credentials of its own still gets the authenticator's token.
        _ = try await connect.request(Middleware.Call()).value
        #expect(transport.requests.last.map(authorization) == "Bearer current")
    }

    /// Only the connector's own headers win: the authenticator replaces the header when it comes
    /// from the configuration's defaults or from an adapter before it, and refreshes on its `401`.
    @Test func aHeaderFromDefaultsOrAnEarlierAdapterIsReplacedAndItsRejectionRefreshes() async throws {
        let transport = server(accepting: "fresh")
        let refresher = CountingRefresher { _ in AccessToken("fresh") }
        let authenticator = TokenAuthenticator(token: AccessToken("stale"), refresher: refresher)
        let withDefaults = Middleware.connect(transport: transport, middleware: authenticator) {
            $0.defaultHeaders = [.authorization(bearerToken: "static")]
        }
        _ = try await withDefaults.request(Middleware.Call()).value
        #expect(transport.requests.map(authorization) == ["Bearer stale", "Bearer fresh"])
        #expect(refresher.calls.value == 1)

        let earlier = ClosureAdapter { request in
            var request = request
            request.setValue("ApiKey k", forHTTPHeaderField: "Authorization")
            return request
        }
        let composed = ConnectMiddleware([ConnectMiddleware(adapters: [earlier]), authenticator])
        _ = try await Middleware.connect(transport: transport, middleware: composed)
            .request(Middleware.Call(method: .post)).value
        #expect(transport.requests.last.map(authorization) == "Bearer fresh")
        #expect(transport.requests.count == 3)

        // A header the connector's parameters add is not the connector's own credential either.
        struct AddsAuthorization: ParametersRepresentable {
            func apply(to parameters: inout RequestParameters) throws {
                parameters.appendHeader(.authorization("Token from-parameters"))
            }
        }
        _ = try await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call(parameters: AddsAuthorization())).value
        #expect(transport.requests.last.map(authorization) == "Bearer fresh")
    }

    @Test func aRequestWithItsOwnCustomHeaderIsLeftAloneByAnAuthenticatorOfThatHeader() async throws {
        let transport = RecordingTransport()
        let authenticator = TokenAuthenticator(
            token: AccessToken("mine"), header: { HTTPHeader(name: "X-Token", value: $0.value) },
            refresh: { _ in AccessToken("refreshed") })
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        _ = try await connect.request(Middleware.Call(authorizationToken: .header(name: "x-token", value: "own"))).value
        _ = try await connect.request(Middleware.Call(authorizationToken: .bearer(token: "b"))).value
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-Token") } == ["own", "mine"])
        #expect(transport.requests.last.map(authorization) == "Bearer b")
    }

    @Test func a401IsRefreshedAndRetriedOnceWithTheNewToken() async throws {
        let transport = server(accepting: "new")
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer old", "Bearer new"])
        #expect(refresher.replaced.values == [AccessToken("old")])
        #expect(await authenticator.token == AccessToken("new"))
    }

    /// `retriesPerRequest` counts re-sends after a refresh; a retry of another kind (a 503 retried by
    /// the retry policy) must not use it up.
    @Test func a401AfterARetryOfAnotherKindIsStillRefreshedAndRetried() async throws {
        let calls = Fixtures.Counter()
        let transport = RecordingTransport { request in
            if calls.increment() == 1 { return Fixtures.json(#"{"message":"busy"}"#, status: 503) }
            return authorization(request) == "Bearer new" ? Fixtures.json("{}") : Fixtures.json("{}", status: 401)
        }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let middleware = ConnectMiddleware(
            adapters: [authenticator], retriers: [authenticator, RetryPolicy(baseDelay: 0, jitter: 0)])
        let result = await Middleware.connect(transport: transport, middleware: middleware)
            .request(Middleware.Call()).asyncResult
        #expect(Fixtures.value(of: result) != nil, "\(result)")
        #expect(refresher.calls.value == 1)
        #expect(transport.requests.map(authorization) == ["Bearer old", "Bearer old", "Bearer new"])
    }

    /// Logging out (or in) while a refresh is running: the token set last must stay, not be
    /// overwritten when the older refresh finishes.
    @Test func tokenSetDuringARefreshIsNotOverwrittenByThatRefresh() async throws {
        let refresher = HeldRefresher { AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        await authenticator.setToken(AccessToken("set-by-user"))
        refresher.mayFinish.open()
        _ = await first.asyncResult

        #expect(await authenticator.token == AccessToken("set-by-user"))
        _ = try await connect.request(Middleware.Call()).value
        #expect(transport.requests.last.map(authorization) == "Bearer set-by-user")
    }

    /// Requests that arrive while a refresh runs send the token set meanwhile too, not the
    /// refresh's.
    @Test func requestsWaitingOnARefreshSendTheTokenSetDuringIt() async throws {
        let refresher = HeldRefresher { AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        let second = connect.request(Middleware.Call())
        try await Task.sleep(nanoseconds: 50_000_000)  // waiting on the refresh by now
        await authenticator.setToken(AccessToken("set-by-user"))
        refresher.mayFinish.open()
        _ = try await first.value
        _ = try await second.value
        #expect(transport.requests.map(authorization) == ["Bearer set-by-user", "Bearer set-by-user"])
    }

    /// A request made after `setToken` does not wait for a refresh that was running when the
    /// token was set (a slow or stuck login server): that refresh can only bring the token set, so
    /// the request is sent with it at once, while the refresh still runs.
    @Test func aRequestMadeAfterSetTokenDoesNotWaitForAnOlderRefresh() async throws {
        let refresher = HeldRefresher { AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        await authenticator.setToken(AccessToken("set-by-user"))
        let second = connect.request(Middleware.Call())
        for _ in 0..<200 where second.result == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(second.result != nil, "still waiting on the refresh started before setToken")
        #expect(first.result == nil)
        refresher.mayFinish.open()
        _ = try await first.value
        _ = try await second.value
        #expect(transport.requests.map(authorization) == ["Bearer set-by-user", "Bearer set-by-user"])
        #expect(refresher.calls.value == 1)
    }

    /// After logging out during a refresh, the next request asks for a token of its own rather
    /// than wait for the refresh of the session logged out of (and fail with it).
    @Test func aRequestMadeAfterLoggingOutDuringARefreshRefreshesAgain() async throws {
        let firstMayFinish = Fixtures.Gate()
        let refresher = CountingRefresher { call in
            if call == 1 { try await firstMayFinish.wait() }
            return AccessToken("t\(call)")
        }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        for _ in 0..<200 where refresher.calls.value == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        await authenticator.setToken(nil)
        let second = connect.request(Middleware.Call())
        for _ in 0..<200 where second.result == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(try second.result?.get() != nil, "still waiting on the refresh started before logging out")
        #expect(refresher.calls.value == 2)
        // The older refresh, ending, neither overwrites the new token nor sends its own; and the
        // request waiting on it, made before logging out, does not go out with the token of the
        // session that began after it either (it did, as `Bearer t2`).
        firstMayFinish.open()
        let firstResult = await first.asyncResult
        #expect(Fixtures.error(of: firstResult) is TokenRefreshCancelled, "\(firstResult)")
        #expect(await authenticator.token == AccessToken("t2"))
        #expect(transport.requests.map(authorization) == ["Bearer t2"], "the second request's alone")
    }

    /// Logging out while a refresh runs: the requests waiting on it, the one that started it
    /// included, fail with `TokenRefreshCancelled` and send nothing; the refreshed token is not
    /// kept, and the next request refreshes again.
    @Test func loggingOutDuringARefreshFailsItsRequestsWithoutSendingItsToken() async throws {
        let refresher = HeldRefresher { AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: AccessToken("old", expiresAt: .distantPast), refresher: refresher)
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let first = connect.request(Middleware.Call())
        try await refresher.started.wait()
        let second = connect.request(Middleware.Call())
        try await Task.sleep(nanoseconds: 50_000_000)  // waiting on the refresh by now
        await authenticator.setToken(nil)
        refresher.mayFinish.open()
        for future in [first, second] {
            let result = await future.asyncResult
            #expect(Fixtures.error(of: result) is TokenRefreshCancelled, "\(result)")
        }
        #expect(transport.requests.isEmpty)
        #expect(await authenticator.token == nil)

        _ = try await connect.request(Middleware.Call()).value
        #expect(refresher.calls.value == 2)
        #expect(transport.requests.map(authorization) == ["Bearer refreshed"])
    }

    /// A token that lives no longer than the leeway is refreshed before each request; once the
    /// refresh limit is reached, it is still sent while it has not expired, rather than nothing.
    @Test func aTokenWithinItsLeewayIsSentOnceTheRefreshLimitIsReached() async throws {
        let clock = Clock(start)
        let refresher = CountingRefresher { call in AccessToken("t\(call)", expiresAt: clock.now + 5) }
        let authenticator = TokenAuthenticator(
            token: nil, refresher: refresher, leeway: 10, maximumRefreshes: 2, now: { clock.now })
        let transport = RecordingTransport()
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        for _ in 0..<4 { _ = try await connect.request(Middleware.Call()).value }
        #expect(transport.requests.map(authorization) == ["Bearer t1", "Bearer t2", "Bearer t2", "Bearer t2"])
        clock.advance(by: 6)  // t2 has expired now: nothing to send
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) is TokenRefreshLimitReached)
        #expect(transport.requests.count == 4)
    }

    /// A `401` the token never reached — a redirect's hop to another origin, which loses the
    /// token — is not the token's rejection: nothing is refreshed or retried.
    @Test func a401FromAHopTheTokenNeverReachedIsNotRetried() async throws {
        let transport = RecordingTransport { request in
            request.url?.host == "api.test"
                ? Middleware.redirect("http://other.test/items/5", status: 302)
                : Fixtures.json(#"{"message":"who are you"}"#, status: 401)
        }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(isUnauthorized(result))
        #expect(transport.requests.map(\.url?.host) == ["api.test", "other.test"])
        #expect(refresher.calls.value == 0)
    }

    /// A `POST` a `303` turned into a `GET`: the server acted on the `POST` already. A `401` on
    /// the `GET` — same origin, the token expired in between — must not send the `POST` again.
    @Test func aPostIsNotSentAgainAfterA401OnTheGetA303LedTo() async throws {
        let transport = RecordingTransport { request in
            if request.httpMethod == "POST" { return Middleware.redirect("http://api.test/items/5", status: 303) }
            return Fixtures.json(#"{"message":"token expired"}"#, status: 401)
        }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call(method: .post)).asyncResult
        #expect(isUnauthorized(result))
        #expect(transport.requests.map(\.httpMethod) == ["POST", "GET"])
        // A `POST` rejected itself is refreshed and sent again, as before.
        let rejecting = server(accepting: "new")
        let retried = TokenAuthenticator(
            token: AccessToken("old"), refresher: CountingRefresher { _ in AccessToken("new") })
        _ = try await Middleware.connect(transport: rejecting, middleware: retried)
            .request(Middleware.Call(method: .post)).value
        #expect(rejecting.requests.map(authorization) == ["Bearer old", "Bearer new"])
    }

    @Test func expiredTokenIsRefreshedBeforeSending() async throws {
        let transport = server(accepting: "new")
        let refresher = CountingRefresher { _ in AccessToken("new", expiresAt: start + 3600) }
        let expired = AccessToken("old", expiresAt: start - 60)
        let authenticator = TokenAuthenticator(token: expired, refresher: refresher, now: { start })
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer new"])
        #expect(refresher.replaced.values == [expired])
    }

    @Test func tokenExpiringWithinTheLeewayIsRefreshedBeforeSending() async throws {
        let transport = server(accepting: "new")
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("old", expiresAt: start + 5), refresher: refresher, leeway: 10, now: { start })
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer new"])
    }

    @Test func tokenValidBeyondTheLeewayIsSentAsItIs() async throws {
        let transport = server(accepting: "old")
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("old", expiresAt: start + 11), refresher: refresher, leeway: 10, now: { start })
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer old"])
        #expect(refresher.calls.value == 0)
    }

    @Test func withoutATokenOneIsFetchedBeforeTheFirstRequest() async throws {
        let transport = server(accepting: "first")
        let refresher = CountingRefresher { _ in AccessToken("first") }
        let authenticator = TokenAuthenticator(token: nil, refresher: refresher)
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer first"])
        #expect(refresher.replaced.values == [nil])
    }

    @Test func failingRefreshBeforeSendingFailsWithItsErrorAndSendsNothing() async throws {
        let transport = server(accepting: "never")
        let authenticator = TokenAuthenticator(token: nil, refresher: CountingRefresher { _ in throw RefreshFailed() })
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) is RefreshFailed)
        #expect(transport.requests.isEmpty)
    }

    @Test func failingRefreshAfterA401FailsWithTheRefreshErrorNotThe401() async throws {
        let transport = server(accepting: "never")
        let authenticator = TokenAuthenticator(
            token: AccessToken("old"), refresher: CountingRefresher { _ in throw RefreshFailed() })
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) is RefreshFailed)
        #expect(transport.requests.count == 1)
    }

    @Test func serverThatAlwaysAnswers401CausesAtMostMaximumRefreshesThenThe401IsReturned() async throws {
        let transport = server(accepting: "nothing")
        let refresher = CountingRefresher { number in AccessToken("t\(number)") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("t0"), refresher: refresher, maximumRefreshes: 3, refreshWindow: 60, now: { start })
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        for index in 0..<6 {
            let result = await connect.request(Middleware.Call()).asyncResult
            #expect(isUnauthorized(result), "request \(index): \(result)")
        }
        #expect(refresher.calls.value == 3)
        #expect(await authenticator.refreshCount == 3)
        // Three requests each sent twice (old token, refreshed token), then three sent once.
        #expect(transport.requests.count == 9)
    }

    /// One request gets `retriesPerRequest` refreshes (1 by default), however many the limit
    /// leaves: sent with the old token and the refreshed one, then its 401 is the answer.
    @Test func oneRequestIsRetriedWithOneRefreshByDefault() async throws {
        let transport = server(accepting: "nothing")
        let refresher = CountingRefresher { number in AccessToken("t\(number)") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("t0"), refresher: refresher, maximumRefreshes: 10, now: { start })
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(isUnauthorized(result))
        #expect(refresher.calls.value == 1)
        #expect(transport.requests.map(authorization) == ["Bearer t0", "Bearer t1"])
    }

    /// A 401 for a token that is no longer the current one (the app set another while the request
    /// was out) is retried with the current token: refreshing would throw away a good one.
    @Test func a401ForATokenSetAsideMeanwhileIsRetriedWithTheCurrentTokenWithoutARefresh() async throws {
        let refresher = CountingRefresher { _ in AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher, now: { start })
        let sent = Fixtures.Recorder<String?>()
        let transport = StubTransport { request in
            let value = request.value(forHTTPHeaderField: "Authorization")
            sent.append(value)
            if value == "Bearer old" {
                await authenticator.setToken(AccessToken("new"))
                return StubTransport.Reply(statusCode: 401)
            }
            return StubTransport.Reply(statusCode: value == "Bearer new" ? 200 : 401)
        }
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect((try? result.get()) != nil, "\(result)")
        #expect(refresher.calls.value == 0)
        #expect(await authenticator.refreshCount == 0)
        #expect(sent.values == ["Bearer old", "Bearer new"])
    }

    @Test func oneRequestRetriedManyTimesStillStopsAtTheRefreshLimit() async throws {
        let transport = server(accepting: "nothing")
        let refresher = CountingRefresher { number in AccessToken("t\(number)") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("t0"), refresher: refresher, maximumRefreshes: 3, retriesPerRequest: 100,
            now: { start })
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect(isUnauthorized(result))
        #expect(refresher.calls.value == 3)
        #expect(transport.requests.map(authorization) == ["Bearer t0", "Bearer t1", "Bearer t2", "Bearer t3"])
    }

    @Test func refreshesAreAllowedAgainOnceTheWindowHasPassed() async throws {
        let transport = server(accepting: "nothing")
        let clock = Clock(start)
        let refresher = CountingRefresher { number in AccessToken("t\(number)") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("t0"), refresher: refresher, maximumRefreshes: 1, refreshWindow: 60,
            now: { clock.now })
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        _ = await connect.request(Middleware.Call()).asyncResult
        _ = await connect.request(Middleware.Call()).asyncResult
        #expect(refresher.calls.value == 1)
        clock.advance(by: 61)
        _ = await connect.request(Middleware.Call()).asyncResult
        #expect(refresher.calls.value == 2)
    }

    @Test func refreshLimitReachedWithoutATokenFailsBeforeSending() async throws {
        let transport = server(accepting: "nothing")
        let refresher = CountingRefresher { _ in AccessToken("short", expiresAt: start - 1) }
        let authenticator = TokenAuthenticator(
            token: nil, refresher: refresher, maximumRefreshes: 1, now: { start })
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        _ = await connect.request(Middleware.Call()).asyncResult
        let sentBefore = transport.requests.count
        // The refreshed token has already expired, and the one refresh allowed is used up.
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) is TokenRefreshLimitReached)
        #expect(transport.requests.count == sentBefore)
        #expect(refresher.calls.value == 1)
    }

    @Test func connectorWithoutMiddlewareIsSentWithoutTheTokenAndNeverRefreshes() async throws {
        let transport = RecordingTransport { request in
            request.url?.path == "/login" ? Fixtures.json("{}", status: 401) : Fixtures.json("{}")
        }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("current"), refresher: refresher)
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        let result = await connect.request(Middleware.Call(endpoint: "/login", middleware: .none)).asyncResult
        #expect(isUnauthorized(result))
        #expect(transport.requests.count == 1)
        #expect(transport.requests.first.map(authorization) == .some(nil))
        #expect(refresher.calls.value == 0)

        _ = try await connect.request(Middleware.Call()).value
        #expect(transport.requests.last.map(authorization) == "Bearer current")
    }

    @Test func setTokenReplacesTheTokenForTheNextRequests() async throws {
        let transport = RecordingTransport()
        let refresher = CountingRefresher { _ in AccessToken("refreshed") }
        let authenticator = TokenAuthenticator(token: AccessToken("first"), refresher: refresher)
        let connect = Middleware.connect(transport: transport, middleware: authenticator)
        _ = try await connect.request(Middleware.Call()).value
        await authenticator.setToken(AccessToken("second"))
        #expect(await authenticator.token == AccessToken("second"))
        _ = try await connect.request(Middleware.Call()).value
        #expect(transport.requests.map(authorization) == ["Bearer first", "Bearer second"])
        #expect(refresher.calls.value == 0)
    }

    @Test func setTokenToNilFetchesAFreshOneBeforeTheNextRequest() async throws {
        let transport = RecordingTransport()
        let refresher = CountingRefresher { _ in AccessToken("fetched") }
        let authenticator = TokenAuthenticator(token: AccessToken("first"), refresher: refresher)
        await authenticator.setToken(nil)
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map(authorization) == ["Bearer fetched"])
        #expect(refresher.calls.value == 1)
    }

    @Test func customHeaderCarriesTheTokenAndA401OnItIsRefreshed() async throws {
        let transport = RecordingTransport { request in
            request.value(forHTTPHeaderField: "X-Auth-Token") == "new"
                ? Fixtures.json("{}") : Fixtures.json("{}", status: 401)
        }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(
            token: AccessToken("old"), refresher: refresher,
            header: { HTTPHeader(name: "X-Auth-Token", value: $0.value) })
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(transport.requests.map { $0.value(forHTTPHeaderField: "X-Auth-Token") } == ["old", "new"])
        #expect(transport.requests.allSatisfy { authorization($0) == nil })
        #expect(refresher.calls.value == 1)
    }

    @Test func closureInitializerRefreshesToo() async throws {
        let transport = server(accepting: "new")
        let calls = Fixtures.Counter()
        let authenticator = TokenAuthenticator(token: AccessToken("old")) { expired in
            calls.increment()
            #expect(expired == AccessToken("old"))
            return AccessToken("new")
        }
        _ = try await Middleware.connect(transport: transport, middleware: authenticator).request(Middleware.Call())
            .value
        #expect(calls.value == 1)
    }

    @Test func otherErrorStatusesDoNotRefresh() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 403) }
        let refresher = CountingRefresher { _ in AccessToken("new") }
        let authenticator = TokenAuthenticator(token: AccessToken("old"), refresher: refresher)
        let result = await Middleware.connect(transport: transport, middleware: authenticator)
            .request(Middleware.Call()).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 403)
        #expect(refresher.calls.value == 0)
        #expect(transport.requests.count == 1)
    }

    @Test func accessTokenExpiryHonoursTheLeeway() {
        let token = AccessToken("t", expiresAt: start + 10)
        #expect(!token.isExpired(at: start))
        #expect(token.isExpired(at: start, leeway: 10))
        #expect(token.isExpired(at: start + 10))
        #expect(!AccessToken("forever").isExpired(at: .distantFuture, leeway: 1000))
    }
}

/// The three pieces of a real client together on one `Connect`, as Usage.md composes them: an
/// error handler of the API's own, a retry policy and a token authenticator.
@Suite("TokenAuthenticator: with an error handler and a retry policy", timeLimit(minutes: 1))
struct TokenAuthenticatorWithErrorHandlerAndRetriesTests {
    struct APIError: Error, Equatable {
        let code: String
        let status: Int
    }

    /// Turns `{"code": …}` bodies into ``APIError``.
    struct APIErrorHandler: ErrorHandlerProtocol {
        func handle(response: [String: Any]) -> Error? { nil }

        func handle(response: [String: Any], statusCode: Int) -> Error? {
            (response["code"] as? String).map { APIError(code: $0, status: statusCode) }
        }
    }

    @Test func a401RefreshesOnceA503IsRetriedAndTheHandlersErrorArrivesLast() async throws {
        let refreshes = Fixtures.Counter()
        let authenticator = TokenAuthenticator(token: AccessToken("old")) { _ in
            refreshes.increment()
            return AccessToken("new")
        }
        let sent = Fixtures.Recorder<String>()
        let transport = StubTransport { request in
            let path = request.url?.path ?? ""
            let authorization = request.value(forHTTPHeaderField: "Authorization") ?? "-"
            sent.append("\(path) \(authorization)")
            guard authorization == "Bearer new" else {
                return StubTransport.Reply(statusCode: 401, body: Data(#"{"code":"expired"}"#.utf8))
            }
            if path == "/busy" { return StubTransport.Reply(statusCode: 503, body: Data(#"{"code":"down"}"#.utf8)) }
            return StubTransport.Reply(statusCode: 200, body: Data(#"{"id":1}"#.utf8))
        }
        let sleep = Middleware.RecordingSleep()
        let connect = Middleware.connect(
            transport: transport,
            middleware: ConnectMiddleware([
                authenticator, ConnectMiddleware(retriers: [RetryPolicy(maximumAttempts: 3)]),
            ]),
            errorHandler: APIErrorHandler(), sleep: sleep)

        let body = try await connect.request(Middleware.Call(endpoint: "/ok")).value
        #expect(body == Data(#"{"id":1}"#.utf8))
        #expect(refreshes.value == 1)
        #expect(sent.values == ["/ok Bearer old", "/ok Bearer new"])

        let busy = await connect.request(Middleware.Call(endpoint: "/busy")).asyncResult
        #expect(busy.failureValue as? APIError == APIError(code: "down", status: 503))
        #expect(sent.values.dropFirst(2) == ["/busy Bearer new", "/busy Bearer new", "/busy Bearer new"])
        #expect(sleep.delays.count == 2)
        #expect(refreshes.value == 1)
    }
}
