// swift-tools-version:6.0
// Measures peak memory and time of large uploads by hand (scripts/measure-upload.sh); not part of
// the test suite or CI.
import PackageDescription

let package = Package(
    name: "UploadMemory",
    dependencies: [.package(name: "SwiftConnect", path: "../..")],
    targets: [
        .executableTarget(name: "UploadMemory", dependencies: [.product(name: "SwiftConnect", package: "SwiftConnect")])
    ],
    swiftLanguageModes: [.v6]
)
