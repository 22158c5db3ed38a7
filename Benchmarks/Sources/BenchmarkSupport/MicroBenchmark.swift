import Benchmark

/// The configuration the micro-benchmark suites (RequestBuilding, Futures) share.
public enum MicroBenchmark {
    /// Measured by default: time, throughput and allocations.
    public static let measured: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

    /// A configuration measuring `metrics`, with thresholds for them and for `ratios`, which may
    /// move by `ratioPercent`.
    public static func configuration(
        _ metrics: [BenchmarkMetric] = measured, ratios: [BenchmarkMetric] = [],
        ratioPercent: Double = Tolerance.ratioPercent
    ) -> Benchmark.Configuration {
        .init(
            metrics: metrics,
            timeUnits: .nanoseconds,
            units: Ratio.plainUnits(metrics.filter { $0 != .throughput && $0 != .wallClock }),
            warmupIterations: 10,
            scalingFactor: .kilo,
            maxDuration: .seconds(3),
            maxIterations: 1000,
            thresholds: Tolerance.thresholds(for: metrics, ratios: ratios, ratioPercent: ratioPercent)
        )
    }
}
