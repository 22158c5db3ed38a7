import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ordered list of headers with case-insensitive lookup by name, one header a name.
///
/// ```swift
/// let total = response.headers["x-total-count"]   // same as response.headers["X-Total-Count"]
/// ```
///
/// It reads as Alamofire's `HTTPHeaders` does: a random-access collection of ``HTTPHeader`` in
/// order (`isEmpty`, `first`, `map`, indices), set by subscript (`headers["Accept"] = "text/csv"`;
/// `nil` removes), ``add(_:)`` or ``update(_:)``, which replace a header of the same name where it
/// stands. Two lists are equal when they hold the same names, spelt the same, with the same values
/// in the same order.
public struct HTTPHeaders: Hashable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral,
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
    ///
    /// Setting a value replaces the header of that name where it stands (keeping the spelling
    /// given here), or appends it; setting `nil` removes it.
    public subscript(name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
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

    /// Sets `header`, as ``update(_:)`` does: a header of the same name (case-insensitive) is
    /// replaced where it stands, any other is appended. The name Alamofire uses.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Sets the header `name` to `value`, as ``update(name:value:)`` does.
    public mutating func add(name: String, value: String) {
        update(name: name, value: value)
    }

    /// Removes the header called `name` (case-insensitive).
    public mutating func remove(name: String) {
        headers.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Sorts the headers by name, ignoring ASCII case.
    public mutating func sort() {
        headers.sort { left, right in
            let folded = { (name: String) in name.utf8.lazy.map(Self.lowercased) }
            return folded(left.name).lexicographicallyPrecedes(folded(right.name))
        }
    }

    /// The headers sorted by name, ignoring ASCII case. (No two names tie: the list holds one
    /// header a name.)
    public func sorted() -> HTTPHeaders {
        var copy = self
        copy.sort()
        return copy
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

    /// The position of the first header: `0`.
    public var startIndex: Int { headers.startIndex }

    /// The position past the last header: ``count``.
    public var endIndex: Int { headers.endIndex }

    /// The header at `position`, counted from `0` in order; `position` must be below ``count``.
    public subscript(position: Int) -> HTTPHeader {
        headers[position]
    }

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
