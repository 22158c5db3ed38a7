import Testing

@testable import SwiftConnect

@Suite("EndpointTemplate")
struct EndpointTemplateTests {
    @Test func parsesLiteralsAndSlotsOfThePath() throws {
        let template = try EndpointTemplate("/users/{userId}/todos/{todoId}")
        #expect(template.path == [.literal("/users/"), .slot("userId"), .literal("/todos/"), .slot("todoId")])
        #expect(template.query.isEmpty)
        #expect(template.slots == ["userId", "todoId"])
    }

    @Test func slotMayShareASegmentWithLiteralText() throws {
        let template = try EndpointTemplate("/files/{name}.json")
        #expect(template.path == [.literal("/files/"), .slot("name"), .literal(".json")])
    }

    @Test func adjacentSlotsStaySeparate() throws {
        let template = try EndpointTemplate("/{a}{b}")
        #expect(template.path == [.literal("/"), .slot("a"), .slot("b")])
    }

    @Test func splitsTheQueryAtTheFirstQuestionMark() throws {
        let template = try EndpointTemplate("/search?q={term}&next=?x")
        #expect(template.path == [.literal("/search")])
        #expect(template.query == [.literal("q="), .slot("term"), .literal("&next=?x")])
        #expect(template.slots == ["term"])
    }

    @Test func slotsAreListedInOrderOfAppearanceAcrossPathAndQuery() throws {
        let template = try EndpointTemplate("/{b}/{a}?x={c}&y={a}")
        #expect(template.slots == ["b", "a", "c", "a"])
    }

    @Test func emptyEndpointHasNoPieces() throws {
        let template = try EndpointTemplate("")
        #expect(template.path.isEmpty)
        #expect(template.query.isEmpty)
        #expect(template.slots.isEmpty)
    }

    @Test func endpointWithoutSlotsIsOneLiteral() throws {
        let template = try EndpointTemplate("todos/all")
        #expect(template.path == [.literal("todos/all")])
        #expect(!template.pathStartsWithSlash)
    }

    /// Literals are encoded once, when the endpoint is parsed: a path literal keeps pchar and
    /// `/`, a query literal `?` too, and both keep well-formed escapes.
    @Test func literalsArePercentEncodedForTheirPart() throws {
        let template = try EndpointTemplate("/caf é/{id}/a%2Fb%zz[0]?q=a b?/&x[1]=%41{v}")
        #expect(template.path == [.literal("/caf%20%C3%A9/"), .slot("id"), .literal("/a%2Fb%25zz%5B0%5D")])
        #expect(template.query == [.literal("q=a%20b?/&x%5B1%5D=%41"), .slot("v")])
        #expect(template.pathStartsWithSlash)
    }

    @Test(
        "Malformed endpoints are rejected",
        arguments: [
            "/users/{id",  // unclosed {
            "/users/{id/todos",  // slot runs into a /
            "/users/{id/todos}",  // a slot's name cannot hold a /: it is two segments, not one slot
            "/users/{id?x=1}",  // slot runs into the query
            "/users/id}",  // stray }
            "/users/{}",  // empty slot
            "/users/{a{b}}",  // nested slot
            "/users#top",  // fragment
            "/users?x=1#top",  // fragment after the query
            "/users/{id#x}",  // fragment inside a slot
            "{",
            "}",
            "../../x",  // dot-segments: libcurl removes them, climbing out of the base URL's path
            "/users/../admin",
            "/users/./{id}",
            "/users/..",
            "..",
            "/a/%2E%2E/b",
            "/a/.%2e?q=1",
            "/a/{id}/..",
        ])
    func malformedEndpointIsRejected(endpoint: String) {
        let error = #expect(throws: ConnectError.self) {
            _ = try EndpointTemplate(endpoint)
        }
        guard case .invalidRequest(.malformedEndpoint(let reported, let detail))? = error else {
            Issue.record("expected malformedEndpoint, got \(String(describing: error))")
            return
        }
        #expect(reported == endpoint)
        #expect(!detail.isEmpty)
    }

    /// Dots that are not a whole segment, and dots in the query, are ordinary text.
    @Test(arguments: ["/files/a.json", "/v1.2/{id}", "/{id}..", "/...", "/.well-known/x", "/x?path=../.."])
    func dotsThatAreNotADotSegmentAreKept(endpoint: String) throws {
        #expect(try EndpointTemplate(endpoint).path.isEmpty == false)
    }
}
