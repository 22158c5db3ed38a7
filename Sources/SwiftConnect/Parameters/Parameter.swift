import Foundation

/// A single request parameter.
///
/// Return one from a connector's `parameters`, or combine several with ``CompositeParameters``:
///
/// ```swift
/// Parameter.path(key: "id", value: "123")     // fills {id} in the endpoint
/// Parameter.path(key: "id", value: 123)       // the same: an Int is written in decimal
/// Parameter.query(key: "action", value: "done") // appends ?action=done
/// Parameter.jsonObject(value: todo)            // sends todo as the JSON body
/// ```
///
/// Values are percent-encoded for you: a path value always fills exactly one path segment, and
/// query names and values are encoded per RFC 3986 (`&`, `=`, `+`, `/`, `?`, `#`, spaces and
/// non-ASCII included).
public enum Parameter: ParametersRepresentable {
    /// A query item appended to the URL; keys may repeat and keep their order.
    case query(key: String, value: String)
    /// The value for the endpoint's `{key}` slot.
    case path(key: String, value: String)
    /// A JSON body, encoded with the connector's ``Connector/jsonEncoder``, else the `Connect`
    /// configuration's `JSONEncoder`.
    ///
    /// In a Swift 6 module, store such values as `any Encodable & Sendable` if the enum holding
    /// them must be `Sendable`.
    // Boxed: an `any Encodable` in place makes every copy of a `Parameter` go through value
    // witnesses (about 130 instructions a copy); boxed, a copy is a few retains.
    indirect case jsonObject(value: any Encodable)
    /// A field of an `application/x-www-form-urlencoded` body; several accumulate in order.
    case form(key: String, value: String)
    /// A raw body with its content type, e.g. `.data(xml, contentType: "application/xml")`.
    case data(Data, contentType: String)

    /// A query item whose value is an integer, written in decimal: `.query(key: "page", value: 2)`
    /// is `.query(key: "page", value: "2")`.
    public static func query(key: String, value: Int) -> Parameter {
        .query(key: key, value: String(value))
    }

    /// The value for the endpoint's `{key}` slot, an integer written in decimal:
    /// `.path(key: "id", value: 7)` is `.path(key: "id", value: "7")`.
    public static func path(key: String, value: Int) -> Parameter {
        .path(key: key, value: String(value))
    }

    /// A form field whose value is an integer, written in decimal.
    public static func form(key: String, value: Int) -> Parameter {
        .form(key: key, value: String(value))
    }

    /// Adds this parameter to `parameters`.
    public func apply(to parameters: inout RequestParameters) throws {
        switch self {
        case .query(let key, let value): parameters.appendQueryItem(name: key, value: value)
        case .path(let key, let value): try parameters.setPathValue(value, forKey: key)
        case .jsonObject(let value): try parameters.setJSONBody(value)
        case .form(let key, let value): try parameters.appendFormField(name: key, value: value)
        case .data(let data, let contentType): try parameters.setBody(data, contentType: contentType)
        }
    }
}

/// Several parameters of any kinds, applied in order.
///
/// ```swift
/// CompositeParameters(
///     .path(key: "userId", value: "1"),
///     .path(key: "todoId", value: "5"),
///     .query(key: "action", value: "done"),
///     .jsonObject(value: todo)
/// )
/// ```
public struct CompositeParameters: ParametersRepresentable {
    /// The parameters, in the order they are applied.
    public var parameters: [ParametersRepresentable] {
        switch storage {
        case .parameters(let parameters): return parameters
        case .representables(let representables): return representables
        }
    }

    /// Parameters given as ``Parameter`` values are kept as such: a `Parameter` (33 bytes) does not
    /// fit an existential's 24-byte inline buffer, so an `[any ParametersRepresentable]` would box each one
    /// in an allocation of its own.
    private enum Storage {
        case parameters([Parameter])
        case representables([ParametersRepresentable])
    }

    private let storage: Storage

    /// Combines parameters.
    public init(_ parameters: Parameter...) {
        storage = .parameters(parameters)
    }

    /// Combines parameters given as an array: `CompositeParameters([.path(key: "id", value: "1")])`.
    public init(_ parameters: [Parameter]) {
        storage = .parameters(parameters)
    }

    /// Combines parameters of any kinds, including your own ``ParametersRepresentable`` types.
    public init(_ parameters: [ParametersRepresentable]) {
        storage = .representables(parameters)
    }

    /// Applies every parameter in order.
    public func apply(to parameters: inout RequestParameters) throws {
        switch storage {
        case .parameters(let list):
            try parameters.adopt(list)
        case .representables(let list):
            for parameter in list { try parameter.apply(to: &parameters) }
        }
    }
}
