import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Connect.upload")
struct ConnectUploadTests {
    static let boundary = "XyZ"
    static let options = UploadOptions(boundary: boundary)

    func connector(
        _ endpoint: String = "/users/{id}/files", method: HTTPMethod = .post,
        parameters: ParametersRepresentable? = Parameter.path(key: "id", value: "7")
    ) -> TestConnector {
        TestConnector(
            baseURL: URL(string: "https://api.example.com/v1")!, endpoint: endpoint, method: method,
            parameters: parameters)
    }

    func text(_ request: URLRequest) -> String {
        String(decoding: request.httpBody ?? Data(), as: UTF8.self)
    }

    // MARK: What is sent

    @Test func fieldsThenFilesGoInOneMultipartBodyWithPathAndQueryInTheURL() async throws {
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport)
        let parameters = CompositeParameters(
            .path(key: "id", value: "7"), .query(key: "tag", value: "a b"),
            .form(key: "title", value: "Holiday"), .form(key: "title", value: "Again"))
        let files = [
            File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8)),
            File(name: "b.png", key: "doc", mimeType: .png, data: Data([0x89, 0x50])),
        ]

        _ = try await connect.upload(files: files, to: connector(parameters: parameters), options: Self.options).value

        let request = try #require(transport.requests.first)
        #expect(request.httpMethod == "POST")
        #expect(request.url?.absoluteString == "https://api.example.com/v1/users/7/files?tag=a%20b")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=XyZ")
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nAgain\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\none\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"b.png\"\r\nContent-Type: image/png\r\n\r\n"
        #expect(request.httpBody == Data(expected.utf8) + Data([0x89, 0x50]) + Data("\r\n--XyZ--\r\n".utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(request.httpBody?.count ?? -1))
    }

    @Test func jsonObjectBecomesFieldsWithTrueAsTrueAndNumbersAsWritten() async throws {
        struct Meta: Encodable, Sendable {
            let title: String
            let isPublic: Bool
            let draft: Bool
            let rating: Double
            let count: Int
            let owner: Owner
            let note: String?
        }
        struct Owner: Encodable, Sendable { let id: Int }
        let transport = RecordingTransport()
        let connect = makeConfiguredConnect(transport: transport) { $0.jsonEncoder.outputFormatting = .sortedKeys }
        let meta = Meta(
            title: "Zoë", isPublic: true, draft: false, rating: 4.5, count: 3, owner: Owner(id: 9), note: nil)
        let parameters = CompositeParameters(.path(key: "id", value: "7"), .jsonObject(value: meta))

        _ = try await connect.upload(files: nil, to: connector(parameters: parameters), options: Self.options).value

        let body = text(try #require(transport.requests.first))
        func field(_ name: String, _ value: String) -> String {
            "Content-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        #expect(body.contains(field("title", "Zoë")))
        #expect(body.contains(field("isPublic", "true")))
        #expect(body.contains(field("draft", "false")))
        #expect(body.contains(field("rating", "4.5")))
        #expect(body.contains(field("count", "3")))
        #expect(body.contains(field("owner", #"{"id":9}"#)))
        #expect(!body.contains("note"))
        #expect(body.components(separatedBy: "--XyZ\r\n").count == 7)
    }

    @Test func chunkedFramingSendsNoContentLength() async throws {
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport)
        let options = UploadOptions(framing: .chunked, boundary: Self.boundary)
        _ = try await connect.upload(files: nil, to: connector(), options: options).value
        let request = try #require(transport.requests.first)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(text(request) == "--XyZ--\r\n")
    }

    @Test func connectorHeadersGoAlongButTheMultipartContentTypeWins() async throws {
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport)
        var call = connector()
        call.headers = [.contentType("application/json"), HTTPHeader(name: "X-Client", value: "tests")]
        _ = try await connect.upload(files: nil, to: call, options: Self.options).value
        let request = try #require(transport.requests.first)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=XyZ")
        #expect(request.value(forHTTPHeaderField: "X-Client") == "tests")
    }

    /// An upload's own `Content-Length` passes the check adapters' requests go through; one the
    /// connector sets is refused, as for any request.
    @Test func anUploadsOwnContentLengthPassesTheAdaptersCheckButNotAConnectors() async throws {
        let transport = RecordingTransport()
        let passThrough = ConnectMiddleware(adapters: [ClosureAdapter { $0 }])
        let connect = makeConnect(transport: transport, middleware: passThrough)
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        _ = try await connect.upload(files: [file], to: connector(), options: Self.options).value
        let request = try #require(transport.requests.first)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(request.httpBody?.count ?? -1))

        var framed = connector()
        framed.headers = [HTTPHeader(name: "Content-Length", value: "3")]
        let refused = await connect.upload(files: [file], to: framed, options: Self.options).asyncResult
        #expect(invalidRequestReason(of: refused) == .reservedHeader(name: "Content-Length"))
        #expect(transport.requests.count == 1)
    }

    /// The upload's own `Content-Length` is the only framing header its check lets through: one
    /// an adapter sets beside it, `Transfer-Encoding: chunked`, would have the server read the
    /// body as chunks. Refused, and nothing is sent.
    @Test func anAdaptersTransferEncodingOnAnUploadIsRefused() async throws {
        let transport = RecordingTransport()
        let chunking = ClosureAdapter { request in
            var request = request
            request.setValue("chunked", forHTTPHeaderField: "Transfer-Encoding")
            return request
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(adapters: [chunking]))
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        let result = await connect.upload(files: [file], to: connector(), options: Self.options).asyncResult
        #expect(invalidRequestReason(of: result) == .reservedHeader(name: "Transfer-Encoding"))
        #expect(transport.requests.isEmpty)
    }

    /// A policy that turns an upload's hop into a GET, starting from the upload's own request: the
    /// body stays behind, so its `Content-Length` must not go on (the server would wait for it).
    @Test func aFollowWithOfAnotherMethodMayNotKeepTheUploadsContentLength() async throws {
        let transport = RecordingTransport { request in
            request.url?.path == "/v1/users/7/files"
                ? MiddlewareFixtures.redirect("/done", status: 303) : PipelineFixtures.json("{}")
        }
        let connect = makeConfiguredConnect(transport: transport) { configuration in
            configuration.redirectPolicy = .decide { redirect in
                var next = redirect.response.request
                next.url = redirect.proposedRequest.url
                next.httpMethod = "GET"
                next.httpBody = nil
                return .followWith(next)
            }
        }
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        let result = await connect.upload(files: [file], to: connector(), options: Self.options).asyncResult
        #expect(invalidRequestReason(of: result) == .reservedHeader(name: "Content-Length"))
        #expect(transport.requests.count == 1)
    }

    @Test func uploadRequestBuildsWithoutSending() throws {
        let connect = makeConnect(transport: RecordingTransport())
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        let (request, body) = try connect.uploadRequest(files: [file], to: connector(), options: Self.options)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == "\(body.contentLength)")
        #expect(body.contentType == "multipart/form-data; boundary=XyZ")
        #expect(Int64(try body.data().count) == body.contentLength)
        #expect(body.framing == .contentLength)
    }

    // MARK: Bad input fails before anything is sent

    @Test func missingFileFailsBeforeSending() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
        let reason = await rejection(files: [File(key: "f", fileURL: missing)])
        #expect(reason == .fileNotFound(missing))
    }

    @Test func directoryFailsBeforeSending() async throws {
        let directory = try TemporaryDirectory()
        let reason = await rejection(files: [File(key: "f", fileURL: directory.url)])
        #expect(reason == .fileNotReadable(directory.url))
    }

    @Test func emptyKeyFailsBeforeSending() async {
        let reason = await rejection(files: [File(name: "a", key: "", mimeType: .txt, data: Data())])
        #expect(reason == .invalidPartName(""))
    }

    @Test func streamDeclaringMoreBytesThanABodyCanHoldFailsBeforeSending() async {
        let huge = File(name: "huge.bin", key: "f", mimeType: .binary, length: .max) { InputStream(data: Data()) }
        let reason = await rejection(files: [huge])
        #expect(reason == .bodyTooLarge("huge.bin"))
    }

    @Test func getCannotUpload() async {
        let reason = await rejection(files: [], connector: connector(method: .get))
        #expect(reason == .bodyNotAllowed(method: "GET"))
    }

    /// URLSession sends a lowercase `get` or `head` as `GET` or `HEAD`, so the upload is refused as
    /// that, as `request(_:)` refuses a body on it: one error to compare against, whichever sends.
    @Test(arguments: [("get", "GET"), ("head", "HEAD"), ("Get", "GET")])
    func aLowercaseGetOrHeadIsRefusedAsTheMethodSent(written: String, sent: String) async {
        let reason = await rejection(files: [], connector: connector(method: HTTPMethod(rawValue: written)))
        #expect(reason == .bodyNotAllowed(method: sent))
    }

    @Test func rawDataParameterIsASecondBody() async {
        let parameters = CompositeParameters(.path(key: "id", value: "7"), .data(Data(), contentType: "x/y"))
        let reason = await rejection(files: [], connector: connector(parameters: parameters))
        #expect(reason == .multipleBodies)
    }

    @Test func jsonArrayParameterCannotBecomeFields() async {
        let parameters = CompositeParameters(.path(key: "id", value: "7"), .jsonObject(value: [1, 2]))
        let reason = await rejection(files: [], connector: connector(parameters: parameters))
        #expect(reason == .encodingFailed(underlying: FormFields.NotAnObject()))
    }

    /// Uploads and returns the invalid-request reason; records an issue if anything was sent.
    func rejection(
        files: [File], connector: TestConnector? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> InvalidRequestReason? {
        let transport = RecordingTransport()
        let connect = makeConnect(transport: transport)
        let task = connect.uploadTask(files: files, to: connector ?? self.connector())
        var progress: [UploadProgress] = []
        for await value in task.progress { progress.append(value) }
        let result = await task.response.asyncResult
        #expect(transport.requests.isEmpty, "nothing may be sent", sourceLocation: sourceLocation)
        #expect(progress.isEmpty, sourceLocation: sourceLocation)
        guard case .failure(ConnectError.invalidRequest(let reason)) = result else {
            Issue.record("expected invalidRequest, got \(result)", sourceLocation: sourceLocation)
            return nil
        }
        return reason
    }

    // MARK: Progress

    @Test func progressCallbackEndsAtTheTotalBeforeTheFutureCompletes() async throws {
        let events = PipelineFixtures.Recorder<String>()
        let connect = makeConnect(transport: RecordingTransport())
        let file = File(name: "a.bin", key: "f", mimeType: .binary, data: Data(count: 10_000))
        let values = PipelineFixtures.Recorder<UploadProgress>()
        let future = connect.upload(files: [file], to: connector()) { progress in
            values.append(progress)
            events.append("progress \(progress.bytesSent)/\(progress.totalBytes)")
        }
        let result = await PipelineFixtures.observeOnce(future.map { _ in events.append("completed") })
        #expect(PipelineFixtures.value(of: result.result) != nil)
        let last = try #require(values.values.last)
        #expect(last.isComplete && last.fractionCompleted == 1)
        #expect(last.totalBytes > 10_000)
        #expect(events.values.last == "completed")
        #expect(events.values.dropLast().last == "progress \(last.totalBytes)/\(last.totalBytes)")
    }

    @Test func awaitingTheUploadReturnsOnlyAfterTheLastProgressCallback() async throws {
        // Given a callback queue held still, so progress callbacks cannot run yet
        let callbacks = DispatchQueue(label: "test.upload.held-callbacks")
        let connect = PipelineFixtures.connect(transport: RecordingTransport()) { $0.callbackQueue = callbacks }
        let file = File(name: "a.bin", key: "f", mimeType: .binary, data: Data(count: 10_000))
        let values = PipelineFixtures.Recorder<UploadProgress>()
        let returned = Counter()
        callbacks.suspend()
        // When the upload is awaited
        let waiter = Task {
            let body = try await connect.upload(files: [file], to: connector()) { values.append($0) }.value
            returned.increment()
            return body
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        // Then the await has not returned while the last progress is undelivered
        #expect(returned.value == 0)
        callbacks.resume()
        _ = try await waiter.value
        #expect(values.values.last?.isComplete == true)
    }

    @Test func progressSequenceEndsAtTheTotalAndFinishes() async throws {
        let connect = makeConnect(transport: RecordingTransport())
        let file = File(name: "a.bin", key: "f", mimeType: .binary, data: Data(count: 1000))
        let task = connect.uploadTask(files: [file], to: connector())
        var values: [UploadProgress] = []
        for await progress in task.progress { values.append(progress) }
        _ = try await task.response.value
        let last = try #require(values.last)
        #expect(last.bytesSent == last.totalBytes)
    }

    @Test func failedUploadFinishesTheProgressSequence() async {
        let connect = makeConnect(
            transport: RecordingTransport { _ in StubTransport.Reply(statusCode: 500, body: Data("{}".utf8)) })
        let task = connect.uploadTask(files: nil, to: connector())
        for await _ in task.progress {}
        let result = await task.response.asyncResult
        #expect((PipelineFixtures.error(of: result) as? ConnectError)?.statusCode == 500)
    }

    /// An upload whose connection failed reports no total it never sent: the transport reported
    /// no progress, and none is made up at the end.
    @Test func anUploadWhoseConnectionFailedReportsNoTotal() async {
        let connect = makeConnect(transport: RecordingTransport { _ in throw URLError(.networkConnectionLost) })
        let task = connect.uploadTask(files: nil, to: connector())
        var values: [UploadProgress] = []
        for await progress in task.progress { values.append(progress) }
        let result = await task.response.asyncResult
        guard case .transport(let underlying)? = PipelineFixtures.error(of: result) as? ConnectError else {
            Issue.record("expected a transport error, got \(result)")
            return
        }
        #expect(URLError.code(of: underlying) == .networkConnectionLost)
        #expect(values.isEmpty, "\(values)")
    }

    // MARK: Redirects, retries, cancellation

    @Test func temporaryRedirectSendsTheBodyAgain() async throws {
        let transport = RecordingTransport { request in
            if request.url?.path == "/v1/users/7/files" {
                return StubTransport.Reply(statusCode: 307, headers: ["Location": "/v2/files"])
            }
            return StubTransport.Reply(statusCode: 201)
        }
        let connect = makeConnect(transport: transport)
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        _ = try await connect.upload(files: [file], to: connector(), options: Self.options).value
        let requests = transport.requests
        #expect(requests.count == 2)
        #expect(requests.last?.url?.path == "/v2/files")
        #expect(requests.last?.httpMethod == "POST")
        #expect(requests.last?.httpBody == requests.first?.httpBody)
        #expect(text(try #require(requests.last)).contains("filename=\"a.txt\""))
    }

    @Test func seeOtherRedirectDropsTheBody() async throws {
        let transport = RecordingTransport { request in
            if request.httpMethod == "POST" {
                return StubTransport.Reply(statusCode: 303, headers: ["Location": "/v1/result"])
            }
            return StubTransport.Reply(statusCode: 200)
        }
        let connect = makeConnect(transport: transport)
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        _ = try await connect.upload(files: [file], to: connector()).value
        let last = try #require(transport.requests.last)
        #expect(transport.requests.count == 2)
        #expect(last.httpMethod == "GET")
        #expect(last.httpBody == nil)
        #expect(last.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(last.value(forHTTPHeaderField: "Content-Length") == nil)
    }

    @Test func retrySendsTheWholeBodyAgain() async throws {
        struct RetryOnce: RequestRetrier {
            func retry(_ attempt: FailedAttempt) async -> RetryResult { attempt.number < 2 ? .retry : .doNotRetry }
        }
        let attempts = PipelineFixtures.Counter()
        let transport = RecordingTransport { _ in
            attempts.increment() == 1 ? StubTransport.Reply(statusCode: 503) : StubTransport.Reply(statusCode: 200)
        }
        let connect = makeConnect(transport: transport, middleware: ConnectMiddleware(retriers: [RetryOnce()]))
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        _ = try await connect.upload(files: [file], to: connector(), options: Self.options).value
        #expect(transport.requests.count == 2)
        #expect(transport.requests[0].httpBody == transport.requests[1].httpBody)
    }

    @Test func cancellingFailsWithCancelledAndFinishesProgress() async throws {
        let arrived = PipelineFixtures.Gate()
        let never = PipelineFixtures.Gate()
        let connect = makeConnect(
            transport: RecordingTransport { _ in
                arrived.arrive()
                try await never.wait()
                return StubTransport.Reply()
            })
        let task = connect.uploadTask(files: nil, to: connector())
        try await arrived.wait()
        task.cancel()
        for await _ in task.progress {}
        let result = await task.response.asyncResult
        #expect((PipelineFixtures.error(of: result) as? ConnectError)?.isCancellation == true)
    }

    // MARK: Debug output

    @Test func debugOutputNamesThePartsButNeverFieldValues() async throws {
        let logger = CapturingLogger()
        let connect = makeConnect(transport: RecordingTransport(), logger: logger)
        let parameters = CompositeParameters(.path(key: "id", value: "7"), .form(key: "password", value: "hunter2"))
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("one".utf8))
        _ = try await connect.upload(files: [file], to: connector(parameters: parameters), debugResponse: true).value
        let output = logger.messages.joined(separator: "\n")
        #expect(output.contains("multipart/form-data upload"))
        #expect(output.contains("field \"password\""))
        #expect(output.contains("\"a.txt\""))
        #expect(!output.contains("hunter2"))
        // Usage.md: the command itself carries no body.
        // No Content-Length either: curl would wait, replaying it, for bytes that never come.
        #expect(output.contains("curl -v") && !output.contains("-d ") && !output.contains("--data-binary"))
        #expect(!output.lowercased().contains("-h \"content-length"))
    }
}
