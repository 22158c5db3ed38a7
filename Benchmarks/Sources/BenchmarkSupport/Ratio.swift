import Benchmark

/// Figures reported as SwiftConnect ÷ baseline, both measured in the same iteration.
///
/// The machines these benchmarks run on are shared, so absolute times drift with whatever else
/// runs. A ratio of two measurements taken back to back, in alternating order, cancels most of
/// that drift. package-benchmark stores integer samples, so ratios are kept in thousandths:
/// `970` is 0.970×.
public enum Ratio {
    /// `candidate / baseline` in thousandths, rounded.
    public static func permille(_ candidate: Double, over baseline: Double) -> Int {
        guard baseline > 0 else { return 0 }
        return Int((candidate / baseline * 1000).rounded())
    }

    /// A custom metric holding a ratio in thousandths.
    public static func metric(_ name: String, prefersLarger: Bool) -> BenchmarkMetric {
        .custom(name, polarity: prefersLarger ? .prefersLarger : .prefersSmaller, useScalingFactor: false)
    }

    /// Shows `metrics` as plain numbers (`970`, not `0.97 K`).
    public static func plainUnits(_ metrics: [BenchmarkMetric]) -> [BenchmarkMetric: BenchmarkUnits] {
        Dictionary(uniqueKeysWithValues: metrics.map { ($0, BenchmarkUnits.count) })
    }
}

/// Runs a baseline and a candidate back to back, swapping their order on every call, so that
/// neither always runs first (on a warmer cache, or a quieter machine).
public final class Alternation: @unchecked Sendable {
    // @unchecked Sendable: `calls` is only touched by `run`, which package-benchmark calls from one
    // task at a time (iterations never overlap).
    private var calls = 0

    /// Creates an alternation that starts with the baseline.
    public init() {}

    /// Runs both, returning `(baseline, candidate)` whatever order they ran in.
    public func run<T>(baseline: () throws -> T, candidate: () throws -> T) rethrows -> (baseline: T, candidate: T) {
        calls += 1
        if calls.isMultiple(of: 2) {
            let c = try candidate()
            let b = try baseline()
            return (b, c)
        }
        let b = try baseline()
        let c = try candidate()
        return (b, c)
    }

    /// Runs both asynchronously, returning `(baseline, candidate)` whatever order they ran in.
    public func run<T>(
        baseline: () async throws -> T, candidate: () async throws -> T
    ) async rethrows -> (baseline: T, candidate: T) {
        calls += 1
        if calls.isMultiple(of: 2) {
            let c = try await candidate()
            let b = try await baseline()
            return (b, c)
        }
        let b = try await baseline()
        let c = try await candidate()
        return (b, c)
    }
}
