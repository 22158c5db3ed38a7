import Foundation

/// Something that contributes path values, query items, a body or headers to a request.
///
/// ``Parameter`` and ``CompositeParameters`` cover the common kinds; conform your own types to add
/// others — for example an API key that every call of a service sends:
///
/// ```swift
/// struct APIKey: ParametersRepresentable {
///     let key: String
///     func apply(to parameters: inout RequestParameters) throws {
///         parameters.appendQueryItem(name: "api_key", value: key)
///     }
/// }
/// ```
///
/// It refines `SendableMetatype`, as ``Connector`` does, so that a type conforming in a module
/// whose default isolation is the main actor stays nonisolated.
public protocol ParametersRepresentable: SendableMetatype {
    /// Adds this value's contribution to `parameters`.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)`` (from `RequestParameters`' methods) or any
    ///   error of your own; either fails the request before anything is sent.
    func apply(to parameters: inout RequestParameters) throws
}

/// The parameters of one request, as gathered from a connector's ``ParametersRepresentable``.
///
/// Values are kept as given; encoding for the URL happens when the request is built.
public struct RequestParameters {
    /// Values for the endpoint's `{slot}`s, in the order they were given.
    public var pathValues: [(key: String, value: String)] {
        if adopted.isEmpty { return addedPathValues }
        var values: [(key: String, value: String)] = []
        forEachPathValue { key, value in values.append((key, value)) }
        return values
    }

    /// Query items, in order; names may repeat.
    public var queryItems: [URLQueryItem] {
        if adopted.isEmpty { return addedQueryItems }
        var items: [URLQueryItem] = []
        forEachQueryItem { name, value in items.append(URLQueryItem(name: name, value: value)) }
        return items
    }

    /// The body, if one was given.
    public private(set) var body: RequestBody?
    /// Headers the parameters add (a body adds its `Content-Type` when the request is built).
    public private(set) var headers: [HTTPHeader] = []
    /// The encoder for JSON bodies: the connector's ``Connector/jsonEncoder``, else the `Connect`
    /// configuration's.
    public let jsonEncoder: JSONEncoder

    /// A ``CompositeParameters``' list, kept whole rather than copied into `addedPathValues` and
    /// `addedQueryItems` (see `adopt(_:)`). Its path values and query items come before those.
    private var adopted: [Parameter] = []
    /// Whether `adopted` holds a query item.
    private var adoptedHasQueryItem = false
    /// The number of path values in `adopted`.
    private var adoptedPathValueCount = 0
    /// Path values given one at a time, after those of `adopted`.
    private var addedPathValues: [(key: String, value: String)] = []
    /// Query items given one at a time, after those of `adopted`.
    private var addedQueryItems: [URLQueryItem] = []

    /// Room for this many path values or query items at the first one: growing an array one
    /// append at a time would reallocate at the 2nd and 3rd.
    private static let initialCapacity = 4

    /// Creates an empty set of parameters that encodes JSON with `jsonEncoder`.
    public init(jsonEncoder: JSONEncoder = JSONEncoder()) {
        self.jsonEncoder = jsonEncoder
    }

    /// Sets the value for the endpoint slot `{key}`.
    ///
    /// - Throws: ``InvalidRequestReason/duplicatePathParameter(key:)`` if `key` already has a value.
    public mutating func setPathValue(_ value: String, forKey key: String) throws {
        if self.value(forSlot: key) != nil {
            throw ConnectError.invalidRequest(.duplicatePathParameter(key: key))
        }
        if addedPathValues.capacity == 0 { addedPathValues.reserveCapacity(Self.initialCapacity) }
        addedPathValues.append((key, value))
    }

    /// Appends a query item; a `nil` value sends the name alone (`?flag`).
    public mutating func appendQueryItem(name: String, value: String?) {
        if addedQueryItems.capacity == 0 { addedQueryItems.reserveCapacity(Self.initialCapacity) }
        addedQueryItems.append(URLQueryItem(name: name, value: value))
    }

