// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "SwiftConnect",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "SwiftConnect", targets: ["SwiftConnect"])
    ],
    targets: [
        .target(name: "SwiftConnect"),
        .testTarget(name: "SwiftConnectTests", dependencies: ["SwiftConnect"]),
        // The usage document's examples, compiled as its readers wrote them: Swift 5 language mode.
        .testTarget(
            name: "UsageDocumentTests",
            dependencies: ["SwiftConnect"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
