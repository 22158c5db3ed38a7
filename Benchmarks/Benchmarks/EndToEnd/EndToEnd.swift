// Suite 1 — end to end: GET requests decoded into a small Decodable, with 1, 8 and 64 in flight,
// through Connect and through hand-written URLSession code doing the same work, against the local
// nginx scripts/bench.sh starts (SWIFTCONNECT_BENCH_URL).
//
// Every iteration sends one batch through each client, back to back, in alternating order, and
// records the ratios Connect ÷ URLSession (throughput, its inverse the time per request, and process
// CPU time per request) with the raw figures beside them. Two styles, each against its hand-written twin:
// - await:   `try await connect.request(…).decoded(toType:).value`  vs  `session.data(for:)` + decode
// - observe: `connect.request(…).decoded(toType:).observe { … }`     vs  `dataTask(with:completionHandler:)` + decode
//
// Environment: SWIFTCONNECT_BENCH_URL (required by the network benchmarks, skipped without it),
// SWIFTCONNECT_BENCH_SECONDS (time per benchmark, default 8).
//
// Beside them, for reference (no target): the same two styles with one request in flight through
// a URLProtocol that answers in process (Stub.swift), so that the ratio of CPU per request shows
// what each client spends without the network's noise.

import Benchmark
import BenchmarkSupport
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let benchmarks: @Sendable () -> Void = {
    let seconds = ProcessInfo.processInfo.environment["SWIFTCONNECT_BENCH_SECONDS"].flatMap(Int.init) ?? 8
    let connect = Connect()
    let handwritten = HandwrittenClient(base: networkBaseURL)

    let throughputRatio = Ratio.metric("throughput Connect/URLSession x1000", prefersLarger: true)
    // The throughput ratio's inverse, the one `thresholds check` judges: package-benchmark 1.38
    // records the upper tail of every metric (`thresholds update`) but checks the lower tail of one
    // that prefers larger values, so a throughput ratio would always fail by its own spread.
    let timeRatio = Ratio.metric("time per request Connect/URLSession x1000", prefersLarger: false)
    let cpuRatio = Ratio.metric("CPU per request Connect/URLSession x1000", prefersLarger: false)
    let connectRate = BenchmarkMetric.custom("Connect requests/s", polarity: .prefersLarger, useScalingFactor: false)
    let baselineRate = BenchmarkMetric.custom(
        "URLSession requests/s", polarity: .prefersLarger, useScalingFactor: false)
    let connectCPU = BenchmarkMetric.custom("Connect CPU ns/request", useScalingFactor: false)
    let baselineCPU = BenchmarkMetric.custom("URLSession CPU ns/request", useScalingFactor: false)
    let metrics = [throughputRatio, timeRatio, cpuRatio, connectRate, baselineRate, connectCPU, baselineCPU]

    func record(_ benchmark: Benchmark, requests: Int, baseline: Elapsed, candidate: Elapsed) {
        let n = Double(requests)
        let baselineRPS = n / (Double(baseline.wall) / 1e9)
        let candidateRPS = n / (Double(candidate.wall) / 1e9)
        benchmark.measurement(throughputRatio, Ratio.permille(candidateRPS, over: baselineRPS))
        benchmark.measurement(timeRatio, Ratio.permille(Double(candidate.wall), over: Double(baseline.wall)))
        benchmark.measurement(cpuRatio, Ratio.permille(Double(candidate.cpu), over: Double(baseline.cpu)))
        benchmark.measurement(connectRate, Int(candidateRPS.rounded()))
        benchmark.measurement(baselineRate, Int(baselineRPS.rounded()))
        benchmark.measurement(connectCPU, Int(Double(candidate.cpu) / n))
        benchmark.measurement(baselineCPU, Int(Double(baseline.cpu) / n))
    }

    /// Registers `<prefix>-await-cN` and `<prefix>-observe-cN`: Connect against its hand-written
    /// twin, `requests` a batch, `concurrency` in flight, through `connect` and `handwritten`.
    func styles(
        prefix: String, concurrency: Int, requests: Int, connect: Connect, handwritten: HandwrittenClient,
        connector: TodoConnector, skip: Bool
    ) {
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            units: Ratio.plainUnits(metrics),
            warmupIterations: 2,
            maxDuration: .seconds(seconds),
            maxIterations: 200,
            skip: skip,
            thresholds: Tolerance.thresholds(for: metrics, ratios: [timeRatio, cpuRatio], ratioPercent: 20)
        )

        let awaitAlternation = Alternation()
        Benchmark("\(prefix)-await-c\(concurrency)", configuration: configuration) { benchmark in
            let (baseline, candidate) = await awaitAlternation.run(
                baseline: {
                    await Load.run(total: requests, concurrency: concurrency) {
                        blackHole(try await handwritten.todo(id: 1))
                    }
                },
                candidate: {
                    await Load.run(total: requests, concurrency: concurrency) {
                        blackHole(try await connect.request(connector).decoded(toType: Todo.self).value)
                    }
                })
            record(benchmark, requests: requests, baseline: baseline, candidate: candidate)
        }

        let observeAlternation = Alternation()
        Benchmark("\(prefix)-observe-c\(concurrency)", configuration: configuration) { benchmark in
            let (baseline, candidate) = await observeAlternation.run(
                baseline: {
                    await Load.run(total: requests, concurrency: concurrency) { done in
                        handwritten.todo(id: 1, completion: done)
                    }
                },
                candidate: {
                    await Load.run(total: requests, concurrency: concurrency) { done in
                        connect.request(connector).decoded(toType: Todo.self).observe(done)
                    }
                })
            record(benchmark, requests: requests, baseline: baseline, candidate: candidate)
        }
    }

    for concurrency in [1, 8, 64] {
        // About 0.1–0.3 s per batch at the rates this machine reaches.
        styles(
            prefix: "E2E", concurrency: concurrency,
            requests: concurrency == 1 ? 200 : concurrency * (concurrency == 8 ? 50 : 10),
            connect: connect, handwritten: handwritten, connector: .get(id: 1), skip: serverURL == nil)
    }

    // The reference through the in-process protocol, which needs no server.
    styles(
        prefix: "Reference-Stub", concurrency: 1, requests: 400,
        connect: Connect(configuration: ConnectConfiguration(sessionConfiguration: StubProtocol.sessionConfiguration)),
        handwritten: HandwrittenClient(base: StubProtocol.baseURL, configuration: StubProtocol.sessionConfiguration),
        connector: .stubbed(id: 1), skip: false)
}
