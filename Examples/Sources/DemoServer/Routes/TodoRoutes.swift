import HTTPTypes
import Hummingbird

/// The todos resource: list (paged, filtered), get, latest (a redirect), create, update, delete.
struct TodoRoutes {
    let store: DemoStore

    func register(on api: RouterGroup<BasicRequestContext>) {
        // GET /todos?page=1&perPage=10&completed=false&q=word, total in X-Total-Count
        api.get("todos") { request, context -> EditedResponse<[TodoItem]> in
            let user = try await request.authenticatedUser(in: store)
            let query = request.uri.queryParameters
            let page = try integer(query["page"], named: "page", default: 1, in: 1...10_000)
            let perPage = try integer(query["perPage"], named: "perPage", default: 10, in: 1...50)
            let completed: Bool?
            switch query["completed"] {
            case nil: completed = nil
            case "true": completed = true
            case "false": completed = false
            case let other?: throw APIError(.badRequest, "completed must be true or false, not '\(other)'")
            }
            let all = await store.todos(of: user, completed: completed, matching: query["q"].map(String.init))
            let pageOfTodos = Array(all.dropFirst((page - 1) * perPage).prefix(perPage))
            return EditedResponse(headers: [.xTotalCount: "\(all.count)"], response: pageOfTodos)
        }

        // GET /todos/latest → 302 Location: /v1/todos/{id}
        api.get("todos/latest") { request, context -> Response in
            let user = try await request.authenticatedUser(in: store)
            let latest = try await store.latestTodo(of: user)
            return Response.redirect(to: "/v1/todos/\(latest.id)", type: .found)
        }

        api.get("todos/:id") { request, context -> TodoItem in
            let user = try await request.authenticatedUser(in: store)
            return try await store.todo(try context.parameters.id("id"), of: user)
        }

        // POST /todos {"title": …} → 201 Created, Location: /v1/todos/{id}
        api.post("todos") { request, context -> EditedResponse<TodoItem> in
            let user = try await request.authenticatedUser(in: store)
            let body = try await request.decode(as: NewTodoBody.self, context: context)
            let todo = try await store.addTodo(title: body.title, completed: body.completed ?? false, for: user)
            return EditedResponse(status: .created, headers: [.location: "/v1/todos/\(todo.id)"], response: todo)
        }

        // PUT /users/{userId}/todos/{todoId}?action=update|complete with the changes as JSON
        api.put("users/:userId/todos/:todoId") { request, context -> TodoItem in
            let user = try await request.authenticatedUser(in: store)
            let userId = try context.parameters.id("userId")
            let todoId = try context.parameters.id("todoId")
            guard userId == user else { throw APIError(.notFound, "user \(userId) has no todo \(todoId)") }
            let changes = try await request.decode(as: TodoChangesBody.self, context: context)
            switch request.uri.queryParameters["action"] {
            case "update":
                return try await store.updateTodo(todoId, of: user, title: changes.title, completed: changes.completed)
            case "complete":
                return try await store.updateTodo(todoId, of: user, title: changes.title, completed: true)
            case let other:
                throw APIError(.badRequest, "action must be update or complete, not '\(other ?? "")'")
            }
        }

        api.delete("todos/:id") { request, context -> HTTPResponse.Status in
            let user = try await request.authenticatedUser(in: store)
            try await store.deleteTodo(try context.parameters.id("id"), of: user)
            return .noContent
        }
    }

    /// A query parameter as an integer in `range`, or `default` when absent; `400` otherwise.
    private func integer(_ value: Substring?, named name: String, default: Int, in range: ClosedRange<Int>) throws
        -> Int
    {
        guard let value else { return `default` }
        guard let number = Int(value), range.contains(number) else {
            throw APIError(.badRequest, "\(name) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}

extension HTTPField.Name {
    /// The pagination header: how many todos match, on all pages.
    static var xTotalCount: Self { Self("X-Total-Count")! }
}
