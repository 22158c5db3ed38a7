// swift-tools-version:6.1
import PackageDescription

// The SwiftConnect demo: a demo REST API (Hummingbird) and a client CLI that uses the library.
// A package of its own, so that Hummingbird and ArgumentParser never reach a user of SwiftConnect.
let package = Package(
    name: "SwiftConnectExamples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "todo-demo", targets: ["todo-demo"])
    ],
    dependencies: [
        .package(name: "SwiftConnect", path: ".."),
        // No traits: the demo server needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // The demo REST API: login with expiring tokens, todos, avatar uploads, errors, a redirect.
        .target(
            name: "DemoServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The client: one connector enum per resource, and the scripted session.
        .target(
            name: "TodoDemo",
            dependencies: [.product(name: "SwiftConnect", package: "SwiftConnect")]
        ),
        // `swift run --package-path Examples todo-demo`
        .executableTarget(
            name: "todo-demo",
            dependencies: [
                "DemoServer", "TodoDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "TodoDemoTests", dependencies: ["DemoServer", "TodoDemo"]),
    ],
    swiftLanguageModes: [.v6]
)
