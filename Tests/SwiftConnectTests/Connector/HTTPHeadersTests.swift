import Foundation
import Testing

@testable import SwiftConnect

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test(arguments: ["Content-Type", "content-type", "CONTENT-TYPE", "cOnTeNt-TyPe"])
    func lookupIgnoresCase(name: String) {
        let headers: HTTPHeaders = [.contentType("application/json")]
        #expect(headers[name] == "application/json")
        #expect(headers.value(for: name) == "application/json")
    }

    @Test func lookupOfAMissingHeaderIsNil() {
        let headers: HTTPHeaders = [.accept("*/*")]
        #expect(headers["Accept-Language"] == nil)
        #expect(headers["Accep"] == nil)
    }

    @Test func updateReplacesInPlaceKeepingTheOrder() {
        var headers: HTTPHeaders = [.accept("*/*"), .authorization("old"), .userAgent("ua")]
        headers.update(name: "authorization", value: "new")
        #expect(headers.map(\.name) == ["Accept", "authorization", "User-Agent"])
        #expect(headers.map(\.value) == ["*/*", "new", "ua"])
        #expect(headers.count == 3)
    }

    @Test func updateAppendsANewHeaderAtTheEnd() {
        var headers: HTTPHeaders = [.accept("*/*")]
        headers.update(.userAgent("ua"))
        #expect(headers.map(\.name) == ["Accept", "User-Agent"])
    }

    @Test func laterHeaderOfTheSameNameReplacesTheEarlierAtItsPosition() {
        let headers = HTTPHeaders([.accept("a"), .userAgent("ua"), HTTPHeader(name: "ACCEPT", value: "b")])
        #expect(headers.count == 2)
        #expect(headers.map(\.value) == ["b", "ua"])
        #expect(headers["accept"] == "b")
    }

    @Test func orderOfInsertionIsKept() {
        let names = ["Z", "A", "M", "B"]
        let headers = HTTPHeaders(names.map { HTTPHeader(name: $0, value: "1") })
        #expect(headers.map(\.name) == names)
    }

    @Test func dictionaryInitialiserSortsByName() {
        let headers = HTTPHeaders(["X-Zulu": "z", "Accept": "a", "X-Alpha": "x"])
        #expect(headers.map(\.name) == ["Accept", "X-Alpha", "X-Zulu"])
    }

    @Test func dictionaryLiteralKeepsItsOrderAndLastValueWins() {
        let headers: HTTPHeaders = ["B": "1", "A": "2", "b": "3"]
        #expect(headers.map(\.name) == ["b", "A"])
        #expect(headers["B"] == "3")
    }

    @Test func removeIgnoresCase() {
        var headers: HTTPHeaders = [.accept("*/*"), .authorization("x"), .userAgent("ua")]
        headers.remove(name: "AUTHORIZATION")
        #expect(headers.map(\.name) == ["Accept", "User-Agent"])
        #expect(headers["Authorization"] == nil)
    }

    @Test func dictionaryMapsNamesToValues() {
        let headers: HTTPHeaders = [.accept("*/*"), .userAgent("ua")]
        #expect(headers.dictionary == ["Accept": "*/*", "User-Agent": "ua"])
    }

    @Test func descriptionIsOneHeaderPerLine() {
        let headers: HTTPHeaders = [.accept("*/*"), .userAgent("ua")]
        #expect(headers.description == "Accept: */*\nUser-Agent: ua")
    }

    @Test func emptyHeaders() {
        let headers = HTTPHeaders()
        #expect(headers.count == 0)
        #expect(headers.description.isEmpty)
        #expect(headers["Accept"] == nil)
    }
}
