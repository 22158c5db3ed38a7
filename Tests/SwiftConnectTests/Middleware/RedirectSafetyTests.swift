import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pure rules `Connect` follows redirects by; HTTPURLResponse and URLRequest values are built
/// by hand, no sockets.
@Suite("RedirectSafety")
struct RedirectSafetyTests {
    private static func url(_ string: String) -> URL { URL(string: string)! }

    private static func redirect(_ status: Int, from: String, to location: String?) -> HTTPURLResponse {
        HTTPURLResponse(
            url: url(from), statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: location.map { ["Location": $0] } ?? [:])!
    }

    /// A request with credentials, a cookie, a content type and a JSON body.
    private static func original(_ string: String, method: String = "POST") -> URLRequest {
        var request = URLRequest(url: url(string))
        request.httpMethod = method
        request.httpBody = Data(#"{"name":"kept"}"#.utf8)
        request.setValue("Bearer top-secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=abc", forHTTPHeaderField: "Cookie")
        request.setValue("Basic cHJveHk6cHc=", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("trace-1", forHTTPHeaderField: "X-Trace")
        return request
    }

    private static func follow(_ status: Int, from previous: URLRequest, to location: String?) -> URLRequest? {
        RedirectSafety.request(
            following: redirect(status, from: previous.url!.absoluteString, to: location), from: previous)
    }

    // MARK: isSameOrigin

    @Test(arguments: [
        ("http://api.test/a", "http://api.test/b?x=1"),
        ("http://api.test/a", "http://api.test:80/b"),
        ("https://api.test/a", "https://api.test:443/b"),
        ("https://API.Test/a", "https://api.test/b"),
        ("HTTPS://api.test/a", "https://api.test/b"),
        ("http://api.test:8080/a", "http://api.test:8080/b"),
    ])
    func sameOriginIncludingDefaultPorts(lhs: String, rhs: String) {
        #expect(RedirectSafety.isSameOrigin(Self.url(lhs), Self.url(rhs)))
        #expect(RedirectSafety.isSameOrigin(Self.url(rhs), Self.url(lhs)))
    }

    @Test(arguments: [
        ("http://api.test/a", "https://api.test/a"),
        ("https://api.test/a", "https://evil.test/a"),
        ("https://api.test/a", "https://sub.api.test/a"),
        ("http://api.test/a", "http://api.test:8080/a"),
        ("https://api.test/a", "https://api.test:80/a"),
        ("http://api.test:443/a", "https://api.test/a"),
    ])
    func differentSchemeHostOrPortIsAnotherOrigin(lhs: String, rhs: String) {
        #expect(!RedirectSafety.isSameOrigin(Self.url(lhs), Self.url(rhs)))
    }

    @Test func missingURLIsNeverTheSameOrigin() {
        #expect(!RedirectSafety.isSameOrigin(nil, Self.url("http://api.test")))
        #expect(!RedirectSafety.isSameOrigin(Self.url("http://api.test"), nil))
        #expect(!RedirectSafety.isSameOrigin(nil, nil))
    }

    // MARK: Credentials

    /// URLSession sends a URL's user and password as `Authorization: Basic`.
    @Test(arguments: [
        ("https://u:p@other.test/x?q=1#f", "https://other.test/x?q=1#f"),
        ("https://u@other.test:8443", "https://other.test:8443"),
        ("https://a@b:c%40d@other.test/x@y", "https://other.test/x@y"),
        ("https://u:p@api.test:444/x", "https://api.test:444/x"),
    ])
    func aUserAndPasswordInTheURLAreRemovedOnTheWayToAnotherOrigin(url: String, stripped: String) {
        let request = URLRequest(url: Self.url(url))
        let sent = RedirectSafety.removingCredentials(from: request, unlessSentTo: Self.url("https://api.test/a"))
        #expect(sent.url?.absoluteString == stripped)
    }

    @Test func aUserAndPasswordInTheURLStayOnTheSameOrigin() throws {
        let next = try #require(Self.follow(302, from: Self.original("https://u:p@api.test/a"), to: "/b"))
        #expect(next.url?.absoluteString == "https://u:p@api.test/b")
        let away = try #require(
            Self.follow(307, from: Self.original("https://api.test/a"), to: "https://u:p@other.test/b"))
        #expect(away.url?.absoluteString == "https://other.test/b")
    }

    /// A `Host` set by hand names the first server: it goes no further than that origin (it went
    /// on, and the other server was asked for the first one's site).
    @Test(arguments: [301, 302, 303, 307, 308])
    func aHandSetHostIsLeftOutOnARedirectToAnotherOrigin(status: Int) throws {
        var original = Self.original("https://api.test/a")
        original.setValue("api.test", forHTTPHeaderField: "Host")
        let away = try #require(Self.follow(status, from: original, to: "https://cdn.other.test/x"))
        #expect(away.value(forHTTPHeaderField: "Host") == nil)
        #expect(away.value(forHTTPHeaderField: "X-Trace") == "trace-1")
        let same = try #require(Self.follow(status, from: original, to: "/b"))
        #expect(same.value(forHTTPHeaderField: "Host") == "api.test")
    }

    @Test func aURLWithoutUserInformationIsLeftAsItIs() {
        #expect(Self.url("https://other.test/x@y?a=@#@").removingUserInfo == nil)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func credentialHeadersAreStrippedOnARedirectToAnotherOrigin(status: Int) throws {
        let request = try #require(
            Self.follow(status, from: Self.original("https://api.test/login"), to: "https://cdn.other.test/x"))
        #expect(request.url == Self.url("https://cdn.other.test/x"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(request.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(request.value(forHTTPHeaderField: "Proxy-Authorization") == nil)
        #expect(request.value(forHTTPHeaderField: "X-Trace") == "trace-1")
    }

