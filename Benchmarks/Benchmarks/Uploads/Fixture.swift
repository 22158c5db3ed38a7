import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The three ways the same body is sent.
enum Client: String, CaseIterable, Sendable {
    case connect = "Connect"
    case file = "URLSession-file"
    case stream = "URLSession-stream"
}

/// One upload's figures.
struct Upload: Sendable {
    /// Wall-clock time from the call to the response.
    var nanoseconds: UInt64
    /// The process's peak resident memory during the upload (0 where it cannot be read).
    var peakBytes: Int
    /// That peak less the resident memory just before the upload.
    var growthBytes: Int
}

/// What the library's user writes: a POST to the sink.
struct SinkConnector: Connector {
    let sink: URL
    var baseURL: URL { sink }
    var endpoint: String { "/upload" }
    var method: HTTPMethod { .post }
}

/// The sink's answer: how many body bytes it read.
private struct SinkReply: Decodable {
    let bytes: Int64
}

/// The files of one size (a random file and the multipart body made from it, written once) and the
/// clients that upload them.
final class UploadFixture: @unchecked Sendable {
    // @unchecked Sendable: `directory` is written by `create` (the benchmark's setup) and `remove`
    // (its teardown), and read by the iterations in between; package-benchmark never overlaps them.
    let sink: URL
    let mebibytes: Int
    /// One boundary for both sides, so that Connect sends exactly the bytes of the body file.
    let options = UploadOptions(framing: .contentLength, boundary: "swiftconnect-bench-boundary-7f3a9c")
    let connect: Connect
    let session = URLSession(configuration: .default)
    private var directory: URL?
    private(set) var bodyLength: Int64 = 0
    private(set) var contentType = ""

    init(sink: URL, mebibytes: Int) {
        self.sink = sink
        self.mebibytes = mebibytes
        var configuration = ConnectConfiguration()
        configuration.timeoutInterval = 600
        connect = Connect(configuration: configuration)
    }

    var fileURL: URL { directory!.appendingPathComponent("upload.bin") }
    var bodyURL: URL { directory!.appendingPathComponent("upload.multipart") }
    var file: File { File(name: "upload.bin", key: "file", mimeType: .binary, fileURL: fileURL) }

    /// Writes the random file and the multipart body built from it.
    func create() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftconnect-uploads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory

        var generator = SystemRandomNumberGenerator()
        var chunk = [UInt64](repeating: 0, count: (1 << 20) / 8)
        try write(to: fileURL) { handle in
            for _ in 0..<mebibytes {
                for i in chunk.indices { chunk[i] = generator.next() }
                try chunk.withUnsafeBytes { try handle.write(contentsOf: $0) }
            }
        }

        let (_, body) = try connect.uploadRequest(files: [file], to: SinkConnector(sink: sink), options: options)
        bodyLength = body.contentLength
        contentType = body.contentType
        let stream = body.makeInputStream()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        try write(to: bodyURL) { handle in
            while true {
                let count = stream.read(&buffer, maxLength: buffer.count)
                if count < 0 { throw stream.streamError ?? CocoaError(.fileReadUnknown) }
                if count == 0 { break }
                try handle.write(contentsOf: buffer[0..<count])
            }
        }
        let written = try FileManager.default.attributesOfItem(atPath: bodyURL.path)[.size] as? NSNumber
        guard written?.int64Value == bodyLength else {
            throw BenchmarkFailure("body file has \(String(describing: written)) bytes, expected \(bodyLength)")
        }
    }

    /// Deletes the files.
    func remove() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    /// Uploads the body once with `client`, measuring time and peak memory, and checks that the
    /// sink read every byte.
    func upload(with client: Client) async throws -> Upload {
        Memory.trim()
        Memory.resetPeak()
        let before = Memory.resident()
        let start = DispatchTime.now().uptimeNanoseconds
        let reply: Data
        switch client {
        case .connect:
            reply = try await connect.upload(files: [file], to: SinkConnector(sink: sink), options: options).value
        case .file:
            reply = try await send { session, request, done in
                session.uploadTask(with: request, fromFile: self.bodyURL, completionHandler: done)
            }
        case .stream:
            reply = try await send { session, request, done in
                var request = request
                request.httpBodyStream = InputStream(url: self.bodyURL)
                return session.dataTask(with: request, completionHandler: done)
            }
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        let peak = Memory.peak()
        let received = try JSONDecoder().decode(SinkReply.self, from: reply).bytes
        guard received == bodyLength else {
            throw BenchmarkFailure("\(client.rawValue): the sink read \(received) bytes of \(bodyLength)")
        }
        return Upload(nanoseconds: elapsed, peakBytes: peak, growthBytes: max(0, peak - before))
    }

    /// A plain URLSession POST of the body file, the way its user would write it.
    private func send(
        _ makeTask: (
            URLSession, URLRequest, @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
        ) -> URLSessionTask
    ) async throws -> Data {
        var request = URLRequest(url: sink.appendingPathComponent("upload"), timeoutInterval: 600)
        request.httpMethod = "POST"
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        return try await withCheckedThrowingContinuation { continuation in
            makeTask(session, request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let data, let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
                    return continuation.resume(throwing: URLError(.badServerResponse))
                }
                continuation.resume(returning: data)
            }.resume()
        }
    }

    private func write(to url: URL, _ body: (FileHandle) throws -> Void) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try body(handle)
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The process's resident memory, from /proc/self/status on Linux (0 elsewhere).
enum Memory {
    /// Resets the kernel's peak (VmHWM) to the current resident size.
    static func resetPeak() {
        #if os(Linux)
            let fd = open("/proc/self/clear_refs", O_WRONLY)
            guard fd >= 0 else { return }
            _ = write(fd, "5", 1)
            close(fd)
        #endif
    }

    /// Gives freed heap back to the system, so that one upload's leftovers do not count in the next.
    static func trim() {
        #if canImport(Glibc)
            // malloc_trim is glibc's, declared in <malloc.h>, which the Glibc module leaves out.
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") {
                typealias Trim = @convention(c) (Int) -> Int32
                _ = unsafeBitCast(symbol, to: Trim.self)(0)
            }
        #endif
    }

    /// VmHWM in bytes.
    static func peak() -> Int { field("VmHWM:") }

    /// VmRSS in bytes.
    static func resident() -> Int { field("VmRSS:") }

    private static func field(_ name: String) -> Int {
        #if os(Linux)
            // Read with read(2): Foundation sizes a file by its stat, which is 0 under /proc.
            let fd = open("/proc/self/status", O_RDONLY)
            guard fd >= 0 else { return 0 }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 16384)
            let count = read(fd, &bytes, bytes.count)
            guard count > 0 else { return 0 }
            let status = String(decoding: bytes[0..<count], as: UTF8.self)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) })
            else { return 0 }
            // "VmHWM:\t   1708 kB"
            let kilobytes =
                line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                .flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        #else
            return 0
        #endif
    }
}
