/// An endpoint such as `/users/{userId}/todos/{todoId}?expand=true`, parsed into literal text and
/// `{slot}`s, in its path and query parts.
struct EndpointTemplate {
    enum Piece: Equatable {
        case literal(String)
        case slot(String)
    }

    /// The path part, before any `?`.
    let path: [Piece]
    /// The query part, after the first `?` (empty when there is none).
    let query: [Piece]
    /// Every slot name, in order of appearance.
    var slots: [String] {
        (path + query).compactMap { if case .slot(let name) = $0 { return name } else { return nil } }
    }

    /// Parses `endpoint`.
    ///
    /// - Throws: ``InvalidRequestReason/malformedEndpoint(_:detail:)`` for an unclosed `{`, a
    ///   stray `}`, an empty or nested slot, or a `#` fragment.
    init(_ endpoint: String) throws {
        func malformed(_ detail: String) -> ConnectError {
            .invalidRequest(.malformedEndpoint(endpoint, detail: detail))
        }
        var path: [Piece] = []
        var query: [Piece] = []
        var inQuery = false
        var literal = ""
        var slot: String?

        func flushLiteral() {
            guard !literal.isEmpty else { return }
            if inQuery { query.append(.literal(literal)) } else { path.append(.literal(literal)) }
            literal = ""
        }

        for character in endpoint {
            if var name = slot {
                switch character {
                case "}":
                    guard !name.isEmpty else { throw malformed("empty slot {}") }
                    if inQuery { query.append(.slot(name)) } else { path.append(.slot(name)) }
                    slot = nil
                case "{", "/", "?", "#":
                    throw malformed("unclosed slot {\(name)")
                default:
                    name.append(character)
                    slot = name
                }
                continue
            }
            switch character {
            case "{":
                flushLiteral()
                slot = ""
            case "}":
                throw malformed("'}' without '{'")
            case "#":
                throw malformed("an endpoint cannot carry a #fragment")
            case "?" where !inQuery:
                flushLiteral()
                inQuery = true
            default:
                literal.append(character)
            }
        }
        if let slot { throw malformed("unclosed slot {\(slot)") }
        flushLiteral()
        self.path = path
        self.query = query
    }
}
