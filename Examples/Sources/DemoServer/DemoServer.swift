import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The demo REST API, run in-process on a free loopback port.
///
/// ```swift
/// let server = try await DemoServer.start()
/// print(server.baseURL)  // http://127.0.0.1:54321/v1
/// await server.stop()
/// ```
///
/// Routes, all under `/v1`, all answering errors as `{"message": "…"}`:
///
/// | route | |
/// |---|---|
/// | `POST /auth/login` | JSON `{username, password}` → tokens; `401` on a wrong password |
/// | `POST /auth/refresh` | form `grant_type=refresh_token&refresh_token=…` → new tokens |
/// | `GET /todos?page&perPage&completed&q` | a page of todos, `X-Total-Count` header; `400` on bad paging |
/// | `GET /todos/{id}` | a todo; `404` if there is none |
/// | `GET /todos/latest` | `302` to the newest todo |
/// | `POST /todos` | JSON `{title, completed?}` → `201` with `Location`; `422` on an empty title |
/// | `PUT /users/{userId}/todos/{todoId}?action=update\|complete` | JSON changes → the todo |
/// | `DELETE /todos/{id}` | `204` |
/// | `POST /users/{userId}/avatar` | `multipart/form-data` with a file `avatar` and text fields → `201` |
/// | `POST /debug/expire-tokens` | expires every access token now, to show a token refresh |
///
/// Every route but login, refresh and the debug route needs `Authorization: Bearer <access token>`.
public enum DemoServer {
    /// How the server behaves.
    public struct Configuration: Sendable {
        /// The port to listen on; `0` picks a free one.
        public var port: Int
        /// How long an access token lives, in seconds.
        public var tokenLifetime: TimeInterval
        /// The one account: its user name.
        public var username: String
        /// The one account: its password.
        public var password: String

        /// Creates a configuration: a free port, tokens that live five minutes, `ada` / `lovelace`.
        public init(
            port: Int = 0, tokenLifetime: TimeInterval = 300, username: String = "ada", password: String = "lovelace"
        ) {
            self.port = port
            self.tokenLifetime = tokenLifetime
            self.username = username
            self.password = password
        }
    }

    /// Starts the server on `127.0.0.1` and returns once it accepts connections.
    ///
    /// - Throws: Why the server could not start (the port is taken, …).
    public static func start(_ configuration: Configuration = Configuration()) async throws -> RunningDemoServer {
        let store = DemoStore(configuration)
        var logger = Logger(label: "DemoServer")
        logger.logLevel = .warning
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: makeRouter(store: store),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: configuration.port)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? configuration.port)
                portContinuation.finish()
            },
            logger: logger
        )
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await services.run()
        }
        guard let port = await ports.first(where: { _ in true }) else {
            try await task.value  // throws why the server stopped before listening
            throw DemoServerDidNotStart()
        }
        return RunningDemoServer(port: port, services: services, task: task)
    }
}

/// A running demo server.
public struct RunningDemoServer: Sendable {
    /// The port it listens on.
    public let port: Int
    fileprivate let services: ServiceGroup
    fileprivate let task: Task<Void, any Error>

    /// The API's base URL, `http://127.0.0.1:<port>/v1`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)/v1")!
    }

    /// Stops the server gracefully and waits until it has closed its port.
    public func stop() async {
        await services.triggerGracefulShutdown()
        _ = await task.result
    }

    /// Serves until the calling task is cancelled.
    public func wait() async throws {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}

/// The server stopped before it listened.
struct DemoServerDidNotStart: Error, CustomStringConvertible {
    var description: String { "The demo server stopped before it listened on a port" }
}
