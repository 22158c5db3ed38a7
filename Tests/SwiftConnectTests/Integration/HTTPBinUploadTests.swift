import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads sent over URLSession to the local test server and checked from its side of the wire by
/// werkzeug: httpbin's `/post`, plus `/multipart` (every part with its name, file name and type)
/// and `/sink` (size and framing of bodies of any size) from scripts/swiftconnect_testserver.py.
@Suite(.enabled(if: HTTPBin.isAvailable, HTTPBin.skipReason), timeLimit(minutes: 1))
struct HTTPBinUploadTests {
    let connect = HTTPBin.connect { $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase }

    struct Call: Connector {
        var baseURL: URL = HTTPBin.baseURL
        var endpoint: String
        var method: HTTPMethod = .post
        var parameters: ParametersRepresentable? = nil
    }

    /// What `/multipart` reports.
    struct Parts: Decodable, Sendable {
        struct Part: Decodable, Sendable {
            let key: String
            let filename: String?
            let contentType: String?
            let size: Int
            let sha256: String
            let contentBase64: String
            var content: Data? { Data(base64Encoded: contentBase64) }
        }
        let fields: [[String]]
        let files: [Part]
        let contentLength: String?
        let transferEncoding: String?
    }

    /// What `/sink` reports.
    struct Sink: Decodable, Sendable {
        let bytes: Int64
        let sha256: String?
        let tailBase64: String
        let contentLength: String?
        let transferEncoding: String?
        var tail: String { String(decoding: Data(base64Encoded: tailBase64) ?? Data(), as: UTF8.self) }
    }

    /// What httpbin's `/post` echoes: form fields, and the first file of each key (text as text,
    /// binary as a `data:` URL with the part's content type).
    struct PostEcho: Decodable, Sendable {
        let form: [String: StringOrStrings]
        let files: [String: StringOrStrings]
        let headers: [String: String]
    }

