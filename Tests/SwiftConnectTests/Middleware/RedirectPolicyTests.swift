import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// A server on `api.test` whose `/hop/<n>` redirects to `/hop/<n-1>`, `/hop/0` answering
/// `{"final":true}`; any other path redirects to `other` (if given) or answers `{}`.
private func hops(other: String? = nil) -> RecordingTransport {
    RecordingTransport { request in
        let path = request.url?.path ?? ""
        if path.hasPrefix("/hop/"), let left = Int(path.dropFirst("/hop/".count)) {
            return left == 0 ? Fixtures.json(#"{"final":true}"#) : Middleware.redirect("/hop/\(left - 1)")
        }
        if path == "/items", let other { return Middleware.redirect(other) }
        return Fixtures.json("{}")
    }
}

private func hopCall(_ count: Int) -> Middleware.Call {
    Middleware.Call(endpoint: "/hop/\(count)")
}

/// The redirect response a `.tooManyRedirects` carries, or `nil` for any other result.
private func tooManyRedirects<Value>(_ result: Result<Value, any Error>) -> Response? {
    guard case .tooManyRedirects(let response)? = Fixtures.error(of: result) as? ConnectError else { return nil }
    return response
}

private func configured(
    _ transport: RecordingTransport, _ policy: RedirectPolicy,
    middleware: any ConnectMiddlewareProtocol = ConnectMiddleware()
) -> Connect {
    Middleware.connect(transport: transport, middleware: middleware) { $0.redirectPolicy = policy }
}

// MARK: - Policies

@Suite("RedirectPolicy", timeLimit(minutes: 1))
struct RedirectPolicyTests {
    @Test func doNotFollowHandsTheRedirectToTheErrorHandler() async throws {
        let transport = hops()
        let result = await configured(transport, .doNotFollow).request(hopCall(1)).asyncResult
        guard case .unacceptableStatus(let response, _)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(result)")
            return
        }
        #expect(response.statusCode == 302)
        #expect(response.headers["Location"] == "/hop/0")
        #expect(transport.requests.count == 1)
    }

    @Test func doNotFollowWithAcceptedRedirectStatusesDeliversTheRedirectAsASuccess() async throws {
        let transport = hops()
        var call = hopCall(1)
        call.acceptableStatusCodes = 200..<400
        let response = try await configured(transport, .doNotFollow).response(call).value
        #expect(response.statusCode == 302)
        #expect(response.headers["Location"] == "/hop/0")
        #expect(transport.requests.count == 1)
    }

    /// A `Location` without a host cannot be followed under any policy: the `3xx` is the response,
    /// as for one without a `Location`, with or without middleware (they follow redirects in
    /// different places). It used to be sent, and failed as a transport error.
    @Test(arguments: [false, true])
    func aLocationWithoutAHostIsTheResponseAndNothingMoreIsSent(withMiddleware: Bool) async throws {
        let transport = hops(other: "http:///elsewhere")
        let middleware = withMiddleware ? ConnectMiddleware(adapters: [ClosureAdapter { $0 }]) : ConnectMiddleware()
        var call = Middleware.Call(endpoint: "/items")
        call.acceptableStatusCodes = 200..<400
        let response = try await configured(transport, .follow, middleware: middleware).response(call).value
        #expect(response.statusCode == 302)
        #expect(response.headers["Location"] == "http:///elsewhere")
        #expect(transport.requests.map { $0.url?.absoluteString } == ["http://api.test/items"])
    }

    @Test func followWithMaximumHopsFailsWithTooManyRedirectsOneHopBeyond() async throws {
        let transport = hops()
        let result = await configured(transport, .follow(maximumHops: 2)).request(hopCall(3)).asyncResult
        let last = try #require(tooManyRedirects(result), "got \(result)")
        #expect(last.statusCode == 302)
        #expect(last.headers["Location"] == "/hop/0")
        #expect(transport.requests.map { $0.url?.path } == ["/hop/3", "/hop/2", "/hop/1"])
    }

    @Test func followWithMaximumHopsFollowsThatManyHops() async throws {
        let transport = hops()
        let data = try await configured(transport, .follow(maximumHops: 2)).request(hopCall(2)).value
        #expect(data == Data(#"{"final":true}"#.utf8))
        #expect(transport.requests.count == 3)
    }

    @Test func followWithZeroHopsFailsOnTheFirstRedirect() async throws {
        let transport = hops()
        let result = await configured(transport, .follow(maximumHops: 0)).request(hopCall(1)).asyncResult
        #expect(tooManyRedirects(result) != nil, "got \(result)")
        #expect(transport.requests.count == 1)
    }

    @Test func defaultPolicyFollowsTenHops() async throws {
        let transport = hops()
        let data = try await Middleware.connect(transport: transport).request(hopCall(10)).value
        #expect(data == Data(#"{"final":true}"#.utf8))
        #expect(RedirectPolicy.follow.maximumHops == 10)
        let result = await Middleware.connect(transport: hops()).request(hopCall(11)).asyncResult
        #expect(tooManyRedirects(result) != nil, "got \(result)")
    }

    @Test func decideIsAskedAboutEveryHopWithTheResponseAndTheProposedRequest() async throws {
        let transport = hops()
        let asked = Fixtures.Recorder<(hop: Int, status: Int, from: String?, to: String?)>()
        let policy = RedirectPolicy.decide { redirect in
            asked.append(
                (
                    redirect.hop, redirect.response.statusCode, redirect.response.url?.path,
                    redirect.proposedRequest.url?.path
                ))
            return .follow
        }
        _ = try await configured(transport, policy).request(hopCall(2)).value
        let questions = asked.values
        #expect(questions.map(\.hop) == [1, 2])
        #expect(questions.map(\.status) == [302, 302])
        #expect(questions.map(\.from) == ["/hop/2", "/hop/1"])
        #expect(questions.map(\.to) == ["/hop/1", "/hop/0"])
    }

    @Test func decideSeesACrossOriginProposalWithCredentialsAlreadyStripped() async throws {
        let transport = hops(other: "https://cdn.other.test/file")
        let proposals = Fixtures.Recorder<URLRequest>()
        let policy = RedirectPolicy.decide { redirect in
            proposals.append(redirect.proposedRequest)
            return .follow
        }
        let call = Middleware.Call(
            headers: [
                HTTPHeader(name: "X-API-Key", value: "key-1"), HTTPHeader(name: "Cookie", value: "s=1"),
                HTTPHeader(name: "X-Trace", value: "t-1"),
            ],
            authorizationToken: .bearer(token: "secret"))
        _ = try await configured(transport, policy).request(call).value
        let proposed = try #require(proposals.values.first)
        #expect(proposed.url?.absoluteString == "https://cdn.other.test/file")
        #expect(proposed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(proposed.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(proposed.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(proposed.value(forHTTPHeaderField: "X-Trace") == "t-1")
        #expect(transport.requests.last.map { $0.value(forHTTPHeaderField: "Authorization") } == .some(nil))
    }

    @Test func decideSeesASameOriginProposalWithCredentialsKept() async throws {
        let transport = hops()
        let proposals = Fixtures.Recorder<URLRequest>()
        let policy = RedirectPolicy.decide { redirect in
            proposals.append(redirect.proposedRequest)
            return .follow
        }
        var call = hopCall(1)
        call.authorizationToken = .bearer(token: "secret")
        _ = try await configured(transport, policy).request(call).value
        #expect(proposals.values.first?.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
    }

    @Test func decideStopReturnsTheRedirectResponse() async throws {
        let transport = hops()
        let stop = RedirectPolicy.decide { _ in .stop }
        let result = await configured(transport, stop).request(hopCall(2)).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 302)
        #expect(transport.requests.count == 1)

        var accepting = hopCall(2)
        accepting.acceptableStatusCodes = 200..<400
        let response = try await configured(hops(), stop).response(accepting).value
        #expect(response.statusCode == 302)
        #expect(response.headers["Location"] == "/hop/1")
    }

    @Test func decideStopOnALaterHopReturnsThatHopsRedirect() async throws {
        let transport = hops()
        let policy = RedirectPolicy.decide { $0.hop < 2 ? .follow : .stop }
        var call = hopCall(3)
        call.acceptableStatusCodes = 200..<400
        let response = try await configured(transport, policy).response(call).value
        #expect(response.url?.path == "/hop/2")
        #expect(transport.requests.count == 2)
    }

    @Test func decideFollowWithSendsTheGivenRequestInstead() async throws {
        let transport = hops()
        let policy = RedirectPolicy.decide { redirect in
            var request = redirect.proposedRequest
            request.url = URL(string: "http://api.test/hop/0")
            request.setValue("chosen", forHTTPHeaderField: "X-Chosen")
            return .followWith(request)
        }
        let data = try await configured(transport, policy).request(hopCall(5)).value
        #expect(data == Data(#"{"final":true}"#.utf8))
        #expect(transport.requests.map { $0.url?.path } == ["/hop/5", "/hop/0"])
        #expect(transport.requests.last?.value(forHTTPHeaderField: "X-Chosen") == "chosen")
    }

    /// A `.followWith` request is made outside the build: a header the build would refuse fails
    /// the request, and it is not sent.
    @Test func decideFollowWithARequestWithAnInvalidHeaderFailsAndSendsNothingMore() async throws {
        let transport = hops()
        let policy = RedirectPolicy.decide { redirect in
            var request = redirect.proposedRequest
            request.allHTTPHeaderFields = ["X-Chosen": "a\r\nX-Injected: 1"]
            return .followWith(request)
        }
        let result = await configured(transport, policy).request(hopCall(5)).asyncResult
        #expect(invalidRequestReason(of: result) == .invalidHeader(name: "X-Chosen"))
        #expect(transport.requests.map { $0.url?.path } == ["/hop/5"])
    }

    /// A → B (the library drops A's credentials) → B again: a policy that copies A's
    /// `Authorization` into the second hop's request sent it to B, as it measured origins from the
    /// hop just answered. Credentials go only to the origin the request was built for.
    @Test func decideFollowWithKeepsCredentialsOnlyToTheOriginTheRequestWasBuiltFor() async throws {
        let transport = RecordingTransport { request in
            switch (request.url?.host, request.url?.path) {
            case ("api.test", "/start"): return Middleware.redirect("http://elsewhere.test/hop")
            case ("elsewhere.test", "/hop"): return Middleware.redirect("/next")
            case ("elsewhere.test", "/next"): return Middleware.redirect("http://api.test/back")
            default: return Fixtures.json("{}")
            }
        }
        let first = Recorder<URLRequest>()
        let policy = RedirectPolicy.decide { redirect in
            if redirect.hop == 1 { first.append(redirect.response.request) }
            // The easy mistake: copy the first request's credentials into every hop.
            var next = redirect.proposedRequest
            let original = first.values.first
            for name in ["Authorization", "X-API-Key"] {
                next.setValue(original?.value(forHTTPHeaderField: name), forHTTPHeaderField: name)
            }
            return .followWith(next)
        }
        let call = Middleware.Call(
            endpoint: "/start",
            headers: [.authorization(bearerToken: "secret"), HTTPHeader(name: "X-API-Key", value: "key")])
        _ = try await configured(transport, policy).request(call).value
        let sent = transport.requests.map {
            ($0.url?.absoluteString ?? "", $0.value(forHTTPHeaderField: "Authorization"))
        }
        #expect(
            sent.map(\.0) == [
                "http://api.test/start", "http://elsewhere.test/hop", "http://elsewhere.test/next",
                "http://api.test/back",
            ])
        #expect(sent.map(\.1) == ["Bearer secret", nil, nil, "Bearer secret"])
        #expect(transport.requests[2].value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test func decideFollowWithANonHTTPURLFailsAndSendsNothingMore() async throws {
        let transport = hops()
        let policy = RedirectPolicy.decide { redirect in
            var request = redirect.proposedRequest
            request.url = URL(string: "ftp://127.0.0.1:1/x")
            return .followWith(request)
        }
        let result = await configured(transport, policy).request(hopCall(5)).asyncResult
        #expect(invalidRequestReason(of: result) == .unsupportedURL("ftp://127.0.0.1:1/x"))
        #expect(transport.requests.map { $0.url?.path } == ["/hop/5"])
    }

    @Test func decideFollowWithARequestThatFramesItsBodyFailsAndSendsNothingMore() async throws {
        let transport = hops()
        let policy = RedirectPolicy.decide { redirect in
            var request = redirect.proposedRequest
            request.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding")
            return .followWith(request)
        }
        let result = await configured(transport, policy).request(hopCall(5)).asyncResult
        #expect(invalidRequestReason(of: result) == .reservedHeader(name: "Transfer-Encoding"))
        #expect(transport.requests.map { $0.url?.path } == ["/hop/5"])
    }

    /// Credential headers a `.followWith` request copies from the redirected request, and the same
    /// request sent to `target`.
    private func followingWith(to target: String) async throws -> URLRequest {
        let transport = RecordingTransport { request in
            request.url?.path == "/start" ? Middleware.redirect("/next") : Fixtures.json("{}")
        }
        let policy = RedirectPolicy.decide { redirect in
            // The easy mistake: start from the redirected request, credentials and all.
            var request = redirect.response.request
            request.url = URL(string: target)
            return .followWith(request)
        }
        let call = Middleware.Call(
            endpoint: "/start",
            headers: [
                .authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "session=1"),
                HTTPHeader(name: "Proxy-Authorization", value: "Basic cHJveHk="),
                HTTPHeader(name: "X-API-Key", value: "key"), HTTPHeader(name: "X-Trace", value: "kept"),
            ])
        _ = try await configured(transport, policy).request(call).value
        #expect(transport.requests.count == 2)
        return try #require(transport.requests.last)
    }

    @Test func decideFollowWithToAnotherOriginLosesTheCredentialsItCopied() async throws {
        let next = try await followingWith(to: "http://elsewhere.test/next")
        #expect(next.url?.host == "elsewhere.test")
        for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-API-Key"] {
            #expect(next.value(forHTTPHeaderField: name) == nil, "\(name) went to another origin")
        }
        #expect(next.value(forHTTPHeaderField: "X-Trace") == "kept")
    }

    @Test func decideFollowWithToTheSameOriginKeepsTheCredentials() async throws {
        let next = try await followingWith(to: "http://api.test/other")  // the calls' own origin
        #expect(next.url?.path == "/other")
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(next.value(forHTTPHeaderField: "Cookie") == "session=1")
        #expect(next.value(forHTTPHeaderField: "X-API-Key") == "key")
    }

    @Test func decideRespectsItsMaximumHops() async throws {
        let transport = hops()
        let asked = Fixtures.Counter()
        let policy = RedirectPolicy.decide(maximumHops: 1) { _ in
            asked.increment()
            return .follow
        }
        let result = await configured(transport, policy).request(hopCall(3)).asyncResult
        #expect(tooManyRedirects(result) != nil, "got \(result)")
        #expect(asked.value == 1)
        #expect(transport.requests.count == 2)
    }

    @Test func connectorPolicyOverridesTheConfigurations() async throws {
        let followed = hops()
        var follow = hopCall(1)
        follow.redirectPolicy = .follow
        let data = try await configured(followed, .doNotFollow).request(follow).value
        #expect(data == Data(#"{"final":true}"#.utf8))
        #expect(followed.requests.count == 2)

        let notFollowed = hops()
        var doNotFollow = hopCall(1)
        doNotFollow.redirectPolicy = .doNotFollow
        let result = await configured(notFollowed, .follow).request(doNotFollow).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 302)
        #expect(notFollowed.requests.count == 1)

        let limited = hops()
        var twoHops = hopCall(3)
        twoHops.redirectPolicy = .follow(maximumHops: 2)
        #expect(tooManyRedirects(await configured(limited, .follow).request(twoHops).asyncResult) != nil)
    }

    @Test func followedHopsDoNotRunTheAdaptersAgain() async throws {
        let transport = hops()
        let runs = Fixtures.Counter()
        let adapter = ClosureAdapter { request in
            runs.increment()
            return request
        }
        _ = try await configured(transport, .follow, middleware: ConnectMiddleware(adapters: [adapter]))
            .request(hopCall(3)).value
        #expect(runs.value == 1)
        #expect(transport.requests.count == 4)
    }
}

