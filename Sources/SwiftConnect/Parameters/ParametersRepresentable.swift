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
public protocol ParametersRepresentable {
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
    public private(set) var pathValues: [(key: String, value: String)] = []
    /// Query items, in order; names may repeat.
    public private(set) var queryItems: [URLQueryItem] = []
    /// The body, if one was given.
    public private(set) var body: RequestBody?
    /// Headers the parameters add (a body adds its `Content-Type` when the request is built).
    public private(set) var headers: [HTTPHeader] = []
    /// The encoder for JSON bodies: the `Connect` configuration's.
    public let jsonEncoder: JSONEncoder

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
        if pathValues.contains(where: { $0.key == key }) {
            throw ConnectError.invalidRequest(.duplicatePathParameter(key: key))
        }
        if pathValues.capacity == 0 { pathValues.reserveCapacity(Self.initialCapacity) }
        pathValues.append((key, value))
    }

    /// Appends a query item; a `nil` value sends the name alone (`?flag`).
    public mutating func appendQueryItem(name: String, value: String?) {
        if queryItems.capacity == 0 { queryItems.reserveCapacity(Self.initialCapacity) }
        queryItems.append(URLQueryItem(name: name, value: value))
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
