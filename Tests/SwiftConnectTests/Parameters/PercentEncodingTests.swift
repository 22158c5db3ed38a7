import Foundation
import Testing

@testable import SwiftConnect

@Suite("PercentEncoding")
struct PercentEncodingTests {
    /// Characters that must never survive unencoded in a path value or a query component, with
    /// their UTF-8 percent-encoding (uppercase hex).
    static let reservedAndNonASCII: [(raw: String, encoded: String)] = [
        ("/", "%2F"), ("?", "%3F"), ("#", "%23"), ("%", "%25"), (" ", "%20"),
        ("+", "%2B"), ("&", "%26"), ("=", "%3D"), (";", "%3B"), (":", "%3A"),
        ("@", "%40"), (",", "%2C"), ("{", "%7B"), ("}", "%7D"), ("\"", "%22"),
        ("é", "%C3%A9"), ("日本", "%E6%97%A5%E6%9C%AC"), ("😀", "%F0%9F%98%80"),
        ("\u{0}", "%00"), ("\n", "%0A"),
    ]

    // MARK: Path values

    @Test func unreservedCharactersAreKeptInPathValues() {
        let unreserved = "ABCXYZabcxyz0189-._~"
        #expect(PercentEncoding.pathValue(unreserved) == unreserved)
    }

    @Test(arguments: reservedAndNonASCII)
    func pathValueEncodesReservedAndNonASCIIAsUTF8(raw: String, encoded: String) {
        #expect(PercentEncoding.pathValue(raw) == encoded)
        #expect(PercentEncoding.pathValue("a\(raw)b") == "a\(encoded)b")
    }

    @Test(arguments: [(".", "%2E"), ("..", "%2E%2E")])
    func dotSegmentValuesAreEncoded(value: String, encoded: String) {
        #expect(PercentEncoding.pathValue(value) == encoded)
    }

    @Test func dotsInsideLongerValuesAreKept() {
        #expect(PercentEncoding.pathValue("...") == "...")
        #expect(PercentEncoding.pathValue("v1.2") == "v1.2")
    }

    @Test func escapeLookalikesInValuesAreEncodedAgain() {
        // A value is literal text: "%2F" is three characters, not an encoded slash.
        #expect(PercentEncoding.pathValue("%2F") == "%252F")
        #expect(PercentEncoding.pathValue("a%20b") == "a%2520b")
    }

    @Test func decomposedCharactersAreEncodedByteByByte() {
        // "e" + COMBINING ACUTE ACCENT stays two scalars; each is encoded on its own.
        #expect(PercentEncoding.pathValue("e\u{301}") == "e%CC%81")
    }

    // MARK: Query components

    @Test(arguments: reservedAndNonASCII)
    func queryComponentEncodesReservedAndNonASCIIAsUTF8(raw: String, encoded: String) {
        #expect(PercentEncoding.queryComponent(raw) == encoded)
    }

    @Test func queryStringKeepsOrderAndRepeatedNames() {
        let items = [
            URLQueryItem(name: "tag", value: "b"), URLQueryItem(name: "page", value: "2"),
            URLQueryItem(name: "tag", value: "a"),
        ]
        #expect(PercentEncoding.queryString(items) == "tag=b&page=2&tag=a")
    }

    @Test func queryStringEncodesNamesAndValues() {
        let items = [URLQueryItem(name: "a&b=c", value: "1+1=2 & more")]
        #expect(PercentEncoding.queryString(items) == "a%26b%3Dc=1%2B1%3D2%20%26%20more")
    }

    @Test func queryItemWithoutValueIsSentAsNameAlone() {
        let items = [URLQueryItem(name: "flag", value: nil), URLQueryItem(name: "empty", value: "")]
        #expect(PercentEncoding.queryString(items) == "flag&empty=")
    }

    @Test func formEncodingEncodesSpacesAsPercent20AndPlusAsPercent2B() {
        let fields = [URLQueryItem(name: "full name", value: "Ada Lovelace"), URLQueryItem(name: "sum", value: "1+1")]
        #expect(PercentEncoding.formEncoded(fields) == "full%20name=Ada%20Lovelace&sum=1%2B1")
    }

    // MARK: Developer-written literals

    @Test func pathLiteralKeepsSubDelimitersColonAtAndSlash() {
        let literal = "/a:b@c;d=e,f+g!h$i&j'k(l)m*n/"
        #expect(PercentEncoding.encode(literal, keeping: .pathLiteral) == literal)
    }

    @Test func pathLiteralEncodesQuestionMarkHashSpaceAndNonASCII() {
        let encoded = PercentEncoding.encode("/caf é?#", keeping: .pathLiteral)
        #expect(encoded == "/caf%20%C3%A9%3F%23")
    }

    @Test func queryLiteralKeepsQuestionMarkAndSlash() {
        #expect(PercentEncoding.encode("a=/b?c", keeping: .queryLiteral) == "a=/b?c")
        #expect(PercentEncoding.encode("a=#", keeping: .queryLiteral) == "a=%23")
    }

    @Test func keepingEscapesKeepsOnlyWellFormedEscapes() {
        let encoded = PercentEncoding.encode("a%20b%zz%4", keepingEscapes: true, keeping: .pathLiteral)
        #expect(encoded == "a%20b%25zz%254")
    }

    @Test func withoutKeepingEscapesEveryPercentIsEncoded() {
        #expect(PercentEncoding.encode("a%20b", keeping: .pathLiteral) == "a%2520b")
    }

    @Test func trailingEscapeIsKept() {
        #expect(PercentEncoding.encode("a%2F", keepingEscapes: true, keeping: .pathLiteral) == "a%2F")
    }
}