// MARK: - RetryResult.redirect(to:)

@Suite("RetryResult.redirect(to:)", timeLimit(minutes: 1))
struct RetrierRedirectTests {
    /// `api.test` answers 503 (or `status`); any other host answers `{"mirror":true}`.
    private func primaryDown(status: Int = 503) -> RecordingTransport {
        RecordingTransport { request in
            request.url?.host == "api.test" && request.url?.path == "/items"
                ? Fixtures.json(#"{"message":"moved"}"#, status: status) : Fixtures.json(#"{"mirror":true}"#)
        }
    }

    /// Redirects the first failure to `url`, never anything later.
    private func redirecting(to url: String, asked: Fixtures.Counter = Fixtures.Counter()) -> ClosureRetrier {
        ClosureRetrier { attempt in
            asked.increment()
            return attempt.number == 1 ? .redirect(to: URL(string: url)!) : .doNotRetry
        }
    }

    private func stamping(_ runs: Fixtures.Counter) -> ClosureAdapter {
        ClosureAdapter { request in
            var request = request
            request.setValue("\(runs.increment())", forHTTPHeaderField: "X-Attempt")
            return request
        }
    }

    private var post: Middleware.Call {
        Middleware.Call(
            method: .post,
            headers: [
                HTTPHeader(name: "X-API-Key", value: "key-1"), HTTPHeader(name: "Cookie", value: "s=1"),
                HTTPHeader(name: "X-Trace", value: "t-1"),
            ],
            parameters: Parameter.jsonObject(value: ["name": "kept"]),
            authorizationToken: .bearer(token: "secret"))
    }

    /// The build refuses a base URL that is not http(s) with a host; a retrier's URL is held to the
    /// same rule (libcurl would open an FTP connection, or read a local file).
    @Test(arguments: ["ftp://127.0.0.1:1/x", "file:///etc/hostname", "data:text/plain,x", "http:///x", "/relative"])
    func redirectToAURLTheBuildWouldRefuseFailsAndSendsNothingMore(url: String) async throws {
        let transport = primaryDown()
        let middleware = ConnectMiddleware(
            retriers: [
                ClosureRetrier { attempt in attempt.number == 1 ? .redirect(to: URL(string: url)!) : .doNotRetry }
            ])
        let result = await Middleware.connect(transport: transport, middleware: middleware).request(post).asyncResult
        #expect(invalidRequestReason(of: result) == .unsupportedURL(URL(string: url)!.absoluteString))
        #expect(transport.requests.count == 1)
    }

    /// A later attempt's `request` is the request as redirected: the retrier sees where the failure
    /// happened. Still before adapters: their headers are not in it.
    @Test func anAttemptAfterARedirectCarriesTheRedirectedURLAndNoAdapterHeaders() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"down"}"#, status: 503) }
        let seen = Recorder<URLRequest>()
        let middleware = ConnectMiddleware(
            adapters: [stamping(Fixtures.Counter())],
            retriers: [
                ClosureRetrier { attempt in
                    seen.append(attempt.request)
                    return attempt.number == 1
                        ? .redirect(to: URL(string: "http://mirror.test/v2/items")!) : .doNotRetry
                }
            ])
        _ = await Middleware.connect(transport: transport, middleware: middleware).request(post).asyncResult
        #expect(seen.values.map { $0.url?.absoluteString } == ["http://api.test/items", "http://mirror.test/v2/items"])
        #expect(seen.values.allSatisfy { $0.value(forHTTPHeaderField: "X-Attempt") == nil })
        #expect(seen.values.allSatisfy { $0.httpMethod == "POST" && $0.httpBody == Data(#"{"name":"kept"}"#.utf8) })
    }

    @Test func redirectToAnUppercaseSchemeGoesOutLowercased() async throws {
        let transport = primaryDown()
        let middleware = ConnectMiddleware(retriers: [redirecting(to: "HTTP://mirror.test/items")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        #expect(transport.requests.last?.url?.absoluteString == "http://mirror.test/items")
    }

    @Test func redirectResendsTheSameRequestAtTheNewURLThroughTheAdapters() async throws {
        let transport = primaryDown()
        let runs = Fixtures.Counter()
        let middleware = ConnectMiddleware(
            adapters: [stamping(runs)], retriers: [redirecting(to: "http://api.test/v2/items")])
        let data = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        #expect(data == Data(#"{"mirror":true}"#.utf8))
        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[1].url?.absoluteString == "http://api.test/v2/items")
        #expect(sent[1].httpMethod == "POST")
        #expect(sent[1].httpBody == sent[0].httpBody)
        #expect(sent[1].httpBody == Data(#"{"name":"kept"}"#.utf8))
        #expect(sent[1].value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(sent.map { $0.value(forHTTPHeaderField: "X-Attempt") } == ["1", "2"])
        #expect(runs.value == 2)
        // Same origin: the credentials stay.
        #expect(sent[1].value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(sent[1].value(forHTTPHeaderField: "X-API-Key") == "key-1")
    }

    @Test func redirectToAnotherOriginDropsTheCredentialHeaders() async throws {
        let transport = primaryDown()
        let middleware = ConnectMiddleware(retriers: [redirecting(to: "https://mirror.test/items")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[0].value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(sent[1].url?.host == "mirror.test")
        #expect(sent[1].httpMethod == "POST")
        #expect(sent[1].httpBody == Data(#"{"name":"kept"}"#.utf8))
        #expect(sent[1].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(sent[1].value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(sent[1].value(forHTTPHeaderField: "Cookie") == nil)
        #expect(sent[1].value(forHTTPHeaderField: "X-Trace") == "t-1")
    }

    /// Appends `items` (name, value) to every request's query, as an API-key adapter does.
    private func appendingQuery(_ items: [(String, String)]) -> ClosureAdapter {
        ClosureAdapter { request in
            var request = request
            var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            components.queryItems = (components.queryItems ?? []) + items.map { URLQueryItem(name: $0.0, value: $0.1) }
            request.url = components.url
            return request
        }
    }

    /// A key an adapter appends to the query is a credential as a header is: it stays with the
    /// origin of the first request. The adapter's other items go along, and so do the items of
    /// the URL the retrier chose — a pre-signed URL's signature, a key the retrier put there.
    @Test func aCredentialAnAdapterAddsToTheQueryStaysWithItsOrigin() async throws {
        let transport = primaryDown()
        let middleware = ConnectMiddleware(
            adapters: [
                appendingQuery([("api_key", "SECRET"), ("trace", "t1"), ("access_token", "T"), ("key", "AIza")])
            ],
            retriers: [redirecting(to: "https://mirror.test/items?sig=abc&api_key=MIRROR#top")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        #expect(
            transport.requests.map { $0.url?.absoluteString } == [
                "http://api.test/items?api_key=SECRET&trace=t1&access_token=T&key=AIza",
                "https://mirror.test/items?sig=abc&api_key=MIRROR&trace=t1#top",
            ])
    }

    /// Only what the adapters added goes: an item the retrier's URL has already is sent once, and a
    /// query left empty goes, `?` and all.
    @Test func onlyTheCredentialsTheAdaptersAddedLeaveTheQuery() async throws {
        let transport = RecordingTransport { request in
            request.url?.host == "other.test" ? Fixtures.json("{}") : Fixtures.json("{}", status: 503)
        }
        let middleware = ConnectMiddleware(
            adapters: [appendingQuery([("token", "a b")])],
            retriers: [
                ClosureRetrier { attempt in
                    switch attempt.number {
                    case 1: return .redirect(to: URL(string: "https://mirror.test/items?token=a%20b")!)
                    case 2: return .redirect(to: URL(string: "https://other.test/items")!)
                    default: return .doNotRetry
                    }
                }
            ])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        #expect(
            transport.requests.map { $0.url?.absoluteString } == [
                "http://api.test/items?token=a%20b",
                "https://mirror.test/items?token=a%20b",
                "https://other.test/items",
            ])
    }

    /// On the origin the first request went to, the adapters' query goes out whole.
    @Test func aCredentialAnAdapterAddsToTheQueryGoesAlongOnTheSameOrigin() async throws {
        let transport = primaryDown()
        let middleware = ConnectMiddleware(
            adapters: [appendingQuery([("api_key", "SECRET")])], retriers: [redirecting(to: "http://api.test/v2/items")]
        )
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        #expect(transport.requests.last?.url?.absoluteString == "http://api.test/v2/items?api_key=SECRET")
    }

    /// An adapter that moves every request (an `https` upgrade, a staging host) is the caller's
    /// own choice of origin: the credentials go there, the connector's and the adapters' alike.
    @Test func credentialsGoWhereTheAdaptersSendTheFirstRequest() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        let staging = ClosureAdapter { request in
            var request = request
            var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            (components.scheme, components.host) = ("https", "staging.api.test")
            request.url = components.url
            request.setValue("staging-key", forHTTPHeaderField: "X-Staging-Key")
            return request
        }
        // In a header of its own: the connector's `Authorization` would keep it from setting that.
        let authenticator = TokenAuthenticator(
            token: AccessToken("adapter-token"), header: { HTTPHeader(name: "X-Session", value: $0.value) },
            refresh: { _ in AccessToken("never") })
        let middleware = ConnectMiddleware(adapters: [staging, authenticator])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        let sent = try #require(transport.requests.first)
        #expect(sent.url?.absoluteString == "https://staging.api.test/items")
        #expect(sent.value(forHTTPHeaderField: "X-Session") == "adapter-token")
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(sent.value(forHTTPHeaderField: "X-API-Key") == "key-1")
        #expect(sent.value(forHTTPHeaderField: "Cookie") == "s=1")
        #expect(sent.value(forHTTPHeaderField: "X-Staging-Key") == "staging-key")
    }

    /// The origin the adapters chose first stays the only one: a retrier's redirect elsewhere,
    /// which the adapters move again, still goes without credentials.
    @Test func afterAnAdaptersUpgradeARedirectElsewhereStillDropsTheCredentials() async throws {
        let transport = RecordingTransport { request in
            request.url?.host == "api.test" ? Fixtures.json("{}", status: 503) : Fixtures.json("{}")
        }
        let upgrade = ClosureAdapter { request in
            var request = request
            var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            components.scheme = "https"
            request.url = components.url
            return request
        }
        let middleware = ConnectMiddleware(adapters: [upgrade], retriers: [redirecting(to: "http://mirror.test/items")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[0].url?.absoluteString == "https://api.test/items")
        #expect(sent[0].value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(sent[1].url?.absoluteString == "https://mirror.test/items")
        #expect(sent[1].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(sent[1].value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    /// A user and password in the URL go out as `Authorization: Basic`: Usage.md's mirror retrier,
    /// which changes only the host of the request it was given, kept them for the mirror.
    @Test func aUserAndPasswordInTheURLStayWithTheirOrigin() async throws {
        let transport = RecordingTransport { request in
            request.url?.host == "api.test" && request.url?.path == "/items"
                ? Fixtures.json(#"{"message":"down"}"#, status: 503) : Fixtures.json(#"{"mirror":true}"#)
        }
        let mirror = ClosureRetrier { attempt in
            guard attempt.number == 1, let url = attempt.request.url,
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return .doNotRetry }
            components.host = "mirror.test"
            return components.url.map { .redirect(to: $0) } ?? .doNotRetry
        }
        let call = Middleware.Call(baseURL: URL(string: "https://user:pass%40word@api.test")!, endpoint: "/items")
        _ = try await Middleware.connect(transport: transport, middleware: ConnectMiddleware(retriers: [mirror]))
            .request(call).value
        #expect(
            transport.requests.map { $0.url?.absoluteString } == [
                "https://user:pass%40word@api.test/items", "https://mirror.test/items",
            ])
    }

    @Test func credentialsAddedByAdaptersAreNotSentToAnotherOriginAfterARedirect() async throws {
        let transport = primaryDown()
        let authenticator = TokenAuthenticator(token: AccessToken("adapter-token")) { _ in AccessToken("never") }
        let middleware = ConnectMiddleware(
            adapters: [
                authenticator,
                ClosureAdapter { request in
                    var request = request
                    request.setValue("key-2", forHTTPHeaderField: "X-API-Key")
                    return request
                },
            ],
            retriers: [redirecting(to: "https://mirror.test/items")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware)
            .request(Middleware.Call()).value
        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[0].value(forHTTPHeaderField: "Authorization") == "Bearer adapter-token")
        #expect(sent[0].value(forHTTPHeaderField: "X-API-Key") == "key-2")
        #expect(sent[1].url?.host == "mirror.test")
        #expect(sent[1].value(forHTTPHeaderField: "Authorization") == nil)
        #expect(sent[1].value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    /// No request got past the adapters before the retrier redirected: the credentials belong to
    /// the origin the request was built for, not to the mirror it was sent to first.
    @Test func aRedirectAfterAnAdapterFailedStillDropsTheCredentials() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        let runs = Fixtures.Counter()
        let flaky = ClosureAdapter { request in
            if runs.increment() == 1 { throw URLError(.cannotConnectToHost) }  // a token fetch, say
            return request
        }
        let middleware = ConnectMiddleware(adapters: [flaky], retriers: [redirecting(to: "https://mirror.test/items")])
        _ = try await Middleware.connect(transport: transport, middleware: middleware).request(post).value
        let sent = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(sent.url?.host == "mirror.test")
        #expect(sent.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(sent.value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test func retriersAreAskedAgainAfterARedirectedAttemptFails() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let asked = Fixtures.Counter()
        let middleware = ConnectMiddleware(retriers: [redirecting(to: "http://api.test/elsewhere", asked: asked)])
        let result = await Middleware.connect(transport: transport, middleware: middleware)
            .request(Middleware.Call()).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        #expect(error.statusCode == 500)
        #expect(error.response?.request.url?.path == "/elsewhere")
        #expect(asked.value == 2)
        #expect(transport.requests.map { $0.url?.path } == ["/items", "/elsewhere"])
    }

    @Test func retrierThatAlwaysRedirectsStopsAtTheAttemptLimit() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}", status: 500) }
        let middleware = ConnectMiddleware(retriers: [
            ClosureRetrier { _ in .redirect(to: URL(string: "http://api.test/x")!) }
        ])
        let result = await Middleware.connect(transport: transport, middleware: middleware)
            .request(Middleware.Call()).asyncResult
        #expect((Fixtures.error(of: result) as? ConnectError)?.statusCode == 500)
        #expect((2...20).contains(transport.requests.count), "sent \(transport.requests.count) times")
    }
}
