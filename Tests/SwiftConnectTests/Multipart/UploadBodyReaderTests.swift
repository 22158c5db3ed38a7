import Foundation
import Testing

@testable import SwiftConnect

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("UploadBodyReader")
struct UploadBodyReaderTests {
    /// A body of one file part, with a fixed boundary.
    func body(_ file: File) throws -> UploadBody {
        var multipart = MultipartFormData(boundary: "B")
        multipart.append(file)
        return try multipart.makeBody(framing: .contentLength)
    }

    /// A source that fails without changing — a stream that cannot be made, a file that cannot
    /// be read — is not described as one that changed.
    @Test func aSourceThatFailsIsDescribedByWhatHappenedNotAsChanged() throws {
        struct Locked: Error, CustomStringConvertible {
            var description: String { "the photo library is locked" }
        }
        let file = File(name: "clip.mov", key: "video", mimeType: .mov, length: 10) { throw Locked() }
        #expect {
            try body(file).data()
        } throws: { error in
            "\(error)"
                == "The upload was aborted while file \"clip.mov\" (key \"video\", video/quicktime, a stream of 10 bytes)"
                + " was being sent: its stream could not be made: the photo library is locked"
        }
    }

    /// Reads `reader` to its end or failure, `chunk` bytes at a time.
    func readAll(_ reader: UploadBodyReader, chunk: Int = 7, afterFirstRead: () throws -> Void = {}) throws
        -> (data: Data, result: Int)
    {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: chunk)
        var first = true
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, maxLength: chunk) }
            if count <= 0 { return (data, count) }
            data.append(contentsOf: buffer[0..<count])
            if first {
                first = false
                try afterFirstRead()
            }
        }
    }

    @Test func smallReadsAcrossSegmentsGiveTheSameBytes() throws {
        let directory = try TemporaryDirectory()
        let content = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        let url = try directory.file("a.bin", content)
        var multipart = MultipartFormData(boundary: "B")
        multipart.append(field: "f", value: "value")
        multipart.append(File(key: "file", fileURL: url))
        multipart.append(File(name: "d", key: "data", mimeType: .binary, data: Data("xyz".utf8)))
        let body = try multipart.makeBody(framing: .contentLength)
        let whole = try body.data()
        for chunk in [1, 2, 3, 64, 4096, 1 << 16] {
            let (data, result) = try readAll(body.makeReader(), chunk: chunk)
            #expect(result == 0)
            #expect(data == whole, "chunk \(chunk)")
        }
        #expect(Int64(whole.count) == body.contentLength)
    }

    @Test func eachReaderStartsAgainFromTheFirstByte() throws {
        let body = try body(File(name: "a", key: "k", mimeType: .txt, data: Data("abc".utf8)))
        let first = try readAll(body.makeReader())
        let second = try readAll(body.makeReader())
        #expect(first.data == second.data)
        #expect(!first.data.isEmpty)
    }

    @Test func fileThatShrinksWhileReadFailsTheReader() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("a.bin", Data(repeating: 1, count: 10_000))
        let body = try body(File(key: "k", fileURL: url))
        let reader = body.makeReader()
        let (_, result) = try readAll(reader, chunk: 100) {
            try Data(repeating: 2, count: 10).write(to: url)
        }
        #expect(result == -1)
        #expect(reader.phase == .failed)
        guard case .uploadSourceChanged(let file, let detail)? = reader.failure else {
            Issue.record("expected uploadSourceChanged, got \(String(describing: reader.failure))")
            return
        }
        #expect(file.fileURL == url)
        #expect(!detail.isEmpty)
        // Once failed, it stays failed.
        var byte: UInt8 = 0
        #expect(reader.read(into: &byte, maxLength: 1) == -1)
    }

    @Test func fileThatGrowsWhileReadFailsTheReader() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("a.bin", Data(repeating: 1, count: 1000))
        let body = try body(File(key: "k", fileURL: url))
        let reader = body.makeReader()
        let (_, result) = try readAll(reader, chunk: 100) {
            let handle = try FileHandle(forWritingTo: url)
            _ = handle.seekToEndOfFile()
            handle.write(Data(repeating: 3, count: 500))
            try handle.close()
        }
        #expect(result == -1)
        #expect(reader.failure?.isUploadSourceChanged == true)
    }

    /// A file whose size the system does not report (`/proc`'s say 0) holds more than it was
    /// measured at: the reader fails rather than send an empty part as the whole file.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
    func aFileHoldingMoreThanItsMeasuredSizeFailsTheReader() throws {
        let detail = try sourceChangedDetail(readingFileAt: URL(fileURLWithPath: "/proc/self/status"))
        #expect(detail?.contains("more than the 0 bytes") == true)
    }

    /// A file whose reads fail (`/proc/self/mem` reports 0 bytes and gives `EIO` at offset 0)
    /// fails the reader: a failed read is not the end of the file.
    @Test(.enabled(if: FileManager.default.isReadableFile(atPath: "/proc/self/mem")))
    func aFileWhoseReadFailsFailsTheReader() throws {
        let detail = try sourceChangedDetail(readingFileAt: URL(fileURLWithPath: "/proc/self/mem"))
        #expect(detail?.hasPrefix("reading it failed: ") == true, "\(String(describing: detail))")
    }

    /// Reads a body of one part from the file at `url` to its end: it must fail with
    /// `uploadSourceChanged` for that file. Returns the failure's detail.
    private func sourceChangedDetail(readingFileAt url: URL) throws -> String? {
        let reader = try body(File(key: "k", fileURL: url)).makeReader()
        let (_, result) = try readAll(reader, chunk: 4096)
        #expect(result == -1)
        guard case .uploadSourceChanged(let file, let detail)? = reader.failure else {
            Issue.record("expected uploadSourceChanged, got \(String(describing: reader.failure))")
            return nil
        }
        #expect(file.fileURL == url)
        return detail
    }

    /// An open file can be read whole after it is deleted: its name being gone still aborts the
    /// body, so the server never receives a complete one.
    @Test func fileDeletedWhileReadFailsTheReader() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("a.bin", Data(repeating: 1, count: 1000))
        let body = try body(File(key: "k", fileURL: url))
        let reader = body.makeReader()
        // The first read takes the part's headers and opens the file.
        let (_, result) = try readAll(reader, chunk: 300) { try FileManager.default.removeItem(at: url) }
        #expect(result == -1)
        guard case .uploadSourceChanged(_, let detail)? = reader.failure else {
            Issue.record("expected uploadSourceChanged, got \(String(describing: reader.failure))")
            return
        }
        #expect(detail == "it was deleted while it was sent")
    }

    /// The in-memory body of a transport that cannot stream reserves no more than 64 MiB up front:
    /// a stream that declares more than memory holds (and ends early) fails, rather than trapping.
    @Test func aStreamDeclaringMoreThanMemoryFailsTheInMemoryBodyWithoutTrapping() throws {
        let file = File(name: "s", key: "k", mimeType: .binary, length: 1 << 46) { InputStream(data: Data(count: 10)) }
        let body = try body(file)
        #expect(throws: ConnectError.self) { try body.data() }
    }

    @Test func fileChangedBetweenMeasuringAndSendingFailsTheReader() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("a.bin", Data(repeating: 1, count: 100))
        let body = try body(File(key: "k", fileURL: url))
        try Data(repeating: 1, count: 101).write(to: url)
        #expect(throws: ConnectError.self) { try body.data() }

        try FileManager.default.removeItem(at: url)
        let reader = body.makeReader()
        #expect(try readAll(reader).result == -1)
        #expect(reader.failure?.isUploadSourceChanged == true)
    }

    @Test func streamShorterThanDeclaredFailsTheReader() throws {
        let file = File(name: "s", key: "k", mimeType: .binary, length: 10) { InputStream(data: Data("short".utf8)) }
        let reader = try body(file).makeReader()
        #expect(try readAll(reader).result == -1)
        #expect(reader.failure?.isUploadSourceChanged == true)
    }

    @Test func streamThatCannotBeMadeFailsTheReader() throws {
        struct Unavailable: Error {}
        let file = File(name: "s", key: "k", mimeType: .binary, length: 1) { throw Unavailable() }
        let reader = try body(file).makeReader()
        #expect(try readAll(reader).result == -1)
        guard case .uploadSourceChanged(_, let detail)? = reader.failure else {
            Issue.record("expected uploadSourceChanged")
            return
        }
        #expect(detail.contains("Unavailable"))
    }

    @Test func streamLongerThanDeclaredIsReadToItsDeclaredLength() throws {
        let file = File(name: "s", key: "k", mimeType: .txt, length: 3) { InputStream(data: Data("abcdef".utf8)) }
        let data = try body(file).data()
        #expect(String(decoding: data, as: UTF8.self).contains("\r\n\r\nabc\r\n--B--"))
    }

    @Test(.enabled(if: openFilePaths() != nil, "needs /proc/self/fd"))
    func closeReleasesTheOpenFileAtOnce() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("big.bin", size: 1 << 20)
        let body = try body(File(key: "k", fileURL: url))
        let reader = body.makeReader()
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, maxLength: 4096) }
        _ = buffer.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, maxLength: 4096) }
        #expect(openFilePaths()?.contains(url.path) == true, "the file is open while read")

        reader.close()
        #expect(openFilePaths()?.contains(url.path) == false)
        #expect(buffer.withUnsafeMutableBufferPointer { reader.read(into: $0.baseAddress!, maxLength: 4096) } == -1)
    }

    @Test(.enabled(if: openFilePaths() != nil, "needs /proc/self/fd"))
    func fileIsClosedOnceReadToItsEnd() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("a.bin", Data(repeating: 7, count: 100))
        let reader = try body(File(key: "k", fileURL: url)).makeReader()
        #expect(try readAll(reader).result == 0)
        #expect(reader.phase == .atEnd)
        #expect(openFilePaths()?.contains(url.path) == false)
    }

    @Test func streamReportsFailureThroughInputStreamAPI() throws {
        let file = File(name: "s", key: "k", mimeType: .binary, length: 4) { InputStream(data: Data("ab".utf8)) }
        let stream = try body(file).makeInputStream()
        stream.open()
        #expect(stream.streamStatus == .open)
        var buffer = [UInt8](repeating: 0, count: 1024)
        var result = 1
        while result > 0 { result = stream.read(&buffer, maxLength: buffer.count) }
        #expect(result == -1)
        #expect(stream.streamStatus == .error)
        #expect(stream.hasBytesAvailable, "a failed stream must be read again to report -1, never look finished")
        #expect(stream.streamError is ConnectError)
    }

    @Test func completeStreamEndsNormally() throws {
        let stream = try body(File(name: "a", key: "k", mimeType: .txt, data: Data("x".utf8))).makeInputStream()
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 1024)
        #expect(stream.read(&buffer, maxLength: buffer.count) > 0)
        #expect(stream.read(&buffer, maxLength: buffer.count) == 0)
        #expect(stream.streamStatus == .atEnd)
        #expect(!stream.hasBytesAvailable)
        stream.close()
        #expect(stream.streamStatus == .atEnd)
    }
}

extension ConnectError {
    var isUploadSourceChanged: Bool {
        if case .uploadSourceChanged = self { return true }
        return false
    }
}
