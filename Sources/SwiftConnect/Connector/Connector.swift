import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Describes one REST resource: where it lives, how to call it and with what.
///
/// Conform an enum to `Connector`, one case per call:
///
/// ```swift
/// enum TodoConnector: Connector {
///     case get(id: Int)
///
///     var baseURL: URL { URL(string: "https://jsonplaceholder.typicode.com")! }
///     var endpoint: String { "/todos/{id}" }
///     var method: HTTPMethod { .get }
///     var headers: [HTTPHeader] { [] }
///     var parameters: ParametersRepresentable? {
///         switch self {
///         case .get(let id): return Parameter.path(key: "id", value: "\(id)")
///         }
///     }
/// }
/// ```
///
/// `endpoint` is a template: each `{name}` slot is filled by the path parameter with that key,
/// percent-encoded so that it fills exactly one path segment. The endpoint is appended to the base
/// URL's path (`https://host/api/v1` + `/todos` → `https://host/api/v1/todos`), and may carry
/// its own `?query`: the base URL's query, the endpoint's and the query parameters follow one
/// another in that order, joined with `&` (none added next to a part's own `&` at its end or
/// start).
///
/// Declare each requirement with the type the protocol gives it: the defaults come from a protocol
/// extension, so `var timeoutInterval: TimeInterval { 5 }` (not `TimeInterval?`) or
/// `var acceptableStatusCodes: ClosedRange<Int>` compiles as a property of your own type, and the
/// default stays in force. Swift warns about it ("nearly matches defaulted requirement") only
/// when the conformance is declared in an extension (`extension TodoConnector: Connector`), not
/// on the type's own declaration.
///
/// Building the request is strict: a slot without a value, a path value without a slot, a header
/// with CR or LF, a non-http(s) base URL or a body that cannot be encoded fail the request with
/// ``ConnectError/invalidRequest(_:)``, and nothing is sent.
///
/// A connector's requests are built on whatever thread sends them — an actor's, a task's, a
/// `flatMap` step's — so the protocol refines `SendableMetatype`: in a module whose default
/// isolation is the main actor, a connector type declared without annotations stays nonisolated
/// and works from all of them.
public protocol Connector: SendableMetatype {
    /// The service's base URL, which may include a base path such as `/api/v1`.
    var baseURL: URL { get }
    /// The path template appended to the base URL, with `{name}` slots for path parameters.
    var endpoint: String { get }
    /// The HTTP method. Defaults to `.get`.
    var method: HTTPMethod { get }
    /// Headers to send. Defaults to none.
    var headers: [HTTPHeader] { get }
    /// Path, query and body parameters. Defaults to none.
    var parameters: ParametersRepresentable? { get }
    /// The request's timeout in seconds, or `nil` (the default) for the configuration's.
    ///
    /// A NaN, zero or negative timeout fails the request with
    /// ``InvalidRequestReason/invalidTimeout(_:)`` before anything is sent; `.infinity` waits as
    /// long as URLSession can (about 31.7 years). On Linux a fraction is rounded up to whole
    /// seconds, which is all FoundationNetworking counts (it would fail a 0.5 s request at once).
    var timeoutInterval: TimeInterval? { get }
    /// The status codes that count as success. Defaults to `200..<300`; others go to the
    /// error handler.
    var acceptableStatusCodes: Range<Int> { get }
    /// Whether sending the request twice is safe, so a ``RetryPolicy`` may retry it. Defaults to
    /// the method's idempotency (GET, HEAD, PUT, DELETE, OPTIONS, TRACE, QUERY); say `true` for a
    /// POST carrying an idempotency key.
    var isIdempotent: Bool { get }
    /// Which middleware the request goes through. Defaults to ``ConnectorMiddleware/inherited``.
    var middleware: ConnectorMiddleware { get }
    /// Validators for this call, replacing the configuration's; `nil` (the default) keeps them.
    var validators: [ResponseValidator]? { get }
    /// The redirect policy for this call; `nil` (the default) uses the configuration's.
    var redirectPolicy: RedirectPolicy? { get }
    /// Encodes this call's JSON bodies (``Parameter/jsonObject(value:)``, and
    /// ``RequestParameters/jsonEncoder`` for a ``ParametersRepresentable`` of your own); `nil` (the
    /// default) uses the configuration's ``ConnectConfiguration/jsonEncoder``. Asked each time a
    /// request is built: return one kept in a `static let`.
    var jsonEncoder: JSONEncoder? { get }
    /// Decodes this call's responses: `decoded(toType:)` without a `decoder:`, validators such as
    /// ``ResponseValidator/basicResponse(_:decoder:validate:)`` and a ``DecodingErrorHandler`` without one of
    /// their own; `nil` (the default) uses the configuration's ``ConnectConfiguration/jsonDecoder``.
    var jsonDecoder: JSONDecoder? { get }
}

extension Connector {
    /// No parameters.
    public var parameters: ParametersRepresentable? { nil }
    /// No headers.
    public var headers: [HTTPHeader] { [] }
    /// `GET`.
    public var method: HTTPMethod { .get }
    /// The configuration's timeout.
    public var timeoutInterval: TimeInterval? { nil }
    /// `200..<300`.
    public var acceptableStatusCodes: Range<Int> { 200..<300 }
    /// The method's idempotency.
    public var isIdempotent: Bool { method.isIdempotent }
    /// The `Connect`'s middleware.
    public var middleware: ConnectorMiddleware { .inherited }
    /// The configuration's validators.
    public var validators: [ResponseValidator]? { nil }
    /// The configuration's redirect policy.
    public var redirectPolicy: RedirectPolicy? { nil }
    /// The configuration's encoder.
    public var jsonEncoder: JSONEncoder? { nil }
    /// The configuration's decoder.
    public var jsonDecoder: JSONDecoder? { nil }

    /// Builds the `URLRequest` this connector describes, encoding a JSON body with its
    /// ``jsonEncoder`` or, when that is `nil`, a default `JSONEncoder`.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)`` when the connector is invalid.
    public func asURLRequest() throws -> URLRequest {
        try RequestBuilder.makeRequest(for: self, encoder: JSONEncoder())
    }
}
