import Benchmark

/// Threshold tolerances for `swift package benchmark thresholds check`.
///
/// `thresholds update` records the p90 of every metric a benchmark measures (Benchmarks/Thresholds/),
/// and `thresholds check` compares a new run's p90 with it, using the tolerance set here for that
/// metric (package-benchmark applies a zero tolerance to metrics given none). Only figures that
/// survive a shared, noisy machine are judged: ratios measured within one run, and allocation
/// counts. Raw times are recorded for the README but never judged.
public enum Tolerance {
    /// A ratio (thousandths) may move by this many percent before it counts as a change.
    public static let ratioPercent = 10.0
    /// An allocation count may move by this many percent before it counts as a change.
    public static let allocationPercent = 5.0

    /// For a ratio in thousandths, allowed to move by `percent`.
    public static func ratio(percent: Double = ratioPercent) -> BenchmarkThresholds {
        BenchmarkThresholds(relative: [.p50: percent, .p90: percent])
    }

    /// For an allocation count (nearly deterministic, so tight).
    public static var allocations: BenchmarkThresholds {
        BenchmarkThresholds(relative: [.p50: allocationPercent, .p90: allocationPercent])
    }

    /// Recorded, never judged: raw times and rates drift with the machine's load.
    public static var recordedOnly: BenchmarkThresholds {
        BenchmarkThresholds(relative: BenchmarkThresholds.Relative.none, absolute: BenchmarkThresholds.Absolute.none)
    }

    /// Tolerances for `metrics`: ratios and allocation counts judged, everything else recorded.
    ///
    /// - Parameters:
    ///   - ratios: The custom metrics that hold ratios.
    ///   - ratioPercent: How far those may move (end-to-end ratios over loopback are noisier than
    ///     in-process ones).
    public static func thresholds(
        for metrics: [BenchmarkMetric], ratios: [BenchmarkMetric] = [], ratioPercent: Double = ratioPercent
    ) -> [BenchmarkMetric: BenchmarkThresholds] {
        var result: [BenchmarkMetric: BenchmarkThresholds] = [:]
        for metric in metrics {
            if ratios.contains(metric) {
                result[metric] = ratio(percent: ratioPercent)
            } else if metric == .mallocCountTotal {
                result[metric] = allocations
            } else {
                result[metric] = recordedOnly
            }
        }
        return result
    }
}
