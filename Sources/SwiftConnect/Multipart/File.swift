import Foundation

/// One file of a multipart upload: the form field it belongs to, its file name, its media type,
/// and where its bytes come from.
///
/// ```swift
/// let avatar = File(name: "me.png", key: "avatar", mimeType: .png, data: pngData)
/// let video = File(key: "video", fileURL: URL(fileURLWithPath: "/tmp/holiday.mov"))
/// ```
///
/// Three sources, each sent in bounded memory except the bytes you already hold:
/// - **Data** (``init(name:key:mimeType:data:)``): bytes already in memory, sent from there.
/// - **A file on disk** (``init(name:key:mimeType:fileURL:)``): read chunk by chunk while
///   uploading, never whole into memory. Its size is measured when the request is built; a
///   missing or unreadable file fails the upload before anything is sent, and a file that changes
///   size while it is being sent aborts the upload with ``ConnectError/uploadSourceChanged(_:detail:)``.
/// - **A stream of known length** (``init(name:key:mimeType:length:stream:)``): bytes produced
///   by an `InputStream` you create on demand.
///
/// Several files may share a key (`<input type="file" multiple>`); they are sent in order.
public struct File: Sendable, CustomStringConvertible {
    /// The file name sent in the part's `Content-Disposition` (`filename="…"`).
    public let name: String
    /// The form field name (`name="…"`), the key the server finds the file under.
    public let key: String
    /// The part's `Content-Type`.
    public let mimeType: MimeType
    /// Where the bytes come from.
    let content: Content

    enum Content: Sendable {
        case data(Data)
        case fileURL(URL)
        case stream(length: UInt64, makeStream: @Sendable () throws -> InputStream)
    }

    /// Creates a file from bytes in memory — the usage document's initializer.
    ///
    /// - Parameters:
    ///   - name: The file name the server sees, e.g. `"avatar.png"`.
    ///   - key: The form field name, e.g. `"avatar"`.
    ///   - mimeType: The media type, e.g. ``MimeType/png``.
    ///   - data: The content. Use a file URL instead for large files: data is held in memory.
    public init(name: String, key: String, mimeType: MimeType, data: Data) {
        self.name = name
        self.key = key
        self.mimeType = mimeType
        self.content = .data(data)
    }

    /// Creates a file whose content is read from disk, chunk by chunk, while it is uploaded.
    ///
    /// - Parameters:
    ///   - name: The file name the server sees; defaults to the URL's last path component.
    ///   - key: The form field name.
    ///   - mimeType: The media type; defaults to one inferred from the file's extension
    ///     (``MimeType/init(inferringFrom:)``), `application/octet-stream` when unknown.
    ///   - fileURL: A `file://` URL of a regular, readable file. It is checked when the request is
    ///     built: ``InvalidRequestReason/fileNotFound(_:)`` or
    ///     ``InvalidRequestReason/fileNotReadable(_:)`` fail the upload before anything is sent.
    public init(name: String? = nil, key: String, mimeType: MimeType? = nil, fileURL: URL) {
        self.name = name ?? fileURL.lastPathComponent
        self.key = key
        self.mimeType = mimeType ?? MimeType(inferringFrom: fileURL)
        self.content = .fileURL(fileURL)
    }

    /// Creates a file whose content is read from a stream of known length.
    ///
    /// `stream` is called each time the body is sent — once, or again when a `307`/`308`
    /// redirect or a retry sends it anew — and must return a new, unopened stream. Exactly
    /// `length` bytes are read from it; a stream that ends early or fails aborts the upload with
    /// ``ConnectError/uploadSourceChanged(_:detail:)``, and the server never sees a complete body.
    /// Bytes after the first `length` are not read, so a longer stream is sent cut to its length:
    /// asking for one more byte could block on a pipe whose writer has said all it will.
    ///
    /// - Important: The stream is read on URLSession's own thread, shared by every transfer of the
    ///   `Connect`: `read` must return promptly. A read that waits holds up every request of that
    ///   `Connect`, and cancelling cannot interrupt it.
    ///
    /// - Parameters:
    ///   - name: The file name the server sees.
    ///   - key: The form field name.
    ///   - mimeType: The media type.
    ///   - length: The number of bytes the stream delivers; it becomes part of the body's
    ///     `Content-Length`.
    ///   - stream: Makes a new stream; it runs on the thread that reads the body and may throw to
    ///     abort the upload.
    public init(
        name: String, key: String, mimeType: MimeType, length: UInt64,
        stream: @escaping @Sendable () throws -> InputStream
    ) {
        self.name = name
        self.key = key
        self.mimeType = mimeType
        self.content = .stream(length: length, makeStream: stream)
    }

    /// The content, when the file was created from `Data`; `nil` for files on disk and streams.
    public var data: Data? {
        if case .data(let data) = content { return data }
        return nil
    }

    /// The file on disk, when the file was created from a URL; `nil` otherwise.
    public var fileURL: URL? {
        if case .fileURL(let url) = content { return url }
        return nil
    }

    /// `"name" (key "key", type, source)`.
    public var description: String {
        let source: String
        switch content {
        case .data(let data): source = "\(data.count) bytes in memory"
        case .fileURL(let url): source = url.isFileURL ? url.path : url.absoluteString
        case .stream(let length, _): source = "a stream of \(length) bytes"
        }
        return "\"\(name)\" (key \"\(key)\", \(mimeType.rawValue), \(source))"
    }
}