    /// Appends a field to an `application/x-www-form-urlencoded` body.
    ///
    /// - Throws: ``InvalidRequestReason/multipleBodies`` if another kind of body was set.
    public mutating func appendFormField(name: String, value: String) throws {
        switch body {
        case nil: body = .form([URLQueryItem(name: name, value: value)])
        case .form(var fields)?:
            body = nil
            fields.append(URLQueryItem(name: name, value: value))
            body = .form(fields)
        default: throw ConnectError.invalidRequest(.multipleBodies)
        }
    }

    /// Sets a JSON body, encoded now with ``jsonEncoder``.
    ///
    /// - Throws: ``InvalidRequestReason/encodingFailed(underlying:)`` if the value cannot be
    ///   encoded, ``InvalidRequestReason/multipleBodies`` if a body was already set.
    public mutating func setJSONBody(_ value: any Encodable) throws {
        guard body == nil else { throw ConnectError.invalidRequest(.multipleBodies) }
        do {
            body = .json(try jsonEncoder.encode(value))
        } catch {
            throw ConnectError.invalidRequest(.encodingFailed(underlying: error))
        }
    }

    /// Sets a raw body with its content type.
    ///
    /// - Throws: ``InvalidRequestReason/multipleBodies`` if a body was already set.
    public mutating func setBody(_ data: Data, contentType: String) throws {
        guard body == nil else { throw ConnectError.invalidRequest(.multipleBodies) }
        body = .data(data, contentType: contentType)
    }

    /// Adds a header to the request.
    public mutating func appendHeader(_ header: HTTPHeader) {
        headers.append(header)
    }

    // MARK: Taking a list whole

    /// The longest list ``adopt(_:)`` keeps whole. Each of its path values is checked against the
    /// parameters before it, and each slot is looked up in the whole list, so a long list would
    /// cost more kept whole than applied one by one.
    static let longestAdoptedList = 16

    /// Applies `list` in order, as each parameter's own `apply(to:)` would, with the same errors
    /// and, when one is thrown, the same parameters applied before it.
    ///
    /// A list of up to ``longestAdoptedList`` parameters is kept as it is, instead of copying its
    /// path values and query items one by one into arrays of their own, when nothing has given a
    /// path value or query item yet and no other list is kept: a connector's
    /// ``CompositeParameters`` is nearly always the only thing applied, and gathering it cost about
    /// a fifth of building a request.
    mutating func adopt(_ list: [Parameter]) throws {
        guard list.count <= Self.longestAdoptedList, adopted.isEmpty, addedPathValues.isEmpty,
            addedQueryItems.isEmpty
        else {
            for parameter in list { try parameter.apply(to: &self) }
            return
        }
        var hasQueryItem = false
        var pathValueCount = 0
        // Through the buffer, as the readers below: a `for` or a subscript of the array copies
        // each parameter it reads.
        try list.withUnsafeBufferPointer { list in
            for index in list.indices {
                do {
                    switch list[index] {
                    case .query:
                        hasQueryItem = true
                    case .path(let key, _):
                        pathValueCount += 1
                        for earlier in list.indices.prefix(upTo: index) {
                            if case .path(key, _) = list[earlier] {
                                throw ConnectError.invalidRequest(.duplicatePathParameter(key: key))
                            }
                        }
                    case .jsonObject(let value): try setJSONBody(value)
                    case .form(let key, let value): try appendFormField(name: key, value: value)
                    case .data(let data, let contentType): try setBody(data, contentType: contentType)
                    }
                } catch {
                    // What applying them one by one leaves: the path values and query items before it
                    // (bodies are set already; no key repeats before `index`, so none of these throws).
                    for parameter in list[..<index] {
                        switch parameter {
                        case .query, .path: try parameter.apply(to: &self)
                        case .jsonObject, .form, .data: continue
                        }
                    }
                    throw error
                }
            }
        }
        adopted = list
        adoptedHasQueryItem = hasQueryItem
        adoptedPathValueCount = pathValueCount
    }

