import Foundation

/// The body of an upload, as a ``Transport`` receives it: a description of the bytes, with their
/// exact length, that can be read as many times as the request is sent.
///
/// Nothing is read until a stream is opened: files on disk are read chunk by chunk as the stream
/// is read, so a body of any size is sent in bounded memory. Each call to ``makeInputStream()``
/// starts again from the first byte, for a `307`/`308` redirect or a retry.
///
/// A transport that streams calls ``makeInputStream()`` on the thread that will read the stream;
/// one that needs the bytes in memory calls ``data()``.
public struct UploadBody: Sendable {
    /// How the end of the body is marked on the wire.
    public enum Framing: Sendable, Hashable {
        /// A `Content-Length` header with ``UploadBody/contentLength``. Every server accepts it;
        /// the default.
        case contentLength
        /// `Transfer-Encoding: chunked`, without a `Content-Length`. Some servers and storage
        /// services refuse it.
        case chunked
    }

    /// One stretch of the body.
    enum Segment: Sendable {
        /// Bytes in memory: delimiters, part headers, field values, `Data` files.
        case bytes(Data)
        /// A file on disk and the length it had when the body was measured.
        case file(path: String, length: Int64, source: File)
        /// A stream of a declared length.
        case stream(length: Int64, make: @Sendable () throws -> InputStream, source: File)
    }

    /// The `Content-Type` header the body goes with, e.g.
    /// `multipart/form-data; boundary=SwiftConnect-…`.
    public let contentType: String
    /// The exact number of bytes in the body.
    public let contentLength: Int64
    /// How the body's end is marked: `Content-Length` (the default) or chunked.
    public let framing: Framing
    /// The stretches of the body, in order.
    let segments: [Segment]

    /// A new, unopened stream of the body's bytes, reading from the first byte.
    ///
    /// The stream reads files as it is read and closes each when done. If a file or stream does
    /// not deliver the length measured when the request was built, `read` returns `-1` and
    /// `streamError` is ``ConnectError/uploadSourceChanged(_:detail:)``: the body is never
    /// completed with wrong content.
    public func makeInputStream() -> InputStream {
        UploadBodyStream(reader: makeReader())
    }

    /// The whole body in memory, for transports that cannot stream (``StubTransport``) and for
    /// tests. Large files make large `Data`: stream with ``makeInputStream()`` where you can.
    ///
    /// - Throws: ``ConnectError/uploadSourceChanged(_:detail:)`` when a file or stream does not
    ///   deliver its measured length.
    public func data() throws -> Data {
        let reader = makeReader()
        defer { reader.close() }
        var data = Data()
        // The declared length is a promise a stream may break: reserving it whole trapped for a
        // stream that declares more than memory holds. Past 64 MiB the data grows as it is read.
        if let capacity = Int(exactly: contentLength) { data.reserveCapacity(min(capacity, 64 << 20)) }
        let chunkSize = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        while true {
            let count = reader.read(into: buffer, maxLength: chunkSize)
            if count > 0 {
                data.append(buffer, count: count)
            } else if count == 0 {
                return data
            } else {
                throw reader.failure ?? ConnectError.invalidResponse
            }
        }
    }

    /// A reader positioned at the first byte.
    func makeReader() -> UploadBodyReader {
        UploadBodyReader(segments: segments)
    }
}
