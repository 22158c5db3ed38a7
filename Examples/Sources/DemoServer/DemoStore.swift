import Foundation
import Hummingbird

/// The demo API's state: one account, its tokens, its todos and its avatar. In memory only.
actor DemoStore {
    private let configuration: DemoServer.Configuration
    private let userId = 1
    private var accessTokens: [String: Date] = [:]  // token → expiry
    private var refreshTokens: Set<String> = []
    private var todos: [Int: TodoItem] = [:]
    private var nextTodoId = 1
    private(set) var avatar: AvatarReceipt?

    init(_ configuration: DemoServer.Configuration) {
        self.configuration = configuration
        let seeds = [
            ("Read the SwiftConnect usage guide", true),
            ("Describe the todos API as a Connector", true),
            ("Chain requests with flatMap", false),
            ("Show the server's error message", false),
            ("Upload an avatar with a progress bar", false),
            ("Refresh an expired token once", false),
            ("Await a request with async/await", true),
        ]
        for (title, completed) in seeds {
            todos[nextTodoId] = TodoItem(userId: userId, id: nextTodoId, title: title, completed: completed)
            nextTodoId += 1
        }
    }

    // MARK: Authentication

    func logIn(username: String, password: String) throws -> TokenReply {
        guard username == configuration.username, password == configuration.password else {
            throw APIError(.unauthorized, "wrong username or password")
        }
        return issueTokens()
    }

    func refresh(refreshToken: String) throws -> TokenReply {
        guard refreshTokens.remove(refreshToken) != nil else {
            throw APIError(.unauthorized, "unknown or used refresh token")
        }
        return issueTokens()
    }

    /// The user an `Authorization: Bearer …` header belongs to.
    func user(authorizedBy header: String?) throws -> Int {
        let challenge: HTTPFields = [.wwwAuthenticate: #"Bearer realm="demo""#]
        guard let header, header.hasPrefix("Bearer ") else {
            throw APIError(.unauthorized, "missing bearer token", headers: challenge)
        }
        guard let expiry = accessTokens[String(header.dropFirst("Bearer ".count))] else {
            throw APIError(.unauthorized, "invalid access token", headers: challenge)
        }
        guard expiry > Date() else {
            throw APIError(.unauthorized, "access token expired", headers: challenge)
        }
        return userId
    }

    /// Makes every access token expire now.
    func expireAccessTokens() {
        for token in accessTokens.keys { accessTokens[token] = .distantPast }
    }

    private func issueTokens() -> TokenReply {
        let access = Self.randomToken(prefix: "at_")
        let refresh = Self.randomToken(prefix: "rt_")
        accessTokens[access] = Date().addingTimeInterval(configuration.tokenLifetime)
        refreshTokens.insert(refresh)
        return TokenReply(
            accessToken: access, refreshToken: refresh, tokenType: "Bearer", expiresIn: configuration.tokenLifetime,
            userId: userId)
    }

    private static func randomToken(prefix: String) -> String {
        prefix + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    // MARK: Todos

    /// The user's todos in id order, filtered.
    func todos(of userId: Int, completed: Bool?, matching search: String?) -> [TodoItem] {
        todos.values
            .filter { $0.userId == userId }
            .filter { completed == nil || $0.completed == completed }
            .filter { todo in search.map { todo.title.localizedCaseInsensitiveContains($0) } ?? true }
            .sorted { $0.id < $1.id }
    }

    func todo(_ id: Int, of userId: Int) throws -> TodoItem {
        guard let todo = todos[id], todo.userId == userId else {
            throw APIError(.notFound, "todo \(id) not found")
        }
        return todo
    }

    func latestTodo(of userId: Int) throws -> TodoItem {
        guard let latest = todos(of: userId, completed: nil, matching: nil).last else {
            throw APIError(.notFound, "no todos yet")
        }
        return latest
    }

    func addTodo(title: String, completed: Bool, for userId: Int) throws -> TodoItem {
        let title = try Self.validated(title)
        let todo = TodoItem(userId: userId, id: nextTodoId, title: title, completed: completed)
        todos[todo.id] = todo
        nextTodoId += 1
        return todo
    }

    func updateTodo(_ id: Int, of userId: Int, title: String?, completed: Bool?) throws -> TodoItem {
        var todo = try self.todo(id, of: userId)
        if let title { todo.title = try Self.validated(title) }
        if let completed { todo.completed = completed }
        todos[id] = todo
        return todo
    }

    func deleteTodo(_ id: Int, of userId: Int) throws {
        _ = try todo(id, of: userId)
        todos[id] = nil
    }

    private static func validated(_ title: String) throws -> String {
        let title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { throw APIError(.unprocessableContent, "title must not be empty") }
        guard title.count <= 200 else { throw APIError(.unprocessableContent, "title must be at most 200 characters") }
        return title
    }

    // MARK: Avatar

    func setAvatar(_ avatar: AvatarReceipt) {
        self.avatar = avatar
    }
}
