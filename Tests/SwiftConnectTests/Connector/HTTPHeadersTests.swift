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

    @Test func isARandomAccessCollectionInOrder() {
        let headers: HTTPHeaders = [.accept("*/*"), .userAgent("ua"), .contentType("text/plain")]
        #expect(!headers.isEmpty)
        #expect(HTTPHeaders().isEmpty)
        #expect(headers.first == .accept("*/*"))
        #expect(headers.last == .contentType("text/plain"))
        #expect(headers[1] == .userAgent("ua"))
        #expect(Array(headers.indices) == [0, 1, 2])
        #expect(headers.startIndex == 0 && headers.endIndex == 3)
        #expect(headers.dropFirst().map(\.name) == ["User-Agent", "Content-Type"])
        #expect(headers.reversed().map(\.name) == ["Content-Type", "User-Agent", "Accept"])
        #expect(headers.firstIndex { $0.name == "User-Agent" } == 1)
    }

    @Test func subscriptSetsReplacesInPlaceAndRemoves() {
        var headers: HTTPHeaders = [.accept("*/*"), .authorization("old"), .userAgent("ua")]
        headers["AUTHORIZATION"] = "new"
        #expect(headers.map(\.name) == ["Accept", "AUTHORIZATION", "User-Agent"])
        #expect(headers["authorization"] == "new")
        headers["X-Trace"] = "1"
        #expect(headers.map(\.name) == ["Accept", "AUTHORIZATION", "User-Agent", "X-Trace"])
        headers["accept"] = nil
        #expect(headers.map(\.name) == ["AUTHORIZATION", "User-Agent", "X-Trace"])
        headers["Not-There"] = nil
        #expect(headers.count == 3)
    }

    @Test func addReplacesAHeaderOfTheSameNameAsUpdateDoes() {
        var headers: HTTPHeaders = [.accept("*/*"), .userAgent("ua")]
        headers.add(.accept("application/json"))
        headers.add(name: "x-request-id", value: "42")
        headers.add(name: "USER-AGENT", value: "mine")
        #expect(headers.map(\.name) == ["Accept", "USER-AGENT", "x-request-id"])
        #expect(headers.map(\.value) == ["application/json", "mine", "42"])
    }

    @Test func sortedOrdersNamesIgnoringCaseAndLeavesTheOriginal() {
        let headers: HTTPHeaders = [
            HTTPHeader(name: "x-b", value: "1"), HTTPHeader(name: "Accept", value: "2"),
            HTTPHeader(name: "X-A", value: "3"), HTTPHeader(name: "accept-language", value: "4"),
            HTTPHeader(name: "X-Ab", value: "5"), HTTPHeader(name: "[", value: "6"),
        ]
        // By bytes with letters folded: "[" (0x5B) sorts before letters folded to lower case.
        #expect(headers.sorted().map(\.name) == ["[", "Accept", "accept-language", "X-A", "X-Ab", "x-b"])
        #expect(headers.map(\.name) == ["x-b", "Accept", "X-A", "accept-language", "X-Ab", "["])
        var sorting = headers
        sorting.sort()
        #expect(sorting == headers.sorted())
    }
}
