// swift-tools-version:6.2
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
        // Code as an app target whose default isolation is the main actor (Xcode 26's new
        // projects) writes it: connectors without annotations, used off the main actor.
        .testTarget(
            name: "MainActorDefaultTests",
            dependencies: ["SwiftConnect"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
