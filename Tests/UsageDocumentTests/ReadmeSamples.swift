// The code samples of README.md, compiled in Swift 5 and Swift 6 language modes. See UsageSamples.swift.
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Post: Codable, Sendable {
    let id: Int
    let title: String
}

enum PostConnector: Connector {
    case get(id: Int)
    case search(term: String)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }

    var endpoint: String {
        switch self {
        case .get: return "/posts/{id}"
        case .search: return "/posts"
        }
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .get(let id): return Parameter.path(key: "id", value: "\(id)")
        case .search(let term): return Parameter.query(key: "q", value: term)
        }
    }
}

func showPost() {
    Connect.default.request(PostConnector.get(id: 1)).decoded(toType: Post.self).observe { result in
        print(result)
    }
}

func findPosts() async throws -> [Post] {
    try await Connect.default.request(PostConnector.search(term: "swift & co")).decoded(toType: [Post].self).value
}
