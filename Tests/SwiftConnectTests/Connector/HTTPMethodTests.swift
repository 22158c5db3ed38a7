import Foundation
import Testing

@testable import SwiftConnect

@Suite("HTTPMethod")
struct HTTPMethodTests {
    @Test(arguments: [
        (HTTPMethod.connect, "CONNECT"), (.delete, "DELETE"), (.get, "GET"), (.head, "HEAD"),
        (.options, "OPTIONS"), (.patch, "PATCH"), (.post, "POST"), (.put, "PUT"), (.query, "QUERY"),
        (.trace, "TRACE"),
    ])
    func standardMethodsHaveTheirWireNames(method: HTTPMethod, name: String) {
        #expect(method.rawValue == name)
        #expect(method.description == name)
        #expect(HTTPMethod(rawValue: name) == method)
    }

    @Test func namesAreCaseSensitive() {
        #expect(HTTPMethod(rawValue: "get") != .get)
    }

    /// RFC 9110: GET and HEAD content has no meaning, and a client must not send any with TRACE
    /// (§9.3.8) or CONNECT (§9.3.6).
    @Test(arguments: [HTTPMethod.get, .head, .trace, .connect])
    func getHeadTraceAndConnectDoNotAllowABody(method: HTTPMethod) {
        #expect(!method.allowsBody)
    }

    @Test(arguments: [
        HTTPMethod.post, .put, .patch, .delete, .options, .query, HTTPMethod(rawValue: "PROPFIND"),
        HTTPMethod(rawValue: "trace"),
    ])
    func otherMethodsAllowABody(method: HTTPMethod) {
        #expect(method.allowsBody)
    }

    @Test(arguments: [HTTPMethod.get, .head, .put, .delete, .options, .trace, .query])
    func safeAndIdempotentMethodsAreIdempotent(method: HTTPMethod) {
        #expect(method.isIdempotent)
    }

    @Test(arguments: [HTTPMethod.post, .patch, .connect, HTTPMethod(rawValue: "PROPFIND")])
    func otherMethodsAreNotIdempotent(method: HTTPMethod) {
        #expect(!method.isIdempotent)
    }

    @Test(arguments: [
        HTTPMethod.put, .delete, .patch, HTTPMethod(rawValue: "PROPFIND"), HTTPMethod(rawValue: "M-SEARCH"),
    ])
    func methodIsSentByItsWireName(method: HTTPMethod) throws {
        let request = try TestConnector(baseURL: URL(string: "https://h.test")!, method: method).asURLRequest()
        #expect(request.httpMethod == method.rawValue)
    }

    /// URLSession sends GET, HEAD, POST, PUT, DELETE and CONNECT in uppercase whatever their case:
    /// the request is built with the name that goes out, and checked and retried as that method
    /// (`connect` is refused as CONNECT is: ``connectIsRejectedBeforeSending(name:)``).
    @Test(arguments: [
        ("get", HTTPMethod.get), ("Head", .head), ("post", .post), ("pUt", .put), ("delete", .delete),
    ])
    func standardNamesInAnotherCaseAreBuiltCheckedAndRetriedAsSent(name: String, sent: HTTPMethod) throws {
        let method = HTTPMethod(rawValue: name)
        #expect(method.sent == sent)
        #expect(method.allowsBody == sent.allowsBody)
        #expect(method.isIdempotent == sent.isIdempotent)
        let request = try TestConnector(baseURL: URL(string: "https://h.test")!, method: method).asURLRequest()
        #expect(request.httpMethod == sent.rawValue)
    }

    @Test(arguments: ["get", "head", "HEAD", "Get", "TRACE"])
    func aBodyOnGetHeadOrTraceIsRejectedBeforeSending(name: String) async {
        let connector = TestConnector(
            baseURL: URL(string: "https://h.test")!, method: HTTPMethod(rawValue: name),
            parameters: Parameter.jsonObject(value: ["a": 1]))
        let reason = InvalidRequestReason.bodyNotAllowed(method: name.uppercased())
        #expect(rejectionReason(building: connector) == reason)
        await expectRejectedBeforeSending(connector, with: reason)
    }

    /// URLSession sends `trace` as written, and method names are case-sensitive (RFC 9110 §9.1): it
    /// is a method of its own, not TRACE, and may carry a body (Usage.md says so).
    @Test(arguments: ["trace", "Trace"])
    func traceInAnotherCaseIsAMethodOfItsOwnAndTakesABody(name: String) throws {
        let connector = TestConnector(
            baseURL: URL(string: "https://h.test")!, method: HTTPMethod(rawValue: name),
            parameters: Parameter.form(key: "k", value: "v"))
        let request = try connector.asURLRequest()
        #expect(request.httpMethod == name)
        #expect(request.httpBody == Data("k=v".utf8))
    }

    @Test(arguments: ["patch", "options", "trace", "query", "propfind", "GETS", "GE", "ge\u{74}x"])
    func otherNamesAreSentAsGiven(name: String) throws {
        let method = HTTPMethod(rawValue: name)
        #expect(method.sent == method)
        let request = try TestConnector(baseURL: URL(string: "https://h.test")!, method: method).asURLRequest()
        #expect(request.httpMethod == name)
    }

    @Test(arguments: ["", "GET ALL", "GET\r\n", "PÜT", "GE(T)", "POST/1", "\u{0}"])
    func invalidTokenIsRejectedBeforeSending(name: String) async {
        let connector = TestConnector(baseURL: URL(string: "https://h.test")!, method: HTTPMethod(rawValue: name))
        #expect(rejectionReason(building: connector) == .invalidMethod(name))
        await expectRejectedBeforeSending(connector, with: .invalidMethod(name))
    }

    /// The usual methods are answered without reading their bytes: every one but CONNECT can be
    /// sent, and so can names that only start like CONNECT or have its length.
    @Test func everyMethodButConnectIsSendable() {
        let methods: [HTTPMethod] = [.get, .post, .put, .delete, .patch, .head, .options, .trace, .query]
        for method in methods { #expect(method.isSendable, "\(method)") }
        #expect(!HTTPMethod.connect.isSendable)
        for name in ["CONNECX", "CONNECTS", "CONNEC", "PROPFIND", "M-SEARCH"] {
            #expect(HTTPMethod(rawValue: name).isSendable, "\(name)")
        }
    }

    /// CONNECT's target is a `host:port` (RFC 9110 §9.3.6), which a URL's path cannot give: the
    /// request would go out as `CONNECT /path HTTP/1.1`, which no server can answer.
    @Test(arguments: ["CONNECT", "connect"])
    func connectIsRejectedBeforeSending(name: String) async {
        #expect(HTTPMethod(rawValue: name).sent == .connect)
        let connector = TestConnector(baseURL: URL(string: "https://h.test")!, method: HTTPMethod(rawValue: name))
        #expect(rejectionReason(building: connector) == .invalidMethod("CONNECT"))
        await expectRejectedBeforeSending(connector, with: .invalidMethod("CONNECT"))
        #expect(InvalidRequestReason.invalidMethod("CONNECT").description.contains("tunnel"))
        #expect(InvalidRequestReason.invalidMethod("GET X").description == "'GET X' is not a valid HTTP method")
    }
}