    @Test func credentialHeadersAreStrippedWhateverTheirCase() throws {
        var previous = URLRequest(url: Self.url("http://api.test/a"))
        previous.setValue("Bearer lower-case", forHTTPHeaderField: "authorization")
        previous.setValue("c=1", forHTTPHeaderField: "COOKIE")
        let request = try #require(Self.follow(302, from: previous, to: "http://other.test/b"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(request.value(forHTTPHeaderField: "Cookie") == nil)
    }

    @Test(arguments: [
        "X-API-Key", "X-Auth-Token", "X-Client-Secret", "Api_Key", "X-Auth-Key", "Ocp-Apim-Subscription-Key",
        "X-Access-Key", "X-Credentials", "X-Authentication",
    ])
    func credentialLikeHeadersAreStrippedOnARedirectToAnotherOrigin(name: String) throws {
        var previous = URLRequest(url: Self.url("https://api.test/a"))
        previous.setValue("credential-value", forHTTPHeaderField: name)
        previous.setValue("application/json", forHTTPHeaderField: "Accept")
        let request = try #require(Self.follow(302, from: previous, to: "https://other.test/b"))
        #expect(request.value(forHTTPHeaderField: name) == nil)
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/json")
    }

    @Test func credentialLikeHeadersAreKeptOnTheSameOrigin() throws {
        var previous = URLRequest(url: Self.url("https://api.test/a"))
        previous.setValue("key-1", forHTTPHeaderField: "X-API-Key")
        let request = try #require(Self.follow(302, from: previous, to: "/b"))
        #expect(request.value(forHTTPHeaderField: "X-API-Key") == "key-1")
    }