    static let binary = Data((0..<4096).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 151 &+ 3) })

    // MARK: werkzeug sees every part

    @Test func httpbinPostSeesFieldsAndFiles() async throws {
        struct Meta: Encodable, Sendable {
            let title: String
            let published: Bool
            let rating: Double
            let tags: [String]
        }
        let directory = try TemporaryDirectory()
        let onDisk = try directory.file("notes.txt", Data("from disk\n".utf8))
        let call = Call(
            endpoint: "/post",
            parameters: CompositeParameters(
                .query(key: "q", value: "1"),
                .jsonObject(value: Meta(title: "Zoë & co", published: true, rating: 4.5, tags: ["a", "b"]))))
        let files = [
            File(name: "hello.txt", key: "text", mimeType: .txt, data: Data("hello world".utf8)),
            File(name: "blob.bin", key: "binary", mimeType: .binary, data: Self.binary),
            File(name: "empty.txt", key: "empty", mimeType: .txt, data: Data()),
            File(key: "disk", fileURL: onDisk),
        ]

        let echo = try await connect.upload(files: files, to: call).decoded(toType: PostEcho.self).value

        #expect(echo.form["title"] == .one("Zoë & co"))
        #expect(echo.form["published"] == .one("true"))
        #expect(echo.form["rating"] == .one("4.5"))
        #expect(echo.form["tags"] == .one(#"["a","b"]"#))
        #expect(echo.files["text"] == .one("hello world"))
        #expect(
            echo.files["binary"] == .one("data:application/octet-stream;base64," + Self.binary.base64EncodedString()))
        #expect(echo.files["empty"] == .one(""))
        #expect(echo.files["disk"] == .one("from disk\n"))
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=SwiftConnect-") == true)
    }

    @Test func werkzeugSeesEveryFileWithItsNameFilenameAndType() async throws {
        let directory = try TemporaryDirectory()
        let disk = try directory.file("scan.pdf", Self.binary)
        let files = [
            File(name: "one.txt", key: "docs", mimeType: .txt, data: Data("first".utf8)),
            File(name: "two.json", key: "docs", mimeType: .json, data: Data("{}".utf8)),
            File(key: "docs", fileURL: disk),
            File(name: "résumé 日本.txt", key: "unicode", mimeType: .txt, data: Data("ü".utf8)),
            File(
                name: "say \"hi\".txt", key: "quoted", mimeType: MimeType(rawValue: "text/plain; charset=utf-8"),
                data: Data("q".utf8)),
            File(name: "nothing.bin", key: "empty", mimeType: .binary, data: Data()),
            File(
                name: "raw.bin", key: "binary", mimeType: MimeType(rawValue: "application/x-custom"), data: Self.binary),
        ]
        let call = Call(endpoint: "/multipart", parameters: CompositeParameters(.form(key: "caption", value: "Été")))

        let parts = try await connect.upload(files: files, to: call).decoded(toType: Parts.self).value

        #expect(parts.fields == [["caption", "Été"]])
        let docs = parts.files.filter { $0.key == "docs" }
        #expect(docs.map(\.filename) == ["one.txt", "two.json", "scan.pdf"])
        #expect(docs.map(\.contentType) == ["text/plain", "application/json", "application/pdf"])
        #expect(docs.first?.content == Data("first".utf8))
        #expect(docs.last?.content == Self.binary)

        let byKey = Dictionary(parts.files.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byKey["unicode"]?.filename == "résumé 日本.txt")
        #expect(byKey["unicode"]?.content == Data("ü".utf8))
        #expect(byKey["quoted"]?.filename == "say \"hi\".txt")
        #expect(byKey["quoted"]?.contentType == "text/plain; charset=utf-8")
        #expect(byKey["empty"]?.filename == "nothing.bin")
        #expect(byKey["empty"]?.size == 0)
        #expect(byKey["binary"]?.contentType == "application/x-custom")
        #expect(byKey["binary"]?.content == Self.binary)
        #expect(parts.files.count == files.count)
    }

    @Test func lineBreaksInNamesArriveEscapedAndNeverSplitThePart() async throws {
        let call = Call(
            endpoint: "/multipart",
            parameters: CompositeParameters(.form(key: "a\r\nContent-Type: text/html", value: "v")))
        let file = File(name: "x\r\n\r\ny.txt", key: "k\"ey", mimeType: .txt, data: Data("z".utf8))
        let parts = try await connect.upload(files: [file], to: call).decoded(toType: Parts.self).value
        #expect(parts.fields == [["a%0D%0AContent-Type: text/html", "v"]])
        #expect(parts.files.first?.key == "k\"ey")
        #expect(parts.files.first?.filename == "x%0D%0A%0D%0Ay.txt")
        #expect(parts.files.first?.content == Data("z".utf8))
    }

    /// werkzeug reads a quoted-pair: a raw `\` at the end of a key escaped its closing quote, and
    /// the file arrived as a field; inside a name, it vanished (`c:\dir` became `c:dir`).
    @Test func backslashesInNamesArriveIntact() async throws {
        let call = Call(
            endpoint: "/multipart", parameters: CompositeParameters(.form(key: #"back\slash\"#, value: "v")))
        let file = File(name: #"c:\dir\x.txt"#, key: #"trail\"#, mimeType: .txt, data: Data("content".utf8))
        let parts = try await connect.upload(files: [file], to: call).decoded(toType: Parts.self).value
        #expect(parts.fields == [[#"back\slash\"#, "v"]])
        #expect(parts.files.count == 1)
        #expect(parts.files.first?.key == #"trail\"#)
        #expect(parts.files.first?.filename == #"c:\dir\x.txt"#)
        #expect(parts.files.first?.content == Data("content".utf8))
    }

    // MARK: Framing

    @Test func fileFromDiskGoesOutWithAContentLength() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("five.bin", size: 5 << 20)
        let file = File(key: "file", fileURL: url)
        let (_, body) = try connect.uploadRequest(files: [file], to: Call(endpoint: "/sink"))

        let sink = try await connect.upload(files: [file], to: Call(endpoint: "/sink")).decoded(toType: Sink.self).value

        #expect(sink.bytes == body.contentLength)
        #expect(sink.contentLength == String(body.contentLength))
        #expect(sink.transferEncoding == nil)
        #expect(sink.tail.hasSuffix("--\r\n"))
    }

    @Test func chunkedFramingGoesOutChunked() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("three.bin", size: 3 << 20)
        let file = File(key: "file", fileURL: url)
        let options = UploadOptions(framing: .chunked)

        let sink = try await connect.upload(files: [file], to: Call(endpoint: "/sink"), options: options)
            .decoded(toType: Sink.self).value

        #expect(sink.transferEncoding == "chunked")
        #expect(sink.contentLength == nil)
        #expect(sink.bytes > 3 << 20)
        #expect(sink.tail.hasSuffix("--\r\n"))
    }

    @Test(arguments: [UploadBody.Framing.contentLength, .chunked])
    func contentIsIntactEitherWay(framing: UploadBody.Framing) async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("two.bin", size: 2 << 20)
        let expected = try Data(contentsOf: url)
        let call = Call(endpoint: "/multipart")
        let parts = try await connect.upload(
            files: [File(key: "f", fileURL: url)], to: call, options: UploadOptions(framing: framing)
        )
        .decoded(toType: Parts.self).value
        let part = try #require(parts.files.first)
        #expect(part.size == expected.count)
        #expect(part.content == expected.prefix(65536))
        #expect(part.sha256 == (try await serverSHA256(of: expected)))
    }

    /// The SHA-256 the server computes for `data` (no CryptoKit on Linux).
    func serverSHA256(of data: Data) async throws -> String? {
        struct Raw: Connector {
            let data: Data
            var baseURL: URL { HTTPBin.baseURL }
            var endpoint: String { "/sink?sha256=1" }
            var method: HTTPMethod { .post }
            var parameters: ParametersRepresentable? { Parameter.data(data, contentType: "application/octet-stream") }
        }
        return try await connect.request(Raw(data: data)).decoded(toType: Sink.self).value.sha256
    }

    // MARK: Progress

    @Test func progressRisesToTheKnownTotalBeforeTheResponse() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("twenty.bin", size: 20 << 20)
        let file = File(key: "file", fileURL: url)
        let call = Call(endpoint: "/sink")
        let (_, body) = try connect.uploadRequest(files: [file], to: call)
        let values = PipelineFixtures.Recorder<UploadProgress>()

        let future = connect.upload(files: [file], to: call) { values.append($0) }
        let sink = try await future.decoded(toType: Sink.self).value

        let progress = values.values
        #expect(progress.count > 1)
        #expect(progress.allSatisfy { $0.totalBytes == body.contentLength })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.bytesSent < $1.bytesSent })
        #expect(progress.last?.bytesSent == body.contentLength)
        #expect(sink.bytes == body.contentLength)
    }

    @Test func progressSequenceRisesToTheTotalAndFinishes() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("ten.bin", size: 10 << 20)
        let task = connect.uploadTask(files: [File(key: "file", fileURL: url)], to: Call(endpoint: "/sink"))
        var values: [UploadProgress] = []
        for await progress in task.progress { values.append(progress) }
        let sink = try await task.response.decoded(toType: Sink.self).value
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesSent < $1.bytesSent })
        #expect(values.last?.bytesSent == sink.bytes)
        #expect(values.last?.isComplete == true)
    }

    // MARK: Cancelling and failing

    @Test(.enabled(if: openFilePaths() != nil, "needs /proc/self/fd"))
    func cancellingMidUploadStopsItAndClosesTheFile() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("fifty.bin", size: 50 << 20)
        // On a loaded machine the 50 MiB can be sent before the cancel gets there; that attempt
        // proves nothing and is repeated. A cancel that never works fails every attempt.
        var outcomes: [String] = []
        for _ in 0..<4 {
            let firstProgress = PipelineFixtures.Gate()
            let task = connect.uploadTask(files: [File(key: "file", fileURL: url)], to: Call(endpoint: "/post"))
            let watcher = Task {
                for await progress in task.progress where progress.bytesSent > 0 {
                    firstProgress.arrive()
                }
            }
            try await firstProgress.wait()
            task.cancel()

            let result = await task.response.asyncResult
            await watcher.value  // the progress sequence finishes
            if case .success = result {
                outcomes.append("finished before the cancel arrived")
                continue
            }
            #expect((result.failureValue as? ConnectError)?.isCancellation == true, "got \(result)")
            #expect(await eventually { openFilePaths()?.contains(url.path) == false }, "the file must be closed")
            return
        }
        Issue.record("the upload was never cancelled: \(outcomes)")
    }

    @Test func fileThatShrinksWhileUploadingFailsWithUploadSourceChanged() async throws {
        let directory = try TemporaryDirectory()
        let url = try directory.largeFile("shrinking.bin", size: 24 << 20)
        let file = File(key: "file", fileURL: url)
        let truncated = PipelineFixtures.Counter()
        // The server reads slowly, so the upload is still running when the file is cut short.
        let future = connect.upload(files: [file], to: Call(endpoint: "/sink?slow=1")) { progress in
            if progress.bytesSent > 0, truncated.increment() == 1 {
                _ = truncate(url.path, 1 << 20)
            }
        }
        let result = await future.asyncResult
        guard case .failure(ConnectError.uploadSourceChanged(let source, let detail)) = result else {
            Issue.record("expected uploadSourceChanged, got \(result)")
            return
        }
        #expect(source.fileURL == url)
        #expect(detail.contains("bytes"))
    }

    @Test func fileThatGrowsBeforeItIsSentFailsWithUploadSourceChanged() async throws {
        // An adapter runs after the body was measured and before it is sent.
        struct Grow: RequestAdapter {
            let url: URL
            func adapt(_ request: URLRequest) async throws -> URLRequest {
                let handle = try FileHandle(forWritingTo: url)
                _ = handle.seekToEndOfFile()
                handle.write(Data("more".utf8))
                try handle.close()
                return request
            }
        }
        let directory = try TemporaryDirectory()
        let url = try directory.file("growing.txt", Data("start".utf8))
        let connect = Connect(
            middleware: ConnectMiddleware(adapters: [Grow(url: url)]),
            configuration: HTTPBin.connect().configuration)
        let result = await connect.upload(files: [File(key: "f", fileURL: url)], to: Call(endpoint: "/post"))
            .asyncResult
        guard case .failure(ConnectError.uploadSourceChanged(let source, _)) = result else {
            Issue.record("expected uploadSourceChanged, got \(result)")
            return
        }
        #expect(source.fileURL == url)
    }

    @Test func streamShorterThanDeclaredFailsInsteadOfSendingAShortBody() async throws {
        let file = File(name: "s.bin", key: "s", mimeType: .binary, length: 1000) {
            InputStream(data: Data(repeating: 1, count: 10))
        }
        let result = await connect.upload(files: [file], to: Call(endpoint: "/sink")).asyncResult
        guard case .failure(ConnectError.uploadSourceChanged) = result else {
            Issue.record("expected uploadSourceChanged, got \(result)")
            return
        }
    }

    // MARK: Redirects

    @Test func temporaryRedirectDeliversTheFilesToTheNewLocation() async throws {
        let call = Call(
            endpoint: "/redirect-to",
            parameters: CompositeParameters(
                .query(key: "url", value: "/post"), .query(key: "status_code", value: "307")))
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("after redirect".utf8))
        let echo = try await connect.upload(files: [file], to: call).decoded(toType: PostEcho.self).value
        #expect(echo.files["doc"] == .one("after redirect"))
    }

    /// Polls `condition` for up to two seconds.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<40 {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return condition()
    }
}
