import Dispatch
import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Iterations per path and style: `SWIFTCONNECT_RACE_ITERATIONS`, none by default.
private let raceIterations = ProcessInfo.processInfo.environment["SWIFTCONNECT_RACE_ITERATIONS"].flatMap(Int.init) ?? 0

/// Cancelling a request at every moment of its life against a real URLSession transport, around
/// the moment its response arrives above all: it must end, once, and the process with it.
///
/// A hunt, run by hand (`SWIFTCONNECT_RACE_ITERATIONS=1000 scripts/test.sh --filter
/// CancellationRaceTests`), not in CI, for its length. FoundationNetworking trapped now and then
/// when a task was cancelled while it still asked the session's `URLCache` about the request ("Trying
/// to access a behaviour for a task that in not in the registry"); `SessionTaskSlot` now cancels a
/// transfer only once it has begun, or after a second. The deadlock these races found, and that
/// wait, are covered deterministically by `SessionTaskSlot`'s tests.
@Suite(
    .enabled(if: HTTPBin.isAvailable && raceIterations > 0, "set SWIFTCONNECT_RACE_ITERATIONS"),
    timeLimit(minutes: 10))
struct CancellationRaceTests {
    struct Call: Connector {
        var baseURL: URL { HTTPBin.baseURL }
        var endpoint: String { "/get" }
    }

    /// Whether `task` ends within `seconds`, polled, so that a hang fails the test instead of
    /// hanging it.
    static func ends(_ task: Task<Result<Data, any Error>, Never>, within seconds: Double) async -> Bool {
        let ended = Flag()
        Task {
            _ = await task.value
            ended.set()
        }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if ended.isSet { return true }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return false
    }

    final class Flag: @unchecked Sendable {
        // @unchecked Sendable: `value` is only touched under `lock`.
        private let lock = NSLock()
        private var value = false

        var isSet: Bool { lock.withLock { value } }

        func set() { lock.withLock { value = true } }
    }

    /// A client whose requests take the direct path or go through the pipeline (an adapter that
    /// changes nothing), and the time one request to httpbin takes.
    static func client(throughThePipeline: Bool) async throws -> (Connect, TimeInterval) {
        let middleware: any ConnectMiddlewareProtocol =
            throughThePipeline ? ConnectMiddleware(adapters: [ClosureAdapter { $0 }]) : ConnectMiddleware()
        let connect = HTTPBin.connect(middleware: middleware)
        let start = Date()
        _ = try await connect.request(Call()).value
        return (connect, max(Date().timeIntervalSince(start), 0.001))
    }

    /// Waits before the cancellation of race `index`: from 0 to twice `roundTrip`, in 30 steps.
    static func wait(_ index: Int, of roundTrip: TimeInterval) async throws {
        let delay = roundTrip * Double(index % 30) / 15
        try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
    }

    /// A Swift task awaiting a request is cancelled at delays from 0 to twice a round trip: the
    /// task's cancellation handler and URLSession's delivery of the response meet. (It deadlocked:
    /// the handler cancelled the URLSession task, which waits for the session's queue, holding the
    /// Swift task's lock that the queue needed to resume it.)
    @Test(arguments: [false, true])
    func cancellingATaskAsItsResponseArrivesNeverHangs(throughThePipeline: Bool) async throws {
        let (connect, roundTrip) = try await Self.client(throughThePipeline: throughThePipeline)
        for index in 0..<raceIterations {
            let task = Task { await connect.request(Call()).asyncResult }
            try await Self.wait(index, of: roundTrip)
            task.cancel()
            let ended = await Self.ends(task, within: 10)
            try #require(ended, "iteration \(index) hung")
            let result = await task.value
            if case .failure(let error) = result {
                #expect((error as? ConnectError)?.isCancellation == true, "iteration \(index): \(error)")
            }
        }
    }

    /// The same race with the future's own `cancel()`.
    @Test(arguments: [false, true])
    func cancellingAFutureAsItsResponseArrivesEndsItOnce(throughThePipeline: Bool) async throws {
        let (connect, roundTrip) = try await Self.client(throughThePipeline: throughThePipeline)
        for index in 0..<raceIterations {
            let future = connect.request(Call())
            let task = Task { await future.asyncResult }
            try await Self.wait(index, of: roundTrip)
            future.cancel()
            let ended = await Self.ends(task, within: 10)
            try #require(ended, "iteration \(index) hung")
        }
    }
}

/// Cancelling a request while URLSession reports a redirect: FoundationNetworking traps when a
/// task is cancelled between its redirect callback and the answer to it ("Received callback for
/// HTTP redirection, but we're not waiting for it"), which plain URLSession code hits within a few
/// tries. Run in CI, unlike the hunt above: the redirect window is wide, and each try is short.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 3))
struct RedirectCancellationTests {
    struct Hop: Connector {
        var baseURL: URL { HTTPBin.baseURL }
        var endpoint: String { "/redirect-to" }
        var parameters: ParametersRepresentable? {
            CompositeParameters(.query(key: "url", value: "/get"), .query(key: "status_code", value: "302"))
        }
    }

    /// The future's `cancel()` or the awaiting task's cancellation, on the direct path or through
    /// the pipeline, at waits from nothing to two round trips of the redirect.
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func cancellingAsARedirectArrivesEndsTheRequestOnceAndKeepsTheProcessAlive(
        throughThePipeline: Bool, cancellingTheTask: Bool
    ) async throws {
        let middleware: any ConnectMiddlewareProtocol =
            throughThePipeline ? ConnectMiddleware(adapters: [ClosureAdapter { $0 }]) : ConnectMiddleware()
        let connect = HTTPBin.connect(middleware: middleware)
        // The quickest of three round trips, at most 20 ms: measured while the other tests run, a
        // slow one would stretch every wait (100 of them) far past the moments that matter.
        var roundTrip = 0.02
        for _ in 0..<3 {
            let start = Date()
            _ = try await connect.request(Hop()).value
            roundTrip = min(roundTrip, max(Date().timeIntervalSince(start), 0.001))
        }
        var cancelled = 0
        for index in 0..<100 {
            let future = connect.request(Hop())
            let task = Task { await future.asyncResult }
            try await CancellationRaceTests.wait(index, of: roundTrip)
            if cancellingTheTask { task.cancel() } else { future.cancel() }
            let ended = await CancellationRaceTests.ends(task, within: 10)
            try #require(ended, "iteration \(index) hung")
            if case .failure(let error) = await task.value {
                #expect((error as? ConnectError)?.isCancellation == true, "iteration \(index): \(error)")
                cancelled += 1
            }
        }
        // Some requests were cancelled in flight, and the session still works.
        #expect(cancelled > 0)
        _ = try await connect.request(Hop()).value
    }
}
