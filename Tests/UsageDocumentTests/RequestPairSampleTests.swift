import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Usage.md's two requests in flight together (`todoPair`, `loadTodoPair`), run on a stub that
/// holds the answers: both requests reach it before either answers, and when one fails, the
/// other's request is cancelled.
struct RequestPairSampleTests {
    /// What the stub saw: which todos were asked for, and which requests were cancelled.
    actor Arrivals {
        private(set) var ids: [Int] = []
        private(set) var cancelled: [Int] = []

        func arrived(_ id: Int) { ids.append(id) }
        func wasCancelled(_ id: Int) { cancelled.append(id) }

        /// Waits up to `seconds` for `condition`; whether it held.
        func wait(seconds: Double, until condition: @Sendable (Arrivals) async -> Bool) async -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if await condition(self) { return true }
                try? await Task.sleep(nanoseconds: 5_000_000)
            }
            return await condition(self)
        }
    }

    struct StubFailure: Error {}

    /// The todo's id, from the request's path (`/todos/{id}`).
    static func id(of request: URLRequest) -> Int {
        Int(request.url!.lastPathComponent)!
    }

    /// A client whose todo 1 is answered only once todo 2 has been asked for (the stub gives up
    /// after 30 s), and todo 2 at once; or, `failingFirst`, whose todo 1 is then a `500`, and todo 2
    /// is held until it is cancelled.
    static func connect(arrivals: Arrivals, failingFirst: Bool = false) -> Connect {
        let transport = StubTransport { request in
            let id = id(of: request)
            await arrivals.arrived(id)
            if id == 1 {
                guard await arrivals.wait(seconds: 30, until: { await $0.ids.contains(2) }) else {
                    throw StubFailure()
                }
                if failingFirst { return StubTransport.Reply(statusCode: 500) }
            } else if failingFirst {
                // Held until cancelled (or 60 s). The waits are long because the whole suite, run in
                // parallel under ThreadSanitizer on two cores, has held this test's tasks back for
                // more than 20 s; alone it takes milliseconds.
                do {
                    try await Task.sleep(nanoseconds: 60_000_000_000)
                } catch {
                    await arrivals.wasCancelled(id)
                    throw error
                }
            }
            return try .json(Todo(userId: 7, id: id, title: "todo \(id)", completed: false))
        }
        return Connect(configuration: ConnectConfiguration(), transport: transport)
    }

    static func expectServerError(_ error: Error?) {
        guard case .unacceptableStatus(let response, _)? = error as? ConnectError else {
            Issue.record("expected the first request's 500, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 500)
    }

    @Test func todoPairHasBothRequestsInFlightTogether() async throws {
        let arrivals = Arrivals()
        let (one, two) = try await todoPair(connect: Self.connect(arrivals: arrivals)).value
        #expect(one.id == 1 && two.id == 2)
        #expect(Set(await arrivals.ids) == [1, 2])
    }

    @Test func todoPairCancelsTheSecondRequestWhenTheFirstFails() async throws {
        let arrivals = Arrivals()
        let result = await todoPair(connect: Self.connect(arrivals: arrivals, failingFirst: true)).asyncResult
        Self.expectServerError(result.failure)
        #expect(await arrivals.wait(seconds: 30, until: { await $0.cancelled == [2] }))
    }

    @Test func loadTodoPairHasBothRequestsInFlightTogether() async throws {
        let arrivals = Arrivals()
        let (one, two) = try await loadTodoPair(connect: Self.connect(arrivals: arrivals))
        #expect(one.id == 1 && two.id == 2)
        #expect(Set(await arrivals.ids) == [1, 2])
    }

    @Test func loadTodoPairCancelsTheSecondRequestWhenTheFirstFails() async throws {
        let arrivals = Arrivals()
        do {
            _ = try await loadTodoPair(connect: Self.connect(arrivals: arrivals, failingFirst: true))
            Issue.record("the pair should have failed")
        } catch {
            Self.expectServerError(error)
        }
        #expect(await arrivals.wait(seconds: 30, until: { await $0.cancelled == [2] }))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
