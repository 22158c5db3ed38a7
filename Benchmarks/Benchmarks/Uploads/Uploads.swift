// Suite 4 — uploads: one large file sent as a multipart/form-data body, through
// `Connect.upload(files:to:)` (the file by URL) and through plain URLSession sending the very same
// bytes (the multipart body built once, up front, into a file), against the loopback sink
// scripts/bench.sh starts (Server/sink.py: reads every body to the end, answers its size).
//
// Every iteration sends the file once through each client, in an order that rotates from one
// iteration to the next, and records, per client, the wall-clock time and the peak resident memory
// of the upload (Linux: VmHWM, reset before each upload), with the ratios Connect ÷ URLSession
// beside the raw figures. Clients:
// - Connect:            `connect.upload(files: [File(key:fileURL:)], to:options:)` (Content-Length)
// - URLSession-file:    `uploadTask(with:fromFile:)` of the pre-built body file (the baseline)
// - URLSession-stream:  a data task whose `httpBodyStream` reads the pre-built body file (chunked
//                       on Linux: URLSession sends any body stream chunked there)
//
// The random file and the body file are written once per size (in a temporary directory, removed
// in the teardown). Environment: SWIFTCONNECT_BENCH_SINK_URL (required; the suite is skipped
// without it), SWIFTCONNECT_BENCH_UPLOAD_1GIB=1 adds the 1 GiB size (about 1½ minutes more).

import Benchmark
import BenchmarkSupport
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let benchmarks: @Sendable () -> Void = {
    let environment = ProcessInfo.processInfo.environment
    let sink = environment["SWIFTCONNECT_BENCH_SINK_URL"].flatMap { URL(string: $0) }
    var sizes: [(name: String, mebibytes: Int, iterations: Int)] = [("200MiB", 200, 5)]
    if environment["SWIFTCONNECT_BENCH_UPLOAD_1GIB"] == "1" {
        sizes.append(("1GiB", 1024, 3))
    }

    let fileRatio = Ratio.metric("time Connect/URLSession-file x1000", prefersLarger: false)
    let streamRatio = Ratio.metric("time Connect/URLSession-stream x1000", prefersLarger: false)
    let memoryRatio = Ratio.metric("peak RSS Connect/URLSession-file x1000", prefersLarger: false)
    let ratios = [fileRatio, streamRatio, memoryRatio]
    var raw: [Client: (time: BenchmarkMetric, peak: BenchmarkMetric, growth: BenchmarkMetric)] = [:]
    for client in Client.allCases {
        raw[client] = (
            .custom("\(client.rawValue) ms", useScalingFactor: false),
            .custom("\(client.rawValue) peak RSS MB", useScalingFactor: false),
            .custom("\(client.rawValue) RSS growth MB", useScalingFactor: false)
        )
    }
    let rawMetrics = Client.allCases.flatMap { [raw[$0]!.time, raw[$0]!.peak, raw[$0]!.growth] }
    let custom = ratios + rawMetrics
    let metrics = custom + [.wallClock, .peakMemoryResident]

    for size in sizes {
        let fixture = UploadFixture(sink: sink ?? URL(string: "http://127.0.0.1:1")!, mebibytes: size.mebibytes)
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            units: Ratio.plainUnits(custom),
            warmupIterations: 0,
            maxDuration: .seconds(3600),
            maxIterations: size.iterations,
            skip: sink == nil,
            // Judged: time and peak memory against the file upload. The ratio to the stream upload
            // (two fast uploads of about a second each) swings ±20 % between iterations: recorded.
            thresholds: Tolerance.thresholds(for: metrics, ratios: [fileRatio, memoryRatio], ratioPercent: 20)
        )
        var iteration = 0
        Benchmark(
            "Upload-\(size.name)", configuration: configuration,
            closure: { benchmark in
                // Rotate the order: each client runs first, second and last in turn.
                var order = Client.allCases
                order.rotate(by: iteration)
                iteration += 1
                var results: [Client: Upload] = [:]
                for client in order {
                    results[client] = try await fixture.upload(with: client)
                }
                for (client, result) in results {
                    benchmark.measurement(raw[client]!.time, Int(result.nanoseconds / 1_000_000))
                    benchmark.measurement(raw[client]!.peak, result.peakBytes >> 20)
                    benchmark.measurement(raw[client]!.growth, result.growthBytes >> 20)
                }
                let connect = results[.connect]!
                let file = results[.file]!
                let stream = results[.stream]!
                benchmark.measurement(
                    fileRatio, Ratio.permille(Double(connect.nanoseconds), over: Double(file.nanoseconds)))
                benchmark.measurement(
                    streamRatio, Ratio.permille(Double(connect.nanoseconds), over: Double(stream.nanoseconds)))
                benchmark.measurement(
                    memoryRatio, Ratio.permille(Double(connect.peakBytes), over: Double(file.peakBytes)))
            },
            setup: { try fixture.create() },
            teardown: { fixture.remove() }
        )
    }
}

extension Array {
    fileprivate mutating func rotate(by count: Int) {
        guard !isEmpty else { return }
        let k = count % self.count
        self = Array(self[k...] + self[..<k])
    }
}
