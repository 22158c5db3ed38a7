// swift-tools-version:6.1
// SwiftConnect's benchmarks: a package of their own, so the library keeps no dependencies.
// Run them with ../scripts/bench.sh (it starts the local nginx the end-to-end suite needs);
// see README.md for the results and how to read them.
import PackageDescription

/// A package-benchmark suite: an executable target under Benchmarks/<name>/.
func suite(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "SwiftConnect", package: "SwiftConnect"),
            "BenchmarkSupport",
        ],
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "SwiftConnectBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SwiftConnect", path: ".."),
        // The MallocInterposer trait alone: allocation counts, and none of the default
        // RuntimeInterposer trait's extra dependency.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Benchmark", package: "benchmark")]
        ),
        suite("EndToEnd"),
        suite("RequestBuilding"),
        suite("Futures"),
        suite("Uploads"),
    ],
    swiftLanguageModes: [.v6]
)
