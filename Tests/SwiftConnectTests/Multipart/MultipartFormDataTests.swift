import Foundation
import Testing

@testable import SwiftConnect

@Suite("MultipartFormData")
struct MultipartFormDataTests {
    static let boundary = "Boundary-1234"

    /// The bytes of `multipart` as a string with CRLF spelled out, for readable comparisons.
    func encoded(_ multipart: MultipartFormData, framing: UploadBody.Framing = .contentLength) throws -> String {
        let body = try multipart.makeBody(framing: framing)
        let data = try body.data()
        #expect(Int64(data.count) == body.contentLength, "contentLength must be the exact byte count")
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Exact bytes

    @Test func fieldsAndFilesFollowTheRFC7578Layout() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(field: "title", value: "Hello")
        multipart.append(File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("file content".utf8)))

        #expect(
            try encoded(multipart)
                == "--Boundary-1234\r\n"
                + "Content-Disposition: form-data; name=\"title\"\r\n"
                + "\r\n"
                + "Hello\r\n"
                + "--Boundary-1234\r\n"
                + "Content-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n"
                + "Content-Type: text/plain\r\n"
                + "\r\n"
                + "file content\r\n"
                + "--Boundary-1234--\r\n")
    }

    @Test func emptyFileAndEmptyFieldKeepTheirCRLFs() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(field: "note", value: "")
        multipart.append(File(name: "empty.bin", key: "f", mimeType: .binary, data: Data()))

        #expect(
            try encoded(multipart)
                == "--Boundary-1234\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n\r\n"
                + "--Boundary-1234\r\nContent-Disposition: form-data; name=\"f\"; filename=\"empty.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n\r\n"
                + "--Boundary-1234--\r\n")
    }

    @Test func noPartsIsTheCloseDelimiterAlone() throws {
        #expect(try encoded(MultipartFormData(boundary: Self.boundary)) == "--Boundary-1234--\r\n")
    }

    @Test func binaryContentIsSentByteForByte() throws {
        let bytes = Data((0...255).map { UInt8($0) } + [0x0D, 0x0A, 0x2D, 0x2D])
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "all.bin", key: "blob", mimeType: .binary, data: bytes))
        let data = try multipart.makeBody(framing: .contentLength).data()

        let head = Data(
            ("--Boundary-1234\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"all.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        #expect(data == head + bytes + Data("\r\n--Boundary-1234--\r\n".utf8))
    }

    @Test func fileFromDiskAndStreamAreReadIntoTheSameLayout() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("photo.jpg", Data("JPEGDATA".utf8))
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(key: "photo", fileURL: url))
        multipart.append(
            File(name: "s.txt", key: "stream", mimeType: .txt, length: 6) { InputStream(data: Data("stream".utf8)) })

        #expect(
            try encoded(multipart)
                == "--Boundary-1234\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\nJPEGDATA\r\n"
                + "--Boundary-1234\r\nContent-Disposition: form-data; name=\"stream\"; filename=\"s.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nstream\r\n"
                + "--Boundary-1234--\r\n")
    }

    @Test func severalFilesUnderOneKeyKeepTheirOrder() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "1.txt", key: "files", mimeType: .txt, data: Data("one".utf8)))
        multipart.append(File(name: "2.txt", key: "files", mimeType: .txt, data: Data("two".utf8)))
        let text = try encoded(multipart)
        let first = try #require(text.range(of: "filename=\"1.txt\""))
        let second = try #require(text.range(of: "filename=\"2.txt\""))
        #expect(first.lowerBound < second.lowerBound)
        #expect(text.components(separatedBy: "name=\"files\"").count == 3)
    }

    // MARK: Escaping names

    @Test func quotesAndLineBreaksInNamesAreEscapedSoThePartStaysIntact() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(field: "a\"b\r\nc", value: "v")
        multipart.append(
            File(
                name: "evil\"\r\nContent-Type: text/html\r\n\r\n.txt", key: "k\n", mimeType: .txt, data: Data("x".utf8))
        )

        #expect(
            try encoded(multipart)
                == "--Boundary-1234\r\nContent-Disposition: form-data; name=\"a%22b%0D%0Ac\"\r\n\r\nv\r\n"
                + "--Boundary-1234\r\nContent-Disposition: form-data; name=\"k%0A\"; "
                + "filename=\"evil%22%0D%0AContent-Type: text/html%0D%0A%0D%0A.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nx\r\n"
                + "--Boundary-1234--\r\n")
    }

    @Test func nonASCIINamesAreSentAsUTF8() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "résumé 日本.pdf", key: "clé", mimeType: .pdf, data: Data("%".utf8)))
        let data = try multipart.makeBody(framing: .contentLength).data()
        let expected =
            "--Boundary-1234\r\nContent-Disposition: form-data; name=\"clé\"; filename=\"résumé 日本.pdf\"\r\n"
            + "Content-Type: application/pdf\r\n\r\n%\r\n--Boundary-1234--\r\n"
        #expect(data == Data(expected.utf8))
    }

    @Test func escapingLeavesOtherCharactersAlone() {
        #expect(MultipartFormData.escaped("plain name.txt") == "plain name.txt")
        #expect(MultipartFormData.escaped("100%;a=b'c") == "100%;a=b'c")
        #expect(MultipartFormData.escaped("\"\r\n") == "%22%0D%0A")
    }

    /// Inside a quoted string, `\` starts a quoted-pair: a raw one at the end of a name escaped the
    /// closing quote, and the file arrived as a field named `trail"; filename=`.
    @Test func aBackslashIsSentAsAQuotedPair() throws {
        #expect(MultipartFormData.escaped("trail\\") == #"trail\\"#)
        #expect(MultipartFormData.escaped(#"c:\dir\"x".txt"#) == #"c:\\dir\\%22x%22.txt"#)
        var multipart = MultipartFormData(boundary: "B")
        multipart.append(File(name: #"c:\x.txt"#, key: "trail\\", mimeType: .txt, data: Data("1".utf8)))
        let data = try multipart.makeBody(framing: .contentLength).data()
        let head = "--B\r\nContent-Disposition: form-data; name=\"trail\\\\\"; filename=\"c:\\\\x.txt\"\r\n"
        #expect(String(decoding: data, as: UTF8.self).hasPrefix(head))
    }

    // MARK: Boundary

    @Test func randomBoundariesAreLongUniqueTokens() {
        let boundaries = (0..<100).map { _ in MultipartFormData.randomBoundary() }
        #expect(Set(boundaries).count == 100)
        for boundary in boundaries {
            #expect(boundary.count == 45)
            #expect(MultipartFormData.isValidBoundary(boundary))
            #expect(boundary.utf8.allSatisfy(ASCIISet.token.contains))
        }
    }

    @Test func contentTypeNamesTheBoundaryAndQuotesItWhenNeeded() throws {
        let body = try MultipartFormData(boundary: "simple-1").makeBody(framing: .contentLength)
        #expect(body.contentType == "multipart/form-data; boundary=simple-1")
        let spaced = try MultipartFormData(boundary: "with space:colon").makeBody(framing: .contentLength)
        #expect(spaced.contentType == "multipart/form-data; boundary=\"with space:colon\"")
    }

    @Test(arguments: ["", String(repeating: "a", count: 71), "ends with space ", "bad\"quote", "new\nline", "é"])
    func invalidBoundariesAreRejected(boundary: String) {
        #expect(throws: ConnectError.self) { try MultipartFormData(boundary: boundary).makeBody(framing: .chunked) }
        #expect(rejection(MultipartFormData(boundary: boundary)) == .invalidBoundary(boundary))
    }

    @Test func givenBoundaryThatOccursInAFieldIsRejected() {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(field: "text", value: "look: --Boundary-1234 inside")
        #expect(rejection(multipart) == .invalidBoundary(Self.boundary))
    }

    /// Searched as bytes: a combining mark after the boundary joins its last letter into another
    /// character, which `String.contains` does not match, but the bytes on the wire still do.
    @Test func givenBoundaryFollowedByACombiningMarkInAFieldIsRejected() {
        var multipart = MultipartFormData(boundary: "BND")
        multipart.append(field: "text", value: "x\r\n--BND\u{301}\r\n")
        #expect(rejection(multipart) == .invalidBoundary("BND"))
    }

    /// A file given as `Data` is searched like a field: a given boundary inside it would end its
    /// part early on the server. Elsewhere in the file, or on the file's other side, is fine.
    @Test func givenBoundaryThatOccursInAFileHeldInMemoryIsRejected() throws {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(
            File(name: "a.txt", key: "file", mimeType: .txt, data: Data("x\r\n--Boundary-1234\r\ny".utf8)))
        #expect(rejection(multipart) == .invalidBoundary(Self.boundary))

        var unrelated = MultipartFormData(boundary: Self.boundary)
        unrelated.append(File(name: "a.txt", key: "file", mimeType: .txt, data: Data("--Boundary-123".utf8)))
        _ = try unrelated.makeBody(framing: .contentLength)
    }

    @Test func randomBoundaryNeverOccursInAField() throws {
        var multipart = MultipartFormData()
        multipart.append(field: "text", value: "--" + multipart.boundary)
        let body = try multipart.makeBody(framing: .contentLength)
        let boundary = try #require(body.contentType.components(separatedBy: "boundary=").last)
        #expect(boundary != multipart.boundary)
        #expect(String(decoding: try body.data(), as: UTF8.self).hasSuffix("--\(boundary)--\r\n"))
    }

    // MARK: Bad input

    @Test func emptyOrNULKeysAreRejected() {
        var emptyField = MultipartFormData(boundary: Self.boundary)
        emptyField.append(field: "", value: "v")
        #expect(rejection(emptyField) == .invalidPartName(""))

        var nulKey = MultipartFormData(boundary: Self.boundary)
        nulKey.append(File(name: "a", key: "k\0", mimeType: .txt, data: Data()))
        #expect(rejection(nulKey) == .invalidPartName("k\0"))
    }

    @Test func fileNameWithNULIsRejected() {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "a\0.txt", key: "k", mimeType: .txt, data: Data()))
        #expect(rejection(multipart) == .invalidFileName("a\0.txt"))
    }

    @Test(arguments: [UInt64.max, UInt64(Int64.max), UInt64(Int64.max) - 100])
    func streamLengthsThatPassInt64MaxWithTheFramingAreRejected(length: UInt64) {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "s", key: "k", mimeType: .binary, length: length) { InputStream(data: Data()) })
        #expect(rejection(multipart) == .bodyTooLarge("s"))
    }

    @Test func streamsWhoseLengthsTogetherPassInt64MaxAreRejectedAtTheOneThatPassesIt() throws {
        let half = UInt64(Int64.max / 2)
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "first", key: "k", mimeType: .binary, length: half) { InputStream(data: Data()) })
        // Alone, the first fits: the body's length counts it and the framing.
        let alone = try multipart.makeBody(framing: .contentLength)
        #expect(alone.contentLength > Int64(half))
        multipart.append(File(name: "second", key: "k", mimeType: .binary, length: half) { InputStream(data: Data()) })
        #expect(rejection(multipart) == .bodyTooLarge("second"))
    }

    @Test(arguments: ["", "text/plain\r\nX: 1", "image/jpé", "text/plain\u{7F}"])
    func mediaTypesThatWouldBreakThePartAreRejected(raw: String) {
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(name: "a", key: "k", mimeType: MimeType(rawValue: raw), data: Data()))
        #expect(rejection(multipart) == .invalidMimeType(raw))
    }

    @Test func missingFileIsRejectedWhenMeasured() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("nope.bin")
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(key: "f", fileURL: missing))
        #expect(rejection(multipart) == .fileNotFound(missing))

        let underMissingDirectory = directory.url.appendingPathComponent("nodir/nope.bin")
        var nested = MultipartFormData(boundary: Self.boundary)
        nested.append(File(key: "f", fileURL: underMissingDirectory))
        #expect(rejection(nested) == .fileNotFound(underMissingDirectory))
    }

    @Test func directoriesAndNonFileURLsAreNotReadable() throws {
        let directory = try TemporaryDirectory()
        var folder = MultipartFormData(boundary: Self.boundary)
        folder.append(File(key: "f", fileURL: directory.url))
        #expect(rejection(folder) == .fileNotReadable(directory.url))

        let web = URL(string: "https://example.com/a.png")!
        var remote = MultipartFormData(boundary: Self.boundary)
        remote.append(File(key: "f", fileURL: web))
        #expect(rejection(remote) == .fileNotReadable(web))
    }

    @Test(.enabled(if: getuid() != 0, "root reads any file, so permissions cannot be tested"))
    func fileWithoutReadPermissionIsNotReadable() throws {
        let directory = try TemporaryDirectory()
        let url = try directory.file("secret.txt", Data("x".utf8))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: url.path)
        var multipart = MultipartFormData(boundary: Self.boundary)
        multipart.append(File(key: "f", fileURL: url))
        #expect(rejection(multipart) == .fileNotReadable(url))
    }

    /// The reason `multipart` is rejected with, or `nil` (recording an issue) when it is not.
    func rejection(_ multipart: MultipartFormData, sourceLocation: SourceLocation = #_sourceLocation)
        -> InvalidRequestReason?
    {
        do {
            _ = try multipart.makeBody(framing: .contentLength)
            Issue.record("expected the body to be rejected", sourceLocation: sourceLocation)
        } catch ConnectError.invalidRequest(let reason) {
            return reason
        } catch {
            Issue.record("expected invalidRequest, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
