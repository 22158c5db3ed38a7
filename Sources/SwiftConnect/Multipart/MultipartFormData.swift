import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A `multipart/form-data` body (RFC 7578 on RFC 2046), described rather than encoded: text
/// fields and files in order, and a boundary.
///
/// ``makeBody(framing:)`` checks the description and measures it into an ``UploadBody``, whose
/// bytes are produced only while it is sent. The layout, for each part and then once at the end:
///
/// ```text
/// --BOUNDARY CRLF
/// Content-Disposition: form-data; name="KEY"[; filename="NAME"] CRLF
/// [Content-Type: TYPE CRLF]                                 (files only)
/// CRLF
/// CONTENT CRLF
/// ...
/// --BOUNDARY-- CRLF
/// ```
///
/// Names and file names are sent as UTF-8 with `"`, CR and LF replaced by `%22`, `%0D` and `%0A`
/// (RFC 7578 section 2 and the HTML form-submission algorithm, which servers such as werkzeug
/// decode); no other escaping is applied, so a name can never end its header line or its quoted
/// string early.
struct MultipartFormData: Sendable {
    /// One part: a text field or a file.
    enum Part: Sendable {
        case field(name: String, value: String)
        case file(File)
    }

    /// The boundary; ``randomBoundary()`` unless given.
    let boundary: String
    /// Whether the boundary was picked here (and may be picked again if a field contains it).
    private let boundaryIsRandom: Bool
    /// The parts, in order.
    private(set) var parts: [Part] = []

