import Foundation
import SwiftConnect
import Testing

/// A 1 GiB upload in bounded memory. Slow and disk-hungry, so off unless asked for:
///
///     SWIFTCONNECT_LARGE_UPLOAD_TESTS=1 scripts/test.sh --filter LargeUploadTests
///
/// scripts/measure-upload.sh measures the same with /usr/bin/time, against other ways to upload.
@Suite(
    .enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason),
    .enabled(
        if: ProcessInfo.processInfo.environment["SWIFTCONNECT_LARGE_UPLOAD_TESTS"] == "1",
        "set SWIFTCONNECT_LARGE_UPLOAD_TESTS=1 to upload 1 GiB"),
    timeLimit(minutes: 5))
struct LargeUploadTests {
    struct Sink: Decodable, Sendable {
        let bytes: Int64
        let contentLength: String?
    }

    struct Call: Connector {
        var baseURL: URL { HTTPBin.baseURL }
        var endpoint: String { "/sink" }
        var method: HTTPMethod { .post }
    }

    /// A line of /proc/self/status in bytes (`VmRSS`, `VmHWM`); `nil` off Linux.
    static func memory(_ field: String) -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }

    @Test(.enabled(if: memory("VmHWM") != nil, "reads /proc/self/status"))
    func oneGibibyteFileUploadsInUnderSixtyFourMegabytesOfMemory() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("one-gibibyte.bin", size: 1 << 30)
        let connect = HTTPBin.connect {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.timeoutInterval = 120
        }
        // Reset the peak RSS to the current RSS (Linux: writing 5 to clear_refs).
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try #require(Self.memory("VmRSS"))

        let sink = try await connect.upload(files: [File(key: "file", fileURL: url)], to: Call())
            .decoded(toType: Sink.self).value

        let peak = try #require(Self.memory("VmHWM"))
        #expect(sink.bytes > 1 << 30)
        #expect(sink.contentLength == String(sink.bytes))
        let growth = peak - before
        #expect(growth < 64 << 20, "peak RSS grew by \(growth >> 20) MiB during the upload")
    }
}
