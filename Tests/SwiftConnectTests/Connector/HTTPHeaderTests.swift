import Foundation
import Testing

@testable import SwiftConnect

@Suite("HTTPHeader")
struct HTTPHeaderTests {
    @Test func namedConstructorsUseTheStandardNames() {
        #expect(HTTPHeader.accept("application/json") == HTTPHeader(name: "Accept", value: "application/json"))
        #expect(HTTPHeader.acceptEncoding("gzip") == HTTPHeader(name: "Accept-Encoding", value: "gzip"))
        #expect(HTTPHeader.acceptLanguage("fr") == HTTPHeader(name: "Accept-Language", value: "fr"))
        #expect(HTTPHeader.authorization("Token x") == HTTPHeader(name: "Authorization", value: "Token x"))
        #expect(HTTPHeader.contentDisposition("inline") == HTTPHeader(name: "Content-Disposition", value: "inline"))
        #expect(HTTPHeader.contentType("text/csv") == HTTPHeader(name: "Content-Type", value: "text/csv"))
        #expect(HTTPHeader.userAgent("demo/1") == HTTPHeader(name: "User-Agent", value: "demo/1"))
    }

    @Test func bearerAuthorizationPrefixesTheToken() {
        #expect(
            HTTPHeader.authorization(bearerToken: "abc.def")
                == HTTPHeader(name: "Authorization", value: "Bearer abc.def"))
    }

    @Test(arguments: [
        ("Aladdin", "open sesame", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),  // RFC 7617's example
        ("user", "pa:ss", "dXNlcjpwYTpzcw=="),  // only the first colon separates
        ("José", "p€ss", "Sm9zw6k6cOKCrHNz"),  // UTF-8
    ])
    func basicAuthorizationIsBase64OfUserColonPassword(username: String, password: String, base64: String) {
        let header = HTTPHeader.authorization(username: username, password: password)
        #expect(header.name == "Authorization")
        #expect(header.value == "Basic \(base64)")
    }

    @Test func descriptionIsNameColonValue() {
        #expect(HTTPHeader(name: "X-Trace", value: "1 2").description == "X-Trace: 1 2")
    }

    @Test(arguments: ["X-Trace", "accept", "a!#$%&'*+-.^_`|~z", "X1"])
    func tokenNamesAreValid(name: String) {
        #expect(HTTPHeader(name: name, value: "v").isValid)
    }

    @Test(arguments: ["", "X Trace", "X-Trace:", "X(1)", "a/b", "Noté", "X\u{0}", "X\r", "[x]", "a=b", "\"q\""])
    func nonTokenNamesAreInvalid(name: String) {
        #expect(!HTTPHeader(name: name, value: "v").isValid)
    }

    @Test(arguments: [
        "a\rb", "a\nb", "a\r\nX-Injected: 1", "a\u{0}b", "\n", "trailing\r", "bell\u{7}", "\u{1B}[31m", "del\u{7F}",
        "\u{1F}",
    ])
    func valuesWithAControlCharacterOtherThanTabAreInvalid(value: String) {
        #expect(!HTTPHeader(name: "X-Note", value: value).isValid)
    }

    @Test(arguments: ["", "plain", "tab\there", "ünïcödé", "a: b; c=d, \"e\""])
    func otherValuesAreValid(value: String) {
        #expect(HTTPHeader(name: "X-Note", value: value).isValid)
    }

    @Test func invalidHeaderFailsTheRequestNamingTheHeader() async {
        let connector = TestConnector(
            baseURL: URL(string: "https://h.test")!,
            headers: [.accept("application/json"), HTTPHeader(name: "X-Note", value: "a\r\nSet-Cookie: x=1")])
        #expect(rejectionReason(building: connector) == .invalidHeader(name: "X-Note"))
        await expectRejectedBeforeSending(connector, with: .invalidHeader(name: "X-Note"))
    }
}
