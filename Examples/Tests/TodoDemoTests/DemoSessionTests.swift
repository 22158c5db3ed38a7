import DemoServer
import Foundation
import Synchronization
import Testing

@testable import TodoDemo

/// Runs the scripted session of `todo-demo` against the in-process demo API and checks every step.
/// Each test starts its own server; `ConnectConfiguration.baseURL` points the session at it.
struct DemoSessionTests {
    @Test func everyStepGetsWhatItExpects() async throws {
        let (report, events) = try await runSession(verbose: false)

        // Log in: a wrong password comes back as the server's message, then the real login.
        #expect(report.rejectedLogin == ServerError(status: 401, message: "wrong username or password"))
        #expect(report.tokens?.userId == 1)
        #expect(report.tokens?.expiresIn == 300)

        // List: a page of three open todos, four in all per X-Total-Count.
        #expect(report.openTodos.map(\.id) == [3, 4, 5])
        #expect(report.openTodos.allSatisfy { !$0.completed })
        #expect(report.openTodoTotal == 4)

        // Create → follow the redirect → complete → delete, as one chain of futures.
        let created = try #require(report.created)
        #expect(report.createdStatus == 201)
        #expect(created.title == "Try SwiftConnect")
        #expect(!created.completed)
        #expect(report.latestURL?.path == "/v1/todos/\(created.id)")
        #expect(report.latest == created)
        #expect(report.completed == Todo(userId: 1, id: created.id, title: "Tried SwiftConnect", completed: true))
        #expect(report.deleteStatus == 204)

        // Server errors through the default ErrorHandler: status and {"message": …}.
        #expect(
            report.serverErrors == [
                ServerError(status: 404, message: "todo \(created.id) not found"),
                ServerError(status: 422, message: "title must not be empty"),
                ServerError(status: 400, message: "perPage must be a number from 1 to 50"),
            ])

        // Avatar: the image from disk and the caption field, as multipart/form-data, with progress.
        let avatar = try #require(report.avatar)
        #expect(avatar.filename == "ada.png")
        #expect(avatar.contentType == "image/png")
        #expect(avatar.bytes == DemoAvatar.png(size: 768).count)
        #expect(avatar.fields == ["caption": "Ada, 1843"])
        let progress = events.compactMap { if case .progress(let fraction) = $0 { fraction } else { nil } }
        #expect(progress.last == 1)
        #expect(progress == progress.sorted())

        // Token expiry: the requests in flight got 401, one refresh ran, all were sent again.
        #expect(report.concurrentRequests == 3)
        #expect((1...3).contains(report.unauthorizedResponses))
        #expect(report.refreshes == 1)
        #expect(report.succeededAfterRefresh == 3)

        #expect(events.filter { if case .step = $0 { true } else { false } }.count == 6)
        #expect(!events.contains { if case .debug = $0 { true } else { false } })
    }

    @Test func verboseShowsRequestsAsCURLWithCredentialsRedacted() async throws {
        let (_, events) = try await runSession(verbose: true)
        let debugOutput = events.compactMap { if case .debug(let text) = $0 { text } else { nil } }.joined(
            separator: "\n")

        #expect(debugOutput.contains("$ curl -v"))
        #expect(debugOutput.contains(#"-H "Authorization: <redacted>""#))
        #expect(debugOutput.contains("?action=complete"))
        #expect(!debugOutput.contains("lovelace"))
    }

    /// Starts the demo API, points the connectors at it and runs the session.
    private func runSession(verbose: Bool) async throws -> (DemoReport, [DemoEvent]) {
        let server = try await DemoServer.start()
        let events = Mutex<[DemoEvent]>([])
        let report: DemoReport
        do {
            report = try await DemoSession(baseURL: server.baseURL, verbose: verbose) { event in
                events.withLock { $0.append(event) }
            }.run()
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        return (report, events.withLock { $0 })
    }
}