    @Test func httpsToHttpOnTheSameHostIsAnotherOriginAndLosesCredentials() throws {
        let request = try #require(
            Self.follow(302, from: Self.original("https://api.test/a", method: "GET"), to: "http://api.test/a"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func credentialHeadersAreKeptOnASameOriginRedirect(status: Int) throws {
        let request = try #require(
            Self.follow(status, from: Self.original("https://api.test/v1/login"), to: "https://api.test:443/v2/login"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer top-secret")
        #expect(request.value(forHTTPHeaderField: "Cookie") == "session=abc")
        #expect(request.value(forHTTPHeaderField: "Proxy-Authorization") == "Basic cHJveHk6cHc=")
    }

    @Test func relativeLocationStaysOnTheOriginAndKeepsCredentials() throws {
        let request = try #require(
            Self.follow(302, from: Self.original("https://api.test/v1/a", method: "GET"), to: "/v2/b?x=1"))
        #expect(request.url == Self.url("https://api.test/v2/b?x=1"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer top-secret")
    }

    // MARK: Method and body

    @Test(arguments: [307, 308])
    func temporaryAndPermanentRedirectKeepMethodAndBody(status: Int) throws {
        let request = try #require(
            Self.follow(status, from: Self.original("https://api.test/upload"), to: "https://api.test/upload-here"))
        #expect(request.httpMethod == "POST")
        #expect(request.httpBody == Data(#"{"name":"kept"}"#.utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test(arguments: ["PUT", "PATCH", "DELETE"], [307, 308])
    func temporaryAndPermanentRedirectKeepEveryMethod(method: String, status: Int) throws {
        let request = try #require(
            Self.follow(status, from: Self.original("https://api.test/r", method: method), to: "https://api.test/s"))
        #expect(request.httpMethod == method)
        #expect(request.httpBody == Data(#"{"name":"kept"}"#.utf8))
    }

    @Test(arguments: [307, 308])
    func crossOriginTemporaryRedirectKeepsMethodAndBodyButNotCredentials(status: Int) throws {
        let request = try #require(
            Self.follow(status, from: Self.original("https://api.test/upload"), to: "https://storage.test/put"))
        #expect(request.httpMethod == "POST")
        #expect(request.httpBody == Data(#"{"name":"kept"}"#.utf8))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test(arguments: [301, 302, 303])
    func postBecomesGetWithoutBodyOnAMovedFoundOrSeeOther(status: Int) throws {
        let request = try #require(Self.follow(status, from: Self.original("https://api.test/form"), to: "/result"))
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    /// The headers that describe the body leave with it (RFC 9110 §15.4): a `Content-Encoding:
    /// gzip` on a GET with no body tells the server to inflate nothing, a `Content-Digest` checks
    /// bytes that are not there.
    @Test(arguments: [301, 302, 303])
    func theBodysHeadersLeaveWithIt(status: Int) throws {
        var original = Self.original("https://api.test/form")
        let described = [
            "Content-Encoding": "gzip", "Content-Length": "17", "content-language": "de",
            "Content-Location": "/drafts/1", "Content-Range": "bytes 0-16/17",
            "Content-MD5": "Q2hlY2sgSW50ZWdyaXR5IQ==",
            "Content-Digest": "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
            "Repr-Digest": "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:",
            "Digest": "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
            "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
        ]
        for (name, value) in described { original.setValue(value, forHTTPHeaderField: name) }
        original.setValue("kept", forHTTPHeaderField: "X-Request-Tag")
        let request = try #require(Self.follow(status, from: original, to: "/result"))
        #expect(request.httpMethod == "GET")
        for name in ["Content-Type"] + described.keys {
            #expect(request.value(forHTTPHeaderField: name) == nil, "\(name)")
        }
        #expect(request.value(forHTTPHeaderField: "X-Request-Tag") == "kept")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer top-secret")
    }

    @Test func seeOtherKeepsHead() throws {
        var previous = URLRequest(url: Self.url("https://api.test/a"))
        previous.httpMethod = "HEAD"
        let request = try #require(Self.follow(303, from: previous, to: "/b"))
        #expect(request.httpMethod == "HEAD")
    }

    @Test func movedKeepsAPut() throws {
        let request = try #require(Self.follow(301, from: Self.original("https://api.test/a", method: "PUT"), to: "/b"))
        #expect(request.httpMethod == "PUT")
        #expect(request.httpBody == Data(#"{"name":"kept"}"#.utf8))
    }

    // MARK: Not followed

    @Test(arguments: [200, 300, 304, 305, 400])
    func nonRedirectStatusIsNotFollowed(status: Int) {
        #expect(Self.follow(status, from: Self.original("https://api.test/a"), to: "/b") == nil)
    }

    @Test func redirectWithoutLocationIsNotFollowed() {
        #expect(Self.follow(302, from: Self.original("https://api.test/a"), to: nil) == nil)
        #expect(Self.follow(302, from: Self.original("https://api.test/a"), to: "") == nil)
    }

    @Test(arguments: ["ftp://files.test/x", "file:///etc/passwd", "javascript:alert(1)"])
    func redirectToANonHTTPSchemeIsNotFollowed(location: String) {
        #expect(Self.follow(302, from: Self.original("https://api.test/a"), to: location) == nil)
    }

    /// A `Location` the transport could only fail on (no host, a port no connection can use) is
    /// not usable, as a non-HTTP one is not: the `3xx` is the response. It was sent, and failed
    /// as a transport error ("HTTP URL must have a host", "Couldn't connect to server").
    @Test(arguments: [
        "https://", "http:///x", "https:///x?y=1", "http://:8080/x", "http://other.test:0/x",
        "http://other.test:65536/x", "http://other.test:99999/x",
    ])
    func redirectToAURLWithoutAUsableHostOrPortIsNotFollowed(location: String) {
        #expect(Self.follow(302, from: Self.original("https://api.test/a"), to: location) == nil)
        #expect(Self.follow(307, from: Self.original("https://api.test/a"), to: location) == nil)
    }

    @Test(arguments: ["http://other.test:1/x", "http://other.test:65535/x", "http://other.test:/x"])
    func redirectToAUsablePortIsFollowed(location: String) throws {
        let next = try #require(Self.follow(302, from: Self.original("https://api.test/a"), to: location))
        #expect(next.url?.absoluteString == location)
    }

    /// URLSession on Linux refuses `HTTP://`: a `Location` with an uppercase scheme is followed
    /// with the same scheme in lowercase.
    @Test(arguments: ["HTTP://api.test/b", "Http://api.test/b"])
    func aLocationWithAnUppercaseSchemeIsFollowedLowercased(location: String) throws {
        let next = try #require(Self.follow(302, from: Self.original("http://api.test/a", method: "GET"), to: location))
        #expect(next.url?.absoluteString == "http://api.test/b")
        // The same origin: credentials stay.
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer top-secret")
    }

    // MARK: Authentication challenges

    @Test(arguments: [NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest])
    func basicAndDigestChallengesAreServerAuthentication(method: String) {
        #expect(RedirectSafety.isServerAuthentication(method))
    }

    @Test func serverTrustChallengeIsNotServerAuthentication() {
        #expect(!RedirectSafety.isServerAuthentication("NSURLAuthenticationMethodServerTrust"))
        #expect(!RedirectSafety.isServerAuthentication("NSURLAuthenticationMethodClientCertificate"))
    }
}
