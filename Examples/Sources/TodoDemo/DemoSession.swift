import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The scripted tour of SwiftConnect against the demo API: log in, list, create, update and delete
/// todos, provoke server errors, upload an avatar and survive an expired token.
///
/// ```swift
/// let report = try await DemoSession(baseURL: server.baseURL) { event in print(event) }.run()
/// ```
///
/// Each step reports what happens through `onEvent` and records what came back in the
/// ``DemoReport``. A step that gets something it did not expect throws, and the tour stops.
public final class DemoSession: Sendable {
    private let username: String
    private let password: String
    private let verbose: Bool
    private let emit: @Sendable (DemoEvent) -> Void
    private let client: DemoClient
    private let recorder = ReportRecorder()

    /// Creates a session against the API at `baseURL`.
    ///
    /// - Parameters:
    ///   - baseURL: Where the API runs (with its `/v1` base path); every connector is sent there.
    ///   - username: The account to log in with.
    ///   - password: Its password.
    ///   - verbose: Shows every request as a cURL command and every response (`debugResponse: true`).
    ///   - onEvent: Receives what happens, step by step, from any thread.
    public init(
        baseURL: URL = DemoAPI.baseURL,
        username: String = "ada",
        password: String = "lovelace",
        verbose: Bool = false,
        onEvent: @escaping @Sendable (DemoEvent) -> Void
    ) {
        self.username = username
        self.password = password
        self.verbose = verbose
        self.emit = onEvent
        var configuration = ConnectConfiguration()
        configuration.baseURL = baseURL
        configuration.logger = EventLogger(emit: onEvent)
        let recorder = self.recorder
        client = DemoClient(
            configuration: configuration,
            interceptors: [
                // Middleware sees every response first: count the 401s the token refresh answers.
                ClosureInterceptor { response in
                    if response.statusCode == 401 {
                        recorder.record { $0.unauthorizedResponses += 1 }
                        onEvent(.note("401 for \(DemoSession.describe(response.request))"))
                    }
                    return .proceed
                }
            ],
            debugResponse: verbose
        )
    }

    private var connect: Connect { client.connect }

    /// Runs every step in order.
    ///
    /// - Returns: What each step got back.
    /// - Throws: The first unexpected error.
    public func run() async throws -> DemoReport {
        let tokens = try await logIn()
        _ = try await listOpenTodos().value
        let deleted = try await createCompleteAndDelete().value
        try await provokeServerErrors(deletedId: deleted.id)
        try await uploadAvatar(userId: tokens.userId)
        try await outliveExpiredToken()
        return recorder.report
    }

    // MARK: Steps

    /// Logs in with a wrong password (the server's `401` message comes back), then for real.
    func logIn() async throws -> Tokens {
        emit(.step("Log in: POST /auth/login"))
        let rejected = try await serverError { try await self.client.logIn(username: self.username, password: "guess") }
        let tokens = try await client.logIn(username: username, password: password)
        emit(.success("Logged in as \(username); the access token lives \(Int(tokens.expiresIn)) s"))
        recorder.record {
            $0.rejectedLogin = rejected
            $0.tokens = tokens
        }
        return tokens
    }

    /// Lists the first page of open todos, with the total from the `X-Total-Count` header.
    func listOpenTodos() -> Future<[Todo]> {
        emit(.step("List open todos: GET /todos?page=1&perPage=3&completed=false"))
        return connect.response(TodoConnector.list(page: 1, perPage: 3, completed: false), debugResponse: verbose)
            .map { [self] response in
                let todos = try response.decoded(toType: [Todo].self)
                let total = response.headers["X-Total-Count"].flatMap { Int($0) }
                emit(.success("\(response.statusCode): \(todos.count) of \(total ?? 0) open todos (X-Total-Count)"))
                for todo in todos { emit(.note("#\(todo.id) \(todo.title)")) }
                recorder.record {
                    $0.openTodos = todos
                    $0.openTodoTotal = total
                }
                return todos
            }
    }

    /// Creates a todo, fetches the newest todo through a redirect, completes it and deletes it:
    /// one chain of futures, each request sent when the one before has answered.
    func createCompleteAndDelete() -> Future<Todo> {
        emit(.step("Create, update and delete a todo: one chain of futures"))
        return connect.response(TodoConnector.create(NewTodo(title: "Try SwiftConnect")), debugResponse: verbose)
            .map { [self] response in try show(created: response) }
            .flatMap { [self] _ in
                connect.response(TodoConnector.latest, debugResponse: verbose)
            }
            .map { [self] response in try show(redirected: response) }
            .flatMap { [self] latest in
                let changes = TodoChanges(title: "Tried SwiftConnect")
                let update = TodoConnector.update(
                    userId: latest.userId, todoId: latest.id, action: .complete, object: changes)
                return connect.request(update, debugResponse: verbose)
            }
            .decoded(toType: Todo.self)
            .flatMap { [self] completed in
                show(completed: completed)
                return connect.response(TodoConnector.delete(id: completed.id), debugResponse: verbose)
                    .map { [self] response in
                        show(deleted: completed, response)
                        return completed
                    }
            }
    }

    /// Asks for what the server refuses; the default `ErrorHandler` reads its `{"message": …}`.
    func provokeServerErrors(deletedId: Int) async throws {
        emit(.step("Server errors: the ErrorHandler reads {\"message\": …}"))
        let errors = [
            try await serverError {
                try await connect.request(TodoConnector.get(id: deletedId), debugResponse: verbose)
                    .decoded(toType: Todo.self).value
            },
            try await serverError {
                try await connect.request(TodoConnector.create(NewTodo(title: " ")), debugResponse: verbose)
                    .decoded(toType: Todo.self).value
            },
            try await serverError {
                try await connect.request(TodoConnector.list(perPage: 500), debugResponse: verbose)
                    .decoded(toType: [Todo].self).value
            },
        ]
        recorder.record { $0.serverErrors = errors }
    }