    // MARK: Reading, for request building

    /// Calls `body` with each path value, in the order they were given.
    func forEachPathValue(_ body: (_ key: String, _ value: String) throws -> Void) rethrows {
        for parameter in adopted {
            if case .path(let key, let value) = parameter { try body(key, value) }
        }
        for (key, value) in addedPathValues { try body(key, value) }
    }

    /// The number of path values given.
    var pathValueCount: Int { adoptedPathValueCount + addedPathValues.count }

    /// The value given for the slot `{key}`, if any.
    func value(forSlot key: String) -> String? {
        // Through the buffer: a `for` over the array copied each parameter read (about 100
        // instructions a request built).
        let found: String? = adopted.withUnsafeBufferPointer { list in
            for index in list.indices {
                if case .path(let name, let value) = list[index], name == key { return value }
            }
            return nil
        }
        if let found { return found }
        for (name, value) in addedPathValues where name == key { return value }
        return nil
    }

    /// Whether a query string of the query items would have any byte in it: some item has a name
    /// or a value.
    var hasQuery: Bool {
        // An adopted item always has a value (`Parameter.query`'s is not optional).
        adoptedHasQueryItem || addedQueryItems.contains { !$0.name.isEmpty || $0.value != nil }
    }

    /// Appends the query items to `output` as a query string (``PercentEncoding/queryString(_:)``
    /// of ``queryItems``), read with ``forEachQueryItem(_:)``.
    func appendQueryString(to output: inout UTF8Writer) {
        let start = output.count
        forEachQueryItem { name, value in
            PercentEncoding.appendQueryItem(name: name, value: value, to: &output, joinedAfter: start)
        }
    }

    /// Calls `body` with each query item's name and value, in the order they were given: the one
    /// reader of the query items, for ``queryItems`` and the query string alike.
    ///
    /// Always inlined, with `body`: called, `body` got copies of what it captures (writing the query
    /// string, the writer; about 30 instructions a request built).
    @inline(__always)
    func forEachQueryItem(_ body: (_ name: String, _ value: String?) throws -> Void) rethrows {
        // Through the buffer: a `for` over the array copied each parameter first, the path values
        // too (about 370 instructions a request built).
        try adopted.withUnsafeBufferPointer { adopted in
            for index in adopted.indices {
                if case .query(let name, let value) = adopted[index] { try body(name, value) }
            }
        }
        for item in addedQueryItems { try body(item.name, item.value) }
    }
}

extension RequestParameters: CustomReflectable {
    /// What was given, as `print` and `dump` show it: path values, query items, body, headers and
    /// encoder — not how they are stored (a kept list would show a JSON body's value unencoded).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "pathValues": pathValues, "queryItems": queryItems, "body": body as Any, "headers": headers,
                "jsonEncoder": jsonEncoder,
            ],
            displayStyle: .struct)
    }
}

/// A request body, as parameters give it.
public enum RequestBody: Hashable, Sendable {
    /// JSON, already encoded; sent as `application/json`.
    case json(Data)
    /// Fields sent as `application/x-www-form-urlencoded`, in order.
    case form([URLQueryItem])
    /// Bytes sent as they are, with their content type.
    case data(Data, contentType: String)

    /// The `Content-Type` this body is sent with.
    public var contentType: String {
        switch self {
        case .json: return "application/json"
        case .form: return "application/x-www-form-urlencoded; charset=utf-8"
        case .data(_, let contentType): return contentType
        }
    }

    /// The bytes sent on the wire.
    public var encoded: Data {
        switch self {
        case .json(let data), .data(let data, _): return data
        case .form(let fields): return Data(PercentEncoding.formEncoded(fields).utf8)
        }
    }
}
