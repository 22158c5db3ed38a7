import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A directory of its own under the system's temporary directory, removed when released.
final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked Sendable: `url` is immutable; the directory's files are the tests' own business.
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("SwiftConnectTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// Writes `data` to `name` in the directory and returns the file's URL.
    @discardableResult
    func file(_ name: String, _ data: Data) throws -> URL {
        let file = url.appendingPathComponent(name)
        try data.write(to: file)
        return file
    }

    /// Creates `name` holding `size` bytes of a repeating pattern, written in chunks (never whole
    /// in memory), and returns its URL.
    func largeFile(_ name: String, size: Int) throws -> URL {
        let file = url.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let chunk = Data((0..<(1 << 20)).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 31 &+ 7) })
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, chunk.count)
            handle.write(chunk.prefix(count))
            remaining -= count
        }
        return file
    }
}

/// The paths this process has open, read from /proc/self/fd (Linux); `nil` where unavailable.
func openFilePaths() -> [String]? {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
    return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
}
