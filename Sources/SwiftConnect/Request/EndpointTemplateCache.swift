/// Parsed endpoint templates, by endpoint string, so that a connector's endpoint is parsed once
/// rather than on every request.
///
/// An endpoint is nearly always a string literal, so a handful of entries serve a whole API.
/// The cache holds at most ``capacity`` templates: when full, adding one drops another, so an
/// endpoint built at run time (`"/users/\(id)"`) costs a parse as it did before, never unbounded
/// memory. Malformed endpoints are not kept: each use throws the parser's error again.
///
/// Thread-safe: the dictionary sits in a ``LockedBox``; parsing happens outside the lock.
struct EndpointTemplateCache: Sendable {
    /// The cache request building uses.
    static let shared = EndpointTemplateCache(capacity: 256)

    /// The most templates held at once.
    let capacity: Int
    private let templates: LockedBox<[String: EndpointTemplate]>

    /// Creates an empty cache holding at most `capacity` templates (at least one).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        templates = LockedBox([:])
    }

    /// The parsed template for `endpoint`, from the cache or parsed now.
    ///
    /// - Throws: ``InvalidRequestReason/malformedEndpoint(_:detail:)``, as ``EndpointTemplate/init(_:)``.
    func template(for endpoint: String) throws -> EndpointTemplate {
        if let cached = templates.withLock({ $0[endpoint] }) { return cached }
        let template = try EndpointTemplate(endpoint)
        templates.withLock { templates in
            if templates.count >= capacity, templates[endpoint] == nil {
                templates.remove(at: templates.startIndex)
            }
            templates[endpoint] = template
        }
        return template
    }

    /// The number of templates held.
    var count: Int { templates.withLock { $0.count } }

    /// Whether the template for `endpoint` is held.
    func contains(_ endpoint: String) -> Bool {
        templates.withLock { $0[endpoint] != nil }
    }
}
