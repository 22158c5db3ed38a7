// This target's default isolation is the main actor, as in Xcode 26's new app projects: every type
// below that says nothing else is main-actor isolated, but for the connector and parameters types,
// which stay nonisolated because their protocols refine `SendableMetatype`. Models decoded or
// encoded off the main actor say `nonisolated` themselves, as Usage.md asks.

import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

nonisolated struct Item: Codable, Sendable, Equatable {
    let id: Int
    let name: String
}

/// A connector as an app target writes it: no annotation.
enum ItemsConnector: Connector, AuthorizedConnector {
    case get(id: Int)
    case search(Search)
    case create(Item)

    var baseURL: URL { URL(string: "https://api.example.test/v1")! }

    var endpoint: String {
        switch self {
        case .get: return "/items/{id}"
        case .search: return "/items"
        case .create: return "/items"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .create: return .post
        default: return .get
        }
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .get(let id): return Parameter.path(key: "id", value: id)
        case .search(let search): return search
        case .create(let item): return Parameter.jsonObject(value: item)
        }
    }

    var authorizationToken: AuthorizationToken? { .bearer(token: "t") }
}

/// A parameters type of the app's own: no annotation either.
struct Search: ParametersRepresentable {
    let term: String

    func apply(to parameters: inout RequestParameters) throws {
        parameters.appendQueryItem(name: "q", value: term)
    }
}

/// A stub server: echoes the item asked for, by id or by search term.
nonisolated func stubbedConnect() -> Connect {
    let transport = StubTransport { request in
        let path = request.url?.path ?? ""
        if request.httpMethod == "POST", let body = request.httpBody {
            return StubTransport.Reply(statusCode: 201, headers: ["Content-Type": "application/json"], body: body)
        }
        let term = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems?.first?.value
        let id = Int(path.split(separator: "/").last ?? "") ?? 0
        return try StubTransport.Reply.json(Item(id: id, name: term ?? "item \(id)"))
    }
    return Connect(transport: transport)
}

/// The connector used from an actor, from nonisolated code, in `async let` and in a `flatMap`
/// step: each an isolation other than the main actor's.
actor Repository {
    let connect = stubbedConnect()

    func item(_ id: Int) async throws -> Item {
        try await connect.request(ItemsConnector.get(id: id)).decoded(toType: Item.self).value
    }
}

nonisolated func twoItems(connect: Connect) async throws -> [Item] {
    async let first = connect.request(ItemsConnector.get(id: 1)).decoded(toType: Item.self).value
    async let second = connect.request(ItemsConnector.search(Search(term: "lamp"))).decoded(toType: Item.self).value
    return try await [first, second]
}

func createdThenFetched(connect: Connect) -> Future<Item> {
    connect.request(ItemsConnector.create(Item(id: 7, name: "new"))).decoded(toType: Item.self)
        .flatMap { created in connect.request(ItemsConnector.get(id: created.id)).decoded(toType: Item.self) }
}

/// A view model, main-actor isolated by default.
final class ItemsViewModel {
    private(set) var items: [Item] = []
    let connect = stubbedConnect()

    func load() async throws {
        items = try await twoItems(connect: connect)
    }
}

@Suite("An app target whose default isolation is the main actor")
struct AppTargetTests {
    @Test func aConnectorWithoutAnnotationsWorksFromAnActor() async throws {
        #expect(try await Repository().item(3) == Item(id: 3, name: "item 3"))
    }

    @Test func aConnectorWorksInAsyncLetAndFromAViewModel() async throws {
        let model = ItemsViewModel()
        try await model.load()
        #expect(model.items == [Item(id: 1, name: "item 1"), Item(id: 0, name: "lamp")])
    }

    @Test func aConnectorWorksInAFlatMapStep() async throws {
        #expect(try await createdThenFetched(connect: stubbedConnect()).value == Item(id: 7, name: "item 7"))
    }

    @Test func aConnectorBuildsOffTheMainActor() async throws {
        let request = try await Task.detached {
            try ItemsConnector.search(Search(term: "a b")).asURLRequest()
        }.value
        #expect(request.url?.absoluteString == "https://api.example.test/v1/items?q=a%20b")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }
}