    /// Uploads an avatar image from disk with a text field, reporting the upload's progress.
    func uploadAvatar(userId: Int) async throws {
        emit(.step("Upload an avatar: POST /users/\(userId)/avatar as multipart/form-data"))
        let image = try DemoAvatar.writePNG()
        defer { try? FileManager.default.removeItem(at: image) }

        let avatar = File(name: "ada.png", key: "avatar", mimeType: .png, fileURL: image)
        let receipt = try await connect.upload(
            files: [avatar], to: AvatarConnector.upload(userId: userId, caption: "Ada, 1843"), debugResponse: verbose
        ) { [emit] progress in
            emit(.progress(progress.fractionCompleted))
        }
        .decoded(toType: AvatarReceipt.self)
        .value

        let size = ByteCountFormatter.string(fromByteCount: Int64(receipt.bytes), countStyle: .file)
        emit(.success("Uploaded \(receipt.filename) (\(size)) with the caption \"\(receipt.fields["caption"] ?? "")\""))
        recorder.record { $0.avatar = receipt }
    }

    /// Lets the server expire the access token, then sends three requests at once: the
    /// `TokenAuthenticator` refreshes the token once and sends all three again.
    func outliveExpiredToken() async throws {
        emit(.step("Token expiry: three requests at once, one refresh (async/await)"))
        let refreshesBefore = await client.authenticator.refreshCount
        _ = try await connect.response(DebugConnector.expireTokens, debugResponse: verbose).value
        emit(.note("POST /debug/expire-tokens: the server no longer accepts the access token"))

        async let open = connect.request(TodoConnector.list(completed: false), debugResponse: verbose)
            .decoded(toType: [Todo].self).value
        async let done = connect.request(TodoConnector.list(completed: true), debugResponse: verbose)
            .decoded(toType: [Todo].self).value
        async let first = connect.request(TodoConnector.get(id: 1), debugResponse: verbose)
            .decoded(toType: Todo.self).value
        let (openTodos, doneTodos, firstTodo) = try await (open, done, first)

        let refreshes = await client.authenticator.refreshCount - refreshesBefore
        emit(.success("\(refreshes) token refresh for 3 requests; all 3 then succeeded"))
        emit(.note("\(openTodos.count) open, \(doneTodos.count) done, #\(firstTodo.id) \(firstTodo.title)"))
        recorder.record {
            $0.concurrentRequests = 3
            $0.refreshes = refreshes
            $0.succeededAfterRefresh = 3
        }
    }

    // MARK: Reporting the todo chain

    private func show(created response: Response) throws -> Todo {
        let todo = try response.decoded(toType: Todo.self)
        emit(.success("\(response.statusCode): created #\(todo.id) at \(response.headers["Location"] ?? "?")"))
        recorder.record {
            $0.created = todo
            $0.createdStatus = response.statusCode
        }
        return todo
    }

    private func show(redirected response: Response) throws -> Todo {
        let todo = try response.decoded(toType: Todo.self)
        emit(.success("GET /todos/latest: followed the redirect to \(response.url?.path ?? "?")"))
        recorder.record {
            $0.latestURL = response.url
            $0.latest = todo
        }
        return todo
    }

    private func show(completed todo: Todo) {
        emit(.success("PUT /users/\(todo.userId)/todos/\(todo.id)?action=complete: \"\(todo.title)\", done"))
        recorder.record { $0.completed = todo }
    }

    private func show(deleted todo: Todo, _ response: Response) {
        emit(.success("DELETE /todos/\(todo.id): \(response.statusCode)"))
        recorder.record { $0.deleteStatus = response.statusCode }
    }

    // MARK: Helpers

    /// Runs `request`, which must fail with an error response, and reports the server's message.
    ///
    /// - Throws: ``UnexpectedOutcome`` when the request succeeds; its error when it fails otherwise.
    private func serverError<T: Sendable>(_ request: @Sendable () async throws -> T) async throws -> ServerError {
        do {
            let value = try await request()
            throw UnexpectedOutcome(description: "expected an error response, got \(value)")
        } catch ConnectError.unacceptableStatus(let response, let message) {
            let error = ServerError(status: response.statusCode, message: message ?? "")
            emit(.serverError(error, request: Self.describe(response.request)))
            return error
        }
    }

    /// `GET /todos/8?perPage=3`: the method and the URL below the API's base path (`/v1`).
    static func describe(_ request: URLRequest) -> String {
        let basePath = DemoAPI.baseURL.path
        var path = request.url?.path ?? ""
        if path.hasPrefix(basePath) { path.removeFirst(basePath.count) }
        return "\(request.httpMethod ?? "GET") \(path)" + (request.url?.query.map { "?\($0)" } ?? "")
    }
}

/// A step got something other than what it expected.
public struct UnexpectedOutcome: Error, CustomStringConvertible {
    /// What the step expected and what it got.
    public let description: String
}

/// Routes SwiftConnect's debug output (`debugResponse: true`) into the session's events.
struct EventLogger: ConnectLogger {
    let emit: @Sendable (DemoEvent) -> Void

    func log(_ message: String) {
        emit(.debug(message))
    }
}
