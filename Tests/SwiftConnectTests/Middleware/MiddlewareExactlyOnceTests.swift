import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

private struct AdapterFailed: Error {}

/// One request's mix of trouble.
private struct Scenario: Sendable, CustomStringConvertible {
    enum Cancel: Sendable, Equatable {
        case never
        case immediately
        case after(microseconds: UInt64)
        /// While the transport holds the first attempt.
        case inTransport
        /// While the pipeline waits out a `Retry-After` before the next attempt.
        case inBackoff
        /// By cancelling the task awaiting the future.
        case awaitingTask(afterMicroseconds: UInt64)
    }

    let id: Int
    /// Every adaptation throws (after the token adapter has run).
    let adapterThrows: Bool
    /// The server answers 401 once; the authenticator refreshes and retries.
    let unauthorized: Bool
    /// The server answers 503 once; the retry policy retries.
    let busy: Bool
    let cancel: Cancel

    init(id: Int, using generator: inout SeededGenerator) {
        self.id = id
        let roll = Int.random(in: 0..<100, using: &generator)
        cancel =
            switch roll {
            case 0..<35: .never
            case 35..<45: .immediately
            case 45..<65: .after(microseconds: UInt64.random(in: 0...3_000, using: &generator))
            case 65..<75: .inTransport
            case 75..<85: .inBackoff
            default: .awaitingTask(afterMicroseconds: UInt64.random(in: 0...3_000, using: &generator))
            }
        let mustReachTheServer = cancel == .inTransport || cancel == .inBackoff
        adapterThrows = !mustReachTheServer && Int.random(in: 0..<100, using: &generator) < 25
        unauthorized = Int.random(in: 0..<100, using: &generator) < 35
        busy = Int.random(in: 0..<100, using: &generator) < 35
    }

    /// Sent as `X-Scenario`, read by the adapter and the server.
    var flags: String {
        var flags: [String] = []
        if adapterThrows { flags.append("adapter") }
        if unauthorized { flags.append("unauthorized") }
        if busy { flags.append("busy") }
        if cancel == .inTransport { flags.append("hold") }
        if cancel == .inBackoff { flags.append("backoff") }
        return flags.joined(separator: ",")
    }

    /// How many sends the request makes when nothing cancels it.
    var sendsWithoutCancel: Int {
        adapterThrows ? 0 : 1 + (unauthorized ? 1 : 0) + (busy ? 1 : 0)
    }

    var description: String { "#\(id) [\(flags)] cancel: \(cancel)" }
}

/// `Retry-After` values at or above this carry a request id (`base + id`) that the test's sleep
/// recognises as "this request is now in its backoff".
private let backoffMarker: TimeInterval = 100_000

