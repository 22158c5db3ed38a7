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

    @Test(arguments: [HTTPMethod.get, .head])
    func getAndHeadDoNotAllowABody(method: HTTPMethod) {
        #expect(!method.allowsBody)
    }

    @Test(arguments: [
        HTTPMethod.post, .put, .patch, .delete, .options, .connect, .trace, .query, HTTPMethod(rawValue: "PROPFIND"),
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
    /// the request is built with the name that goes out, and checked and retried as that method.
    @Test(arguments: [
        ("get", HTTPMethod.get), ("Head", .head), ("post", .post), ("pUt", .put), ("delete", .delete),
        ("connect", .connect),
    ])
    func standardNamesInAnotherCaseAreBuiltCheckedAndRetriedAsSent(name: String, sent: HTTPMethod) throws {
        let method = HTTPMethod(rawValue: name)
        #expect(method.sent == sent)
        #expect(method.allowsBody == sent.allowsBody)
        #expect(method.isIdempotent == sent.isIdempotent)
        let request = try TestConnector(baseURL: URL(string: "https://h.test")!, method: method).asURLRequest()
        #expect(request.httpMethod == sent.rawValue)
    }

    @Test(arguments: ["get", "head", "HEAD", "Get"])
    func aBodyOnGetOrHeadInAnyCaseIsRejectedBeforeSending(name: String) async {
        let connector = TestConnector(
            baseURL: URL(string: "https://h.test")!, method: HTTPMethod(rawValue: name),
            parameters: Parameter.jsonObject(value: ["a": 1]))
        let reason = InvalidRequestReason.bodyNotAllowed(method: name.uppercased())
        #expect(rejectionReason(building: connector) == reason)
        await expectRejectedBeforeSending(connector, with: reason)
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
}
