import Foundation

/// What request building remembers between requests, so as not to work it out again for each:
/// the parsed templates of endpoints, the base URL found valid last with its layout, and the
/// connector types known not to conform to ``AuthorizedConnector``.
///
/// One lock guards all three, and building a request asks for all it needs in one visit
/// (``recall(base:endpoint:connectorType:)``): taking and releasing a lock is two atomic
/// operations, about 8 ns, and a request built took three locks when each memo had its own.
///
/// **Templates.** An endpoint is nearly always a string literal, so a handful of entries serve a
/// whole API. The cache holds at most ``capacity`` templates: when full, adding one drops another,
/// so an endpoint built at run time (`"/users/\(id)"`) costs a parse as it did before, never
/// unbounded memory. Malformed endpoints are not kept: each use throws the parser's error again.
/// The template used last is kept beside the dictionary and checked first: a connector used again
/// and again (paging, polling, a burst of calls) costs a string comparison, not hashing its
/// endpoint. Endpoints are told apart by their UTF-8 bytes, not by `String`'s `==`, which holds
/// canonically equivalent strings equal: `"/caf\u{E9}"` and `"/cafe\u{301}"` percent-encode
/// differently, so they must not share a template.
///
/// **The base URL.** A client builds its requests against one base URL or a few, and comparing a
/// string's bytes with the one held here (nothing, when it is the same `URL`'s string) costs less
/// than checking and scanning it again. Bytes, not `==`: the layout is a set of byte offsets.
///
/// **Connector types.** The runtime's conformance lookup behind `as?` costs about 1,200
/// instructions, 5 % of building a request; a type that does not conform is looked up once.
/// (Types that conform are cast every time: the cast is what reaches their token.) The type found
/// last is checked before the set. A conformance declared in a library loaded with `dlopen` after a
/// type was remembered here would go unnoticed for that type.
///
/// Thread-safe: the state sits in a ``LockedBox``; parsing, checking and casting happen outside
/// the lock.
struct RequestBuildCache: Sendable {
    /// The cache request building uses.
    static let shared = RequestBuildCache(capacity: 256)

    /// The most templates held at once.
    let capacity: Int

    private let state: LockedBox<State>

    private struct State {
        var templates: [Key: EndpointTemplate] = [:]
        /// The endpoint looked up last, with its template.
        var lastTemplate: (endpoint: Key, template: EndpointTemplate)?
        /// The base URL found valid last, with its layout.
        var lastBase: (base: String, layout: RequestBuilder.BaseURLLayout)?
        /// The connector type found not to conform last.
        var lastUnauthorizedType: ObjectIdentifier?
        var unauthorizedTypes: Set<ObjectIdentifier> = []

        @inline(__always)
        mutating func template(for endpoint: Key) -> EndpointTemplate? {
            if let lastTemplate, lastTemplate.endpoint == endpoint { return lastTemplate.template }
            guard let template = templates[endpoint] else { return nil }
            lastTemplate = (endpoint, template)
            return template
        }

        @inline(__always)
        func layout(of base: String) -> RequestBuilder.BaseURLLayout? {
            lastBase.flatMap { $0.base.hasSameUTF8(as: base) ? $0.layout : nil }
        }

        @inline(__always)
        mutating func isUnauthorized(_ type: ObjectIdentifier) -> Bool {
            if type == lastUnauthorizedType { return true }
            guard unauthorizedTypes.contains(type) else { return false }
            lastUnauthorizedType = type
            return true
        }
    }

    /// An endpoint, compared and hashed by its UTF-8 bytes.
    private struct Key: Hashable {
        var endpoint: String

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.endpoint.hasSameUTF8(as: rhs.endpoint)
        }

        func hash(into hasher: inout Hasher) {
            endpoint.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Creates an empty cache holding at most `capacity` templates (at least one).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = LockedBox(State())
    }

    /// What is remembered for a request to `endpoint` against `base` (a base URL's string) by a
    /// connector of type `connectorType`, in one visit under the lock: the base's layout when it
    /// is the base found valid last, the endpoint's template when it is held, and whether the
    /// type is known not to conform to ``AuthorizedConnector``. `nil` (or `false`) is for the
    /// build to work out.
    func recall(
        base: String, endpoint: String, connectorType: ObjectIdentifier
    ) -> (layout: RequestBuilder.BaseURLLayout?, template: EndpointTemplate?, isUnauthorizedType: Bool) {
        state.withLock { state in
            (state.layout(of: base), state.template(for: Key(endpoint: endpoint)), state.isUnauthorized(connectorType))
        }
    }

    // MARK: Each memo on its own

    /// The parsed template for `endpoint`, from the cache or parsed now.
    ///
    /// - Throws: ``InvalidRequestReason/malformedEndpoint(_:detail:)``, as ``EndpointTemplate/init(_:)``.
    func template(for endpoint: String) throws -> EndpointTemplate {
        let key = Key(endpoint: endpoint)
        if let cached = state.withLock({ $0.template(for: key) }) { return cached }
        let template = try EndpointTemplate(endpoint)
        state.withLock { state in
            if state.templates.count >= capacity, state.templates[key] == nil {
                state.templates.remove(at: state.templates.startIndex)
            }
            state.templates[key] = template
            state.lastTemplate = (key, template)
        }
        return template
    }

    /// The layout of `base`, a base URL's string, if ``RequestBuilder/hasHTTPSchemeAndHost(_:)``
    /// and it has no `{slot}` (``RequestBuilder/hasSlot(_:)``), else `nil`; answered from memory
    /// when `base` is the string found valid last.
    func validBaseLayout(_ base: String) -> RequestBuilder.BaseURLLayout? {
        if let remembered = state.withLock({ $0.layout(of: base) }) { return remembered }
        guard RequestBuilder.hasHTTPSchemeAndHost(base), !RequestBuilder.hasSlot(base) else { return nil }
        let layout = base.withUTF8Bytes(RequestBuilder.BaseURLLayout.init(of:))
        state.withLock { $0.lastBase = (base, layout) }
        return layout
    }

    /// Whether connectors of `type` are known not to conform to ``AuthorizedConnector``.
    func isUnauthorizedType(_ type: ObjectIdentifier) -> Bool {
        state.withLock { $0.isUnauthorized(type) }
    }

    /// Remembers that connectors of `type` do not conform to ``AuthorizedConnector``.
    func rememberUnauthorizedType(_ type: ObjectIdentifier) {
        state.withLock { _ = $0.unauthorizedTypes.insert(type) }
    }

    /// The number of templates held.
    var count: Int { state.withLock { $0.templates.count } }

    /// Whether the template for `endpoint` is held.
    func contains(_ endpoint: String) -> Bool {
        state.withLock { $0.templates[Key(endpoint: endpoint)] != nil }
    }
}
