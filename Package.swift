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
        // The same examples in Swift 6 language mode, as a new project writes them: the files are
        // links to UsageDocumentTests' own, so there is one copy to keep in step with the documents.
        .testTarget(name: "UsageDocumentSwift6Tests", dependencies: ["SwiftConnect"]),
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
