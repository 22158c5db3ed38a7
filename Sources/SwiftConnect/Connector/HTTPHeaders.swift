import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ordered list of headers with case-insensitive lookup by name.
///
/// ```swift
/// let total = response.headers["x-total-count"]   // same as response.headers["X-Total-Count"]
/// ```
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral, CustomStringConvertible
{
    private var headers: [HTTPHeader] = []

    /// Creates an empty list.
    public init() {}

    /// Creates a list from headers; a later header replaces an earlier one of the same name.
    public init(_ headers: [HTTPHeader]) {
        for header in headers { update(header) }
    }

    /// Creates a list from a dictionary, sorted by name so the order is stable.
    public init(_ dictionary: [String: String]) {
        for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) { update(name: name, value: value) }
    }

    /// Creates a list from headers; a later header replaces an earlier one of the same name.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }

    /// Creates a list from `name: value` pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { update(name: name, value: value) }
    }

    /// Creates a list from a response's header fields, sorted by name.
    init(_ response: HTTPURLResponse) {
        var dictionary: [String: String] = [:]
        for (key, value) in response.allHeaderFields {
            if let key = key as? String { dictionary[key] = value as? String ?? "\(value)" }
        }
        self.init(dictionary)
    }

    /// The value of the header called `name` (case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        value(for: name)
    }

    /// The value of the header called `name` (case-insensitive), or `nil`.
    public func value(for name: String) -> String? {
        headers.first { Self.namesMatch($0.name, name) }?.value
    }

    /// Sets `header`, replacing any header of the same name in place, or appending it.
    public mutating func update(_ header: HTTPHeader) {
        if let index = headers.firstIndex(where: { Self.namesMatch($0.name, header.name) }) {
            headers[index] = header
        } else {
            headers.append(header)
        }
    }

    /// Sets the header `name` to `value`, replacing any header of the same name.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Removes the header called `name` (case-insensitive).
    public mutating func remove(name: String) {
        headers.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Whether two header names are equal ignoring ASCII case (RFC 9110: names are tokens, and
    /// ASCII). Byte by byte: Foundation's `caseInsensitiveCompare` bridges to NSString and folds
    /// Unicode, and on Linux cost about 9,000 instructions a comparison.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        lhs.withUTF8Bytes { left in
            rhs.withUTF8Bytes { right in
                guard left.count == right.count else { return false }
                for index in left.indices where left[index] != right[index] {
                    if Self.lowercased(left[index]) != Self.lowercased(right[index]) { return false }
                }
                return true
            }
        }
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// The number of headers.
    public var count: Int { headers.count }

    /// The headers as a dictionary of name to value.
    public var dictionary: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Iterates the headers in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> {
        headers.makeIterator()
    }

    /// One `Name: value` per line.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}
