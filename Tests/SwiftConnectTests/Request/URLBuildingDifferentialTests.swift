import Foundation
import Testing

@testable import SwiftConnect

/// Request building writes the URL in one pass, from literals encoded when the template was
/// parsed. These tests build the same URLs the plain way — strings joined piece by piece, each
/// encoded on its own, with character sets spelled out here — and compare, over random bases,
/// endpoints, path values and query items.
@Suite("URL building, against a plain reference")
struct URLBuildingDifferentialTests {
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    private static let pathLiteral = unreserved.union("!$&'()*+,;=:@/".utf8)
    private static let queryLiteral = pathLiteral.union("?".utf8)

    private static func isHex(_ byte: UInt8) -> Bool {
        "0123456789ABCDEFabcdef".utf8.contains(byte)
    }

    private static func encode(_ string: String, keeping kept: Set<UInt8>, keepingEscapes: Bool = false) -> String {
        let bytes = Array(string.utf8)
        var encoded = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if kept.contains(byte) {
                encoded.append(Character(Unicode.Scalar(byte)))
                index += 1
            } else if keepingEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count, isHex(bytes[index + 1]),
                isHex(bytes[index + 2])
            {
                encoded += String(decoding: bytes[index...index + 2], as: UTF8.self)
                index += 3
            } else {
                encoded += String(format: "%%%02X", byte)
                index += 1
            }
        }
        return encoded
    }

    /// `template` with its `{slots}` filled, literals encoded with `literal`.
    private static func fill(_ template: Substring, values: [String: String], literal: Set<UInt8>, isQuery: Bool)
        -> String
    {
        var filled = ""
        var rest = template
        while let open = rest.firstIndex(of: "{") {
            filled += encode(String(rest[..<open]), keeping: literal, keepingEscapes: true)
            let close = rest[open...].firstIndex(of: "}")!
            let value = values[String(rest[rest.index(after: open)..<close])]!
            filled += encode(value, keeping: unreserved)
            rest = rest[rest.index(after: close)...]
        }
        return filled + encode(String(rest), keeping: literal, keepingEscapes: true)
    }

    /// Whether the endpoint's path has a segment that is `.` or `..`, written plainly.
    private static func hasDotSegment(_ endpoint: String) -> Bool {
        let path = endpoint.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." }
    }

    /// The URL string, joined the plain way.
    private static func referenceURL(
        base: String, endpoint: String, values: [String: String], items: [(name: String, value: String?)]
    ) -> String {
        var prefix = Substring(base)
        if let hash = prefix.firstIndex(of: "#") { prefix = prefix[..<hash] }
        var baseQuery: Substring = ""
        if let question = prefix.firstIndex(of: "?") {
            baseQuery = prefix[prefix.index(after: question)...]
            prefix = prefix[..<question]
        }
        let question = endpoint.firstIndex(of: "?")
        let path = fill(
            endpoint[..<(question ?? endpoint.endIndex)], values: values, literal: pathLiteral, isQuery: false)
        let endpointQuery = question.map {
            fill(endpoint[endpoint.index(after: $0)...], values: values, literal: queryLiteral, isQuery: true)
        }

        var url = String(prefix)
        if url.hasSuffix("/") && path.hasPrefix("/") {
            url.removeLast()
        } else if !path.isEmpty && !url.hasSuffix("/") && !path.hasPrefix("/") {
            url += "/"
        }
        url += path

        var itemsQuery = ""
        for item in items {
            if !itemsQuery.isEmpty { itemsQuery += "&" }
            itemsQuery += encode(item.name, keeping: unreserved)
            if let value = item.value { itemsQuery += "=" + encode(value, keeping: unreserved) }
        }
        let queries = [String(baseQuery), endpointQuery ?? "", itemsQuery].filter { !$0.isEmpty }
        if !queries.isEmpty {
            // Joined with `&`, but after a part that ends with one or before a part that starts
            // with one.
            var query = queries[0]
            for part in queries.dropFirst() {
                if !query.hasSuffix("&") && !part.hasPrefix("&") { query += "&" }
                query += part
            }
            url += "?" + query
        }
        return url
    }

    @Test func randomRequestsBuildTheReferenceURL() throws {
        let bases = ["", "/", "/v1", "/v1/", "/a%20b/", "/~u/"]
        let baseQueries = ["", "?", "?k=v", "?a=1&b", "?a=1&"]
        let fragments = ["", "#", "#top"]
        let endpointPieces = [
            "/", "/", "users", "{a}", "{b}", "é", " ", "%2F", "%zz", "%4", "?", "=", "&", "x", "[", "]", ":", "@", "+",
            ".", "..", "日本", "\"",
        ]
        let valuePieces = [".", "..", "a", "é", "/", "%", "%20", " ", "日本", "~", "?", "&", "=", "+", "#", "{a}"]
        let itemPieces = ["", "q", "a b", "&", "=", "é", "%", "+", "/", "?", "~."]
        // Thousands of endpoints: kept in a cache of their own, not the shared one other tests use.
        let templates = RequestBuildCache(capacity: 16)
        var generator = SeededGenerator(state: 0xC0FFEE)
        func random<T>(_ list: [T]) -> T { list.randomElement(using: &generator)! }
        func randomString(_ pieces: [String], count: ClosedRange<Int>) -> String {
            (0..<Int.random(in: count, using: &generator)).map { _ in random(pieces) }.joined()
        }

        for round in 0..<5_000 {
            let base = "https://h.test" + random(bases) + random(baseQueries) + random(fragments)
            let endpoint = randomString(endpointPieces, count: 0...8)
            var values: [String: String] = [:]
            for slot in ["a", "b"] where endpoint.contains("{\(slot)}") {
                values[slot] = randomString(valuePieces, count: 1...3)
            }
            let items = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                (
                    name: randomString(itemPieces, count: 0...2),
                    value: Bool.random(using: &generator)
                        ? randomString(itemPieces, count: 0...2) : nil
                )
            }

            // Given one by one in odd rounds. In even rounds as a composite's list, kept whole
            // (`CompositeParameters` hands it to `adopt`), up to the first item with no value,
            // which a `Parameter` cannot carry: that item and those after it are given one by one.
            var parameters = RequestParameters()
            let sortedValues = values.sorted(by: { $0.key < $1.key })
            var firstItemGivenAlone = 0
            if round.isMultiple(of: 2) {
                firstItemGivenAlone = items.firstIndex { $0.value == nil } ?? items.count
                try parameters.adopt(
                    sortedValues.map { Parameter.path(key: $0.key, value: $0.value) }
                        + items[..<firstItemGivenAlone].map { Parameter.query(key: $0.name, value: $0.value ?? "") })
            } else {
                for (key, value) in sortedValues { try parameters.setPathValue(value, forKey: key) }
            }
            for item in items[firstItemGivenAlone...] { parameters.appendQueryItem(name: item.name, value: item.value) }
            let pathPart = endpoint.prefix { $0 != "?" }
            let dotsInPath = values.contains {
                pathPart.contains("{\($0.key)}") && ($0.value == "." || $0.value == "..")
            }
            if Self.hasDotSegment(endpoint) || dotsInPath {
                // `.` or `..` written as a whole path segment of the endpoint, or a path value `.` or
                // `..`: refused, not sent.
                #expect(throws: ConnectError.self, "\(endpoint)") {
                    try RequestBuilder.makeURL(
                        baseURL: try #require(URL(string: base)), endpoint: endpoint, parameters: parameters,
                        cache: templates)
                }
                continue
            }
            let built = try RequestBuilder.makeURL(
                baseURL: try #require(URL(string: base)), endpoint: endpoint, parameters: parameters,
                cache: templates)
            let expected = Self.referenceURL(base: base, endpoint: endpoint, values: values, items: items)
            #expect(
                built.absoluteString == expected,
                "round \(round): base \(base), endpoint \(endpoint), values \(values), items \(items)")
        }
    }

    /// URLs of exactly the writer's stack buffer size and one byte either side (the last with
    /// a two-byte character across the boundary), and a long one: beyond the buffer the writer
    /// takes its second pass, and the URL must come out the same.
    @Test(arguments: [UTF8Writer.stackCapacity - 1, UTF8Writer.stackCapacity, UTF8Writer.stackCapacity + 1, 5_000])
    func urlsAroundTheStackBufferSizeBuildTheReferenceURL(length: Int) throws {
        let base = "https://h.test/v1"
        let endpoint = "/items/{id}"
        // "https://h.test/v1/items/" is 24 bytes; "é" encodes to 6 and "a" to 1.
        let overhead = 24
        let accents = (length - overhead) / 6 - 1
        let value =
            String(repeating: "é", count: accents) + String(repeating: "a", count: length - overhead - accents * 6)
        var parameters = RequestParameters()
        try parameters.setPathValue(value, forKey: "id")
        let built = try RequestBuilder.makeURL(
            baseURL: try #require(URL(string: base)), endpoint: endpoint, parameters: parameters)
        let expected = Self.referenceURL(base: base, endpoint: endpoint, values: ["id": value], items: [])
        #expect(built.absoluteString == expected)
        #expect(built.absoluteString.utf8.count == length)
    }
}