@Suite("Middleware: every future completes exactly once", timeLimit(minutes: 2))
struct MiddlewareExactlyOnceTests {
    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003] as [UInt64])
    func everyFutureCompletesExactlyOnceThroughAdapterFailureRetryRefreshAndCancellation(seed: UInt64) async throws {
        let count = 200
        var generator = SeededGenerator(state: seed)
        let scenarios = (0..<count).map { Scenario(id: $0, using: &generator) }
        let inTransport = Dictionary(uniqueKeysWithValues: scenarios.map { ($0.id, Fixtures.Gate()) })
        let inBackoff = Dictionary(uniqueKeysWithValues: scenarios.map { ($0.id, Fixtures.Gate()) })
        let marks = Middleware.Tally()

        // The server: each flag costs one failed attempt, in a fixed order.
        let transport = RecordingTransport { request in
            let id = Int(request.value(forHTTPHeaderField: "X-Request") ?? "") ?? -1
            let flags = Set(
                (request.value(forHTTPHeaderField: "X-Scenario") ?? "").split(separator: ",").map(String.init))
            try await Task.sleep(nanoseconds: UInt64(id % 7) * 50_000)
            if flags.contains("hold") {
                inTransport[id]?.open()
                try await Task.sleep(nanoseconds: 30_000_000_000)
            }
            if flags.contains("unauthorized"), marks.increment("401 \(id)") == 1 {
                return Fixtures.json(#"{"message":"token expired"}"#, status: 401)
            }
            if flags.contains("busy"), marks.increment("503 \(id)") == 1 {
                return Fixtures.json(#"{"message":"busy"}"#, status: 503)
            }
            if flags.contains("backoff") {
                return Fixtures.json("{}", status: 503, headers: ["Retry-After": "\(Int(backoffMarker) + id)"])
            }
            return Fixtures.json(#"{"ok":true}"#)
        }

        let refreshes = Fixtures.Counter()
        let authenticator = TokenAuthenticator(token: AccessToken("t0"), maximumRefreshes: 10_000) { _ in
            try await Task.sleep(nanoseconds: 200_000)
            return AccessToken("t\(refreshes.increment())")
        }
        let scenarioAdapter = ClosureAdapter { request in
            if request.value(forHTTPHeaderField: "X-Scenario")?.contains("adapter") == true { throw AdapterFailed() }
            return request
        }
        let policy = RetryPolicy(maximumAttempts: 5, baseDelay: 0.000_1, jitter: 0, maximumRetryAfter: 1_000_000)
        let middleware = ConnectMiddleware(
            adapters: [authenticator, scenarioAdapter], retriers: [authenticator, policy])
        let connect = Middleware.connect(transport: transport, middleware: middleware) { configuration in
            configuration.sleep = { seconds in
                if seconds >= backoffMarker {
                    inBackoff[Int(seconds - backoffMarker)]?.open()
                    try await Task.sleep(nanoseconds: 30_000_000_000)
                } else {
                    try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                }
            }
        }

        let observed = Middleware.Tally()
        let started = Date()
        let results = await withTaskGroup(of: (Int, Result<Data, any Error>).self) { group in
            for scenario in scenarios {
                group.addTask {
                    let call = Middleware.Call(headers: [
                        HTTPHeader(name: "X-Request", value: "\(scenario.id)"),
                        HTTPHeader(name: "X-Scenario", value: scenario.flags),
                    ])
                    let future = connect.request(call)
                    future.observe { _ in observed.increment("\(scenario.id)") }
                    switch scenario.cancel {
                    case .never:
                        break
                    case .immediately:
                        future.cancel()
                    case .after(let microseconds):
                        try? await Task.sleep(nanoseconds: microseconds * 1_000)
                        future.cancel()
                    case .inTransport:
                        try? await inTransport[scenario.id]?.wait()
                        future.cancel()
                    case .inBackoff:
                        try? await inBackoff[scenario.id]?.wait()
                        future.cancel()
                    case .awaitingTask(let microseconds):
                        let waiter = Task { await future.asyncResult }
                        try? await Task.sleep(nanoseconds: microseconds * 1_000)
                        waiter.cancel()
                        _ = await waiter.value
                    }
                    return (scenario.id, await future.asyncResult)
                }
            }
            var results: [Int: Result<Data, any Error>] = [:]
            for await (id, result) in group { results[id] = result }
            return results
        }
        let elapsed = Date().timeIntervalSince(started)

        // Late completions (a pipeline finishing after its future was cancelled) must not call
        // observers again: give them time to happen.
        try await Task.sleep(nanoseconds: 300_000_000)

        #expect(results.count == count)
        #expect(elapsed < 30, "took \(elapsed) s")
        let sent = transport.requests
        for scenario in scenarios {
            #expect(observed["\(scenario.id)"] == 1, "\(scenario): observer ran \(observed["\(scenario.id)"]) times")
            guard let result = results[scenario.id] else {
                Issue.record("\(scenario): no result")
                continue
            }
            let error = Fixtures.error(of: result)
            let isCancelled = (error as? ConnectError)?.isCancellation == true
            let succeeded = Fixtures.value(of: result) == Data(#"{"ok":true}"#.utf8)
            let adapterFailed = error is AdapterFailed
            let sends = sent.filter { $0.value(forHTTPHeaderField: "X-Request") == "\(scenario.id)" }.count
            switch scenario.cancel {
            case .never:
                if scenario.adapterThrows {
                    #expect(adapterFailed, "\(scenario): \(result)")
                } else {
                    #expect(succeeded, "\(scenario): \(result)")
                }
                #expect(sends == scenario.sendsWithoutCancel, "\(scenario): sent \(sends) times")
            case .inTransport:
                #expect(isCancelled, "\(scenario): \(result)")
                #expect(sends == 1, "\(scenario): sent \(sends) times")
            case .inBackoff:
                #expect(isCancelled, "\(scenario): \(result)")
                #expect(sends == scenario.sendsWithoutCancel, "\(scenario): sent \(sends) times")
            case .immediately, .after, .awaitingTask:
                let expected = scenario.adapterThrows ? adapterFailed : succeeded
                #expect(isCancelled || expected, "\(scenario): \(result)")
                #expect(sends <= scenario.sendsWithoutCancel, "\(scenario): sent \(sends) times")
            }
        }
    }
}
