// Suite 1 — end to end: GET requests decoded into a small Decodable, with 1, 8 and 64 in flight,
// through Connect and through hand-written URLSession code doing the same work, against the local
// nginx scripts/bench.sh starts (SWIFTCONNECT_BENCH_URL).
//
// Every iteration sends one batch through each client, back to back, in alternating order, and
// records the ratios Connect ÷ URLSession (throughput, and process CPU time per request) with the
// raw figures beside them. Two styles, each against its hand-written twin:
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
    let handwritten = HandwrittenClient(base: serverURL ?? URL(string: "http://127.0.0.1:1")!)

    let throughputRatio = Ratio.metric("throughput Connect/URLSession x1000", prefersLarger: true)
    let cpuRatio = Ratio.metric("CPU per request Connect/URLSession x1000", prefersLarger: false)
    let connectRate = BenchmarkMetric.custom("Connect requests/s", polarity: .prefersLarger, useScalingFactor: false)
    let baselineRate = BenchmarkMetric.custom(
        "URLSession requests/s", polarity: .prefersLarger, useScalingFactor: false)
    let connectCPU = BenchmarkMetric.custom("Connect CPU ns/request", useScalingFactor: false)
    let baselineCPU = BenchmarkMetric.custom("URLSession CPU ns/request", useScalingFactor: false)
    let metrics = [throughputRatio, cpuRatio, connectRate, baselineRate, connectCPU, baselineCPU]

    func record(_ benchmark: Benchmark, requests: Int, baseline: Elapsed, candidate: Elapsed) {
        let n = Double(requests)
        let baselineRPS = n / (Double(baseline.wall) / 1e9)
        let candidateRPS = n / (Double(candidate.wall) / 1e9)
        benchmark.measurement(throughputRatio, Ratio.permille(candidateRPS, over: baselineRPS))
        benchmark.measurement(cpuRatio, Ratio.permille(Double(candidate.cpu), over: Double(baseline.cpu)))
        benchmark.measurement(connectRate, Int(candidateRPS.rounded()))
        benchmark.measurement(baselineRate, Int(baselineRPS.rounded()))
        benchmark.measurement(connectCPU, Int(Double(candidate.cpu) / n))
        benchmark.measurement(baselineCPU, Int(Double(baseline.cpu) / n))
    }

    for concurrency in [1, 8, 64] {
        // About 0.1–0.3 s per batch at the rates this machine reaches.
        let requests = concurrency == 1 ? 200 : concurrency * (concurrency == 8 ? 50 : 10)
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            units: Ratio.plainUnits(metrics),
            warmupIterations: 2,
            maxDuration: .seconds(seconds),
            maxIterations: 200,
            skip: serverURL == nil,
            thresholds: Tolerance.thresholds(for: metrics, ratios: [throughputRatio, cpuRatio], ratioPercent: 20)
        )

        let awaitAlternation = Alternation()
        Benchmark("E2E-await-c\(concurrency)", configuration: configuration) { benchmark in
            let (baseline, candidate) = await awaitAlternation.run(
                baseline: {
                    await Load.run(total: requests, concurrency: concurrency) {
                        blackHole(try await handwritten.todo(id: 1))
                    }
                },
                candidate: {
                    await Load.run(total: requests, concurrency: concurrency) {
                        blackHole(try await connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).value)
                    }
                })
            record(benchmark, requests: requests, baseline: baseline, candidate: candidate)
        }

        let observeAlternation = Alternation()
        Benchmark("E2E-observe-c\(concurrency)", configuration: configuration) { benchmark in
            let (baseline, candidate) = await observeAlternation.run(
                baseline: {
                    await Load.run(total: requests, concurrency: concurrency) { done in
                        handwritten.todo(id: 1, completion: done)
                    }
                },
                candidate: {
                    await Load.run(total: requests, concurrency: concurrency) { done in
                        connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).observe(done)
                    }
                })
            record(benchmark, requests: requests, baseline: baseline, candidate: candidate)
        }
    }

    let stubConnect = Connect(
        configuration: ConnectConfiguration(sessionConfiguration: StubProtocol.sessionConfiguration))
    let stubHandwritten = HandwrittenClient(
        base: StubProtocol.baseURL, configuration: StubProtocol.sessionConfiguration)
    let stubRequests = 400
    let stubConfiguration = Benchmark.Configuration(
        metrics: metrics,
        units: Ratio.plainUnits(metrics),
        warmupIterations: 2,
        maxDuration: .seconds(seconds),
        maxIterations: 200,
        thresholds: Tolerance.thresholds(for: metrics, ratios: [throughputRatio, cpuRatio], ratioPercent: 20)
    )

    let stubAwaitAlternation = Alternation()
    Benchmark("Reference-Stub-await-c1", configuration: stubConfiguration) { benchmark in
        let (baseline, candidate) = await stubAwaitAlternation.run(
            baseline: {
                await Load.run(total: stubRequests, concurrency: 1) {
                    blackHole(try await stubHandwritten.todo(id: 1))
                }
            },
            candidate: {
                await Load.run(total: stubRequests, concurrency: 1) {
                    blackHole(
                        try await stubConnect.request(TodoConnector.stubbed(id: 1)).decoded(toType: Todo.self).value)
                }
            })
        record(benchmark, requests: stubRequests, baseline: baseline, candidate: candidate)
    }

    let stubObserveAlternation = Alternation()
    Benchmark("Reference-Stub-observe-c1", configuration: stubConfiguration) { benchmark in
        let (baseline, candidate) = await stubObserveAlternation.run(
            baseline: {
                await Load.run(total: stubRequests, concurrency: 1) { done in
                    stubHandwritten.todo(id: 1, completion: done)
                }
            },
            candidate: {
                await Load.run(total: stubRequests, concurrency: 1) { done in
                    stubConnect.request(TodoConnector.stubbed(id: 1)).decoded(toType: Todo.self).observe(done)
                }
            })
        record(benchmark, requests: stubRequests, baseline: baseline, candidate: candidate)
    }
}
