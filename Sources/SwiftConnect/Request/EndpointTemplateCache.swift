import Foundation

/// Parsed endpoint templates, by endpoint string, so that a connector's endpoint is parsed once
/// rather than on every request.
///
/// An endpoint is nearly always a string literal, so a handful of entries serve a whole API.
/// The cache holds at most ``capacity`` templates: when full, adding one drops another, so an
/// endpoint built at run time (`"/users/\(id)"`) costs a parse as it did before, never unbounded
/// memory. Malformed endpoints are not kept: each use throws the parser's error again.
///
/// The template used last is kept beside the dictionary and checked first: a connector used
/// again and again (paging, polling, a burst of calls) costs a string comparison, not hashing
/// its endpoint.
///
/// Endpoints are told apart by their UTF-8 bytes, not by `String`'s `==`, which holds canonically
/// equivalent strings equal: `"/caf\u{E9}"` and `"/cafe\u{301}"` percent-encode differently, so
/// they must not share a template.
///
/// Thread-safe: the entries sit in a ``LockedBox``; parsing happens outside the lock.
struct EndpointTemplateCache: Sendable {
    /// The cache request building uses.
    static let shared = EndpointTemplateCache(capacity: 256)

    /// The most templates held at once.
    let capacity: Int
    private let entries: LockedBox<Entries>

    private struct Entries {
        var templates: [Key: EndpointTemplate] = [:]
        /// The endpoint looked up last, with its template.
        var last: (endpoint: Key, template: EndpointTemplate)?

        mutating func template(for endpoint: Key) -> EndpointTemplate? {
            if let last, last.endpoint == endpoint { return last.template }
            guard let template = templates[endpoint] else { return nil }
            last = (endpoint, template)
            return template
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
        entries = LockedBox(Entries())
    }

    /// The parsed template for `endpoint`, from the cache or parsed now.
    ///
    /// - Throws: ``InvalidRequestReason/malformedEndpoint(_:detail:)``, as ``EndpointTemplate/init(_:)``.
    func template(for endpoint: String) throws -> EndpointTemplate {
        let key = Key(endpoint: endpoint)
        if let cached = entries.withLock({ $0.template(for: key) }) { return cached }
        let template = try EndpointTemplate(endpoint)
        entries.withLock { entries in
            if entries.templates.count >= capacity, entries.templates[key] == nil {
                entries.templates.remove(at: entries.templates.startIndex)
            }
            entries.templates[key] = template
            entries.last = (key, template)
        }
        return template
    }

    /// The number of templates held.
    var count: Int { entries.withLock { $0.templates.count } }

    /// Whether the template for `endpoint` is held.
    func contains(_ endpoint: String) -> Bool {
        entries.withLock { $0.templates[Key(endpoint: endpoint)] != nil }
    }
}