    /// A body with a random boundary, or with `boundary` (checked by ``makeBody(framing:)``).
    init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
        self.boundaryIsRandom = boundary == nil
    }

    /// `SwiftConnect-` and 32 random hexadecimal digits (128 bits).
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return "SwiftConnect-" + hex(high) + hex(low)
    }

    /// Appends a text field.
    mutating func append(field name: String, value: String) {
        parts.append(.field(name: name, value: value))
    }

    /// Appends a file.
    mutating func append(_ file: File) {
        parts.append(.file(file))
    }

    /// `multipart/form-data; boundary=…`, the boundary quoted when it has characters a token
    /// cannot carry.
    static func contentType(boundary: String) -> String {
        let isToken = boundary.utf8.allSatisfy(ASCIISet.token.contains)
        return "multipart/form-data; boundary=" + (isToken ? boundary : "\"\(boundary)\"")
    }

    /// What the body holds — field names, file keys, names and types — never field values, which
    /// may be secret. For debug output.
    var summary: String {
        guard !parts.isEmpty else { return "no parts" }
        return parts.map { part in
            switch part {
            case .field(let name, _): return "field \"\(name)\""
            case .file(let file): return "file \(file)"
            }
        }.joined(separator: ", ")
    }

    // MARK: Checking and measuring

    /// Checks every part, measures every file and lays the body out.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)`` with ``InvalidRequestReason/invalidBoundary(_:)``,
    ///   ``InvalidRequestReason/invalidPartName(_:)``, ``InvalidRequestReason/invalidFileName(_:)``,
    ///   ``InvalidRequestReason/invalidMimeType(_:)``, ``InvalidRequestReason/fileNotFound(_:)``,
    ///   ``InvalidRequestReason/fileNotReadable(_:)`` or ``InvalidRequestReason/bodyTooLarge(_:)``.
    func makeBody(framing: UploadBody.Framing) throws -> UploadBody {
        let boundary = try usableBoundary()
        var segments: [UploadBody.Segment] = []
        var pending = Data()
        var length: Int64 = 0

        func emit(_ text: String) {
            pending.append(contentsOf: text.utf8)
        }
        /// The name of the last file counted, for ``InvalidRequestReason/bodyTooLarge(_:)``: only
        /// a file can push the length past `Int64.max` (a stream may declare any `UInt64`).
        var lastFile = ""
        func count(_ size: UInt64) throws {
            let (sum, overflow) = length.addingReportingOverflow(Int64(clamping: size))
            guard size <= UInt64(Int64.max), !overflow else {
                throw ConnectError.invalidRequest(.bodyTooLarge(lastFile))
            }
            length = sum
        }
        func flush() throws {
            guard !pending.isEmpty else { return }
            try count(UInt64(pending.count))
            segments.append(.bytes(pending))
            pending = Data()
        }

        for part in parts {
            emit("--\(boundary)\r\n")
            switch part {
            case .field(let name, let value):
                try Self.check(name: name)
                emit("Content-Disposition: form-data; name=\"\(Self.escaped(name))\"\r\n\r\n")
                emit(value)
            case .file(let file):
                try Self.check(name: file.key)
                guard !file.name.utf8.contains(0) else {
                    throw ConnectError.invalidRequest(.invalidFileName(file.name))
                }
                guard file.mimeType.isValid else {
                    throw ConnectError.invalidRequest(.invalidMimeType(file.mimeType.rawValue))
                }
                emit("Content-Disposition: form-data; name=\"\(Self.escaped(file.key))\"")
                emit("; filename=\"\(Self.escaped(file.name))\"\r\n")
                emit("Content-Type: \(file.mimeType.rawValue)\r\n\r\n")
                switch file.content {
                case .data(let data):
                    try flush()
                    lastFile = file.name
                    if !data.isEmpty {
                        try count(UInt64(data.count))
                        segments.append(.bytes(data))
                    }
                case .fileURL(let url):
                    let size = try Self.measureFile(at: url)
                    try flush()
                    lastFile = file.name
                    try count(UInt64(size))
                    segments.append(.file(path: url.path, length: size, source: file))
                case .stream(let streamLength, let makeStream):
                    try flush()
                    lastFile = file.name
                    try count(streamLength)
                    segments.append(.stream(length: Int64(streamLength), make: makeStream, source: file))
                }
            }
            emit("\r\n")
        }
        emit("--\(boundary)--\r\n")
        try flush()
        return UploadBody(
            contentType: Self.contentType(boundary: boundary), contentLength: length, framing: framing,
            segments: segments)
    }

    /// The boundary to use: the given one if valid and absent from every field and every file
    /// held in memory; a random one, drawn again in the (astronomically unlikely) case a field
    /// contains it. (Files on disk and streams are read while they are sent, so they are not
    /// searched: a fixed boundary is for bodies whose content you know.)
    private func usableBoundary() throws -> String {
        guard boundaryIsRandom else {
            guard Self.isValidBoundary(boundary), !fieldsContain(boundary), !dataFilesContain(boundary) else {
                throw ConnectError.invalidRequest(.invalidBoundary(boundary))
            }
            return boundary
        }
        var candidate = boundary
        while fieldsContain(candidate) {
            candidate = Self.randomBoundary()
        }
        return candidate
    }

    /// Compared as bytes, as the body is: `String.contains` compares characters, and misses a
    /// boundary whose last letter a combining mark in the field joins (`"--BND\u{301}"`).
    private func fieldsContain(_ boundary: String) -> Bool {
        let bytes = Data(boundary.utf8)
        return parts.contains { part in
            if case .field(_, let value) = part { return Data(value.utf8).range(of: bytes) != nil }
            return false
        }
    }

    private func dataFilesContain(_ boundary: String) -> Bool {
        let bytes = Data(boundary.utf8)
        return parts.contains { part in
            guard case .file(let file) = part, case .data(let data) = file.content else { return false }
            return data.range(of: bytes) != nil
        }
    }

    /// RFC 2046: 1 to 70 characters from `bchars`, not ending with a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy(ASCIISet.boundary.contains)
    }

    /// A field name (a part's key) must be non-empty and free of NUL.
    static func check(name: String) throws {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw ConnectError.invalidRequest(.invalidPartName(name))
        }
    }

    /// `"` → `%22`, CR → `%0D`, LF → `%0A`, as browsers write them; `\` → `\\`, a quoted-pair
    /// (RFC 9110 §5.6.4), which parsers of quoted strings (werkzeug, Go, busboy, Django) read as
    /// one `\` — left alone, it escaped the next character, and at the end of a name, the closing
    /// quote. Everything else, non-ASCII included, as UTF-8.
    static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A || $0 == 0x5C }) else {
            return name
        }
        var result = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            case "\\": result += "\\\\"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The size of a regular, readable file.
    ///
    /// - Throws: ``InvalidRequestReason/fileNotFound(_:)`` when nothing is there,
    ///   ``InvalidRequestReason/fileNotReadable(_:)`` for a directory, a device, a non-file URL or
    ///   a file the process may not read.
    static func measureFile(at url: URL) throws -> Int64 {
        guard url.isFileURL else { throw ConnectError.invalidRequest(.fileNotReadable(url)) }
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            let code = errno
            throw ConnectError.invalidRequest(
                code == ENOENT || code == ENOTDIR ? .fileNotFound(url) : .fileNotReadable(url))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ConnectError.invalidRequest(.fileNotReadable(url)) }
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw ConnectError.invalidRequest(.fileNotReadable(url)) }
        close(descriptor)
        return Int64(info.st_size)
    }
}
