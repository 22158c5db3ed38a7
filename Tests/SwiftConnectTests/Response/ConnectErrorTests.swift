import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

@Suite("ConnectError: descriptions and accessors")
struct ConnectErrorTests {
    private let notFound = Fixtures.response(
        status: 404, body: #"{"message":"Todo 7 does not exist"}"#, method: "DELETE", url: "http://example.test/todos/7"
    )

    // MARK: Descriptions

    @Test func unacceptableStatusDescriptionHasStatusMethodURLAndMessage() {
        let error = ConnectError.unacceptableStatus(notFound, message: "Todo 7 does not exist")
        #expect(error.description.contains("404"))
        #expect(error.description.contains("Todo 7 does not exist"))
        #expect(error.description.contains("DELETE http://example.test/todos/7"))
    }

    /// Errors get printed and logged: a URL in a description has its password and secret-looking
    /// query values redacted, as in debug output, and keeps the rest.
    @Test func descriptionsRedactCredentialsInURLs() {
        let url = "https://user:hunter2@h.test/bad?api_key=QSECRET&page=2"
        let response = Fixtures.response(status: 500, headers: ["Location": url], method: "GET", url: url)
        let descriptions = [
            ConnectError.unacceptableStatus(response, message: nil).description,
            ConnectError.tooManyRedirects(response).description,
            ConnectError.invalidRequest(.invalidBaseURL(url)).description,
            ConnectError.invalidRequest(.invalidURL(url)).description,
        ]
        for description in descriptions {
            #expect(!description.contains("hunter2"), "\(description)")
            #expect(!description.contains("QSECRET"), "\(description)")
            #expect(description.contains("h.test/bad?api_key=<redacted>&page=2"), "\(description)")
        }
    }

    /// An endpoint may carry a key in its own query (`/geo?appid=…&q={city}`), and a file URL
    /// that is not a `file://` URL may carry a password: the reasons that name them redact them as
    /// the reasons that name a base URL do.
    @Test func invalidRequestReasonsRedactCredentialsInEndpointsAndFileURLs() throws {
        let url = try #require(URL(string: "https://user:hunter2@h.test/f?api_key=QSECRET&page=2"))
        let descriptions = [
            ConnectError.invalidRequest(
                .malformedEndpoint("/geo?api_key=QSECRET&q={city", detail: "unclosed slot {city")
            ).description,
            ConnectError.invalidRequest(.fileNotFound(url)).description,
            ConnectError.invalidRequest(.fileNotReadable(url)).description,
        ]
        for description in descriptions {
            #expect(!description.contains("hunter2"), "\(description)")
            #expect(!description.contains("QSECRET"), "\(description)")
            #expect(description.contains("api_key=<redacted>"), "\(description)")
        }
    }

    /// The description is documented as one line, and logs take it as one: the server's message,
    /// which the server chooses, cannot break it (nor start a forged log line).
    @Test func unacceptableStatusDescriptionIsOneLineWhateverTheServersMessage() throws {
        let response = Fixtures.response(
            status: 500, body: "Internal error\r\n[INFO] all good\nretry later\u{2028}thanks",
            headers: ["Content-Type": "text/plain"])
        let error = try #require(ErrorHandler().handle(response) as? ConnectError)
        #expect(error.description.split(whereSeparator: \.isNewline).count == 1, "\(error.description)")
        #expect(error.description.hasSuffix(": Internal error [INFO] all good retry later thanks"))
        guard case .unacceptableStatus(_, let message) = error else { return }
        #expect(message == "Internal error\r\n[INFO] all good\nretry later\u{2028}thanks", "the message is kept")
    }

    @Test func unacceptableStatusWithoutMessageStillNamesTheStatus() {
        let error = ConnectError.unacceptableStatus(notFound, message: nil)
        #expect(error.description.contains("404"))
        #expect(!error.description.hasSuffix(": "))
    }

    @Test func invalidRequestDescriptionHasTheReason() {
        let error = ConnectError.invalidRequest(.missingPathValue(slot: "id"))
        #expect(error.description.contains("{id}"))
        #expect(error.description.contains("nothing was sent"))
    }

    @Test(arguments: [
        InvalidRequestReason.invalidBaseURL("ftp://x"),
        .malformedEndpoint("/a/{", detail: "unclosed {"),
        .missingPathValue(slot: "user"),
        .unusedPathParameter(key: "extra"),
        .duplicatePathParameter(key: "dup"),
        .emptyPathValue(key: "blank"),
        .bodyNotAllowed(method: "GET"),
        .invalidMethod("BAD METHOD"),
        .invalidHeader(name: "X-Bad"),
        .invalidURL("http://[::1"),
    ])
    func invalidRequestReasonDescriptionNamesTheCulprit(reason: InvalidRequestReason) {
        let culprit: String
        switch reason {
        case .invalidBaseURL(let url): culprit = url
        case .malformedEndpoint(let endpoint, _): culprit = endpoint
        case .missingPathValue(let slot): culprit = slot
        case .unusedPathParameter(let key), .duplicatePathParameter(let key), .emptyPathValue(let key): culprit = key
        case .bodyNotAllowed(let method), .invalidMethod(let method): culprit = method
        case .invalidHeader(let name): culprit = name
        case .invalidURL(let url): culprit = url
        case .multipleBodies, .encodingFailed: culprit = ""
        default: culprit = ""  // upload reasons are covered by the multipart tests
        }
        #expect(reason.description.contains(culprit))
        #expect(ConnectError.invalidRequest(reason).description.contains(reason.description))
    }

    @Test func transportDescriptionHasTheUnderlyingErrorsDescription() {
        let urlError = URLError(.cannotConnectToHost, userInfo: [NSLocalizedDescriptionKey: "Connection refused"])
        let error = ConnectError.transport(underlying: urlError)
        #expect(error.description == "Transport error: Connection refused")
    }

    /// FoundationNetworking's timeout has no description of its own: "The operation could not be
    /// completed. (NSURLErrorDomain error -1001.)" does not say it timed out.
    @Test func aURLErrorWithoutADescriptionIsDescribedByItsCodeAndURL() throws {
        let url = try #require(URL(string: "http://api.test/slow?token=abc"))
        let timedOut = ConnectError.transport(
            underlying: URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        #expect(timedOut.description.hasPrefix("Transport error: The request timed out (NSURLErrorDomain error -1001)"))
        #expect(timedOut.description.contains("http://api.test/slow"))
        #expect(!timedOut.description.contains("abc"), "the URL is redacted")
        #expect(timedOut.localizedDescription == timedOut.description)
        #expect(
            ConnectError.transport(underlying: URLError(.cannotFindHost)).description
                == "Transport error: The server's host name could not be found (NSURLErrorDomain error -1003)")
    }

    /// A `StubTransport` closure, or a transport of your own, throwing an error of its own that is
    /// no `LocalizedError`: its `localizedDescription` is "The operation could not be completed.
    /// (….Offline error 1.)", which says nothing of what happened.
    @Test func aTransportErrorOfYourOwnIsDescribedByItsDescription() async throws {
        struct Offline: Error, CustomStringConvertible {
            var description: String { "the device is offline" }
        }
        let connect = makeConnect(transport: StubTransport { _ in throw Offline() })
        let error = try #require(Fixtures.error(of: await connect.request(TestConnector()).asyncResult))
        #expect("\(error)" == "Transport error: the device is offline")
        #expect(error.localizedDescription == "Transport error: the device is offline")
    }

    /// An error of your own with no description is shown as Swift prints it, not as "The
    /// operation could not be completed".
    @Test func aTransportErrorOfYourOwnWithoutADescriptionIsShownAsSwiftPrintsIt() async throws {
        struct Offline: Error {}
        let connect = makeConnect(transport: StubTransport { _ in throw Offline() })
        let error = try #require(Fixtures.error(of: await connect.request(TestConnector()).asyncResult))
        #expect(error.localizedDescription == "Transport error: Offline()")
    }

    /// Foundation's errors keep their localized description: their `description` lists their
    /// `userInfo`, the failing URL unredacted.
    @Test func aFoundationErrorIsDescribedByItsLocalizedDescription() {
        let error = NSError(
            domain: "Test", code: 7,
            userInfo: [NSLocalizedDescriptionKey: "The disk is full", "url": "https://u:hunter2@h.test/"])
        #expect(ConnectError.transport(underlying: error).description == "Transport error: The disk is full")
    }

    @Test func decodingDescriptionIsTheFailuresDescription() {
        let failure = DecodingFailure(
            type: "Todo", keyPath: "data.item", reason: "key 'title' not found", underlyingError: nil,
            response: notFound)
        let error = ConnectError.decoding(failure)
        #expect(error.description == failure.description)
        #expect(failure.description.contains("Todo"))
        #expect(failure.description.contains("data.item"))
        #expect(failure.description.contains("key 'title' not found"))
        #expect(failure.description.contains("404"))
    }

    @Test func cancelledInvalidResponseAndAbandonedHaveDistinctDescriptions() {
        let descriptions = [ConnectError.cancelled, .invalidResponse, .abandoned].map(\.description)
        #expect(descriptions[0].contains("cancelled"))
        #expect(Set(descriptions).count == 3)
        #expect(descriptions.allSatisfy { !$0.isEmpty })
    }

    @Test func tooManyRedirectsDescriptionNamesTheLastLocationAndKeepsTheResponse() {
        let redirect = Fixtures.response(status: 302, headers: ["Location": "https://loop.test/again"])
        let error = ConnectError.tooManyRedirects(redirect)
        #expect(error.description.contains("redirect"))
        #expect(error.description.contains("https://loop.test/again"))
        #expect(error.statusCode == 302)
        #expect(error.response?.headers["location"] == "https://loop.test/again")
        #expect(!error.isCancellation)
    }

    @Test func localizedDescriptionIsTheReadableDescription() {
        let error: any Error = ConnectError.unacceptableStatus(notFound, message: "gone")
        #expect((error as? ConnectError)?.errorDescription == (error as? ConnectError)?.description)
        #expect(error.localizedDescription.contains("404"))
        #expect(error.localizedDescription.contains("gone"))
    }

    // MARK: Accessors

    @Test func isCancellationIsTrueOnlyForCancelled() {
        #expect(ConnectError.cancelled.isCancellation)
        let others: [ConnectError] = [
            .transport(underlying: URLError(.cancelled)), .unacceptableStatus(notFound, message: nil), .invalidResponse,
            .abandoned, .invalidRequest(.multipleBodies),
        ]
        for error in others {
            #expect(!error.isCancellation, "\(error)")
        }
    }

    @Test func aCancelledNSErrorOfTheURLErrorDomainIsACancellation() {
        #expect(ConnectError.isCancellation(NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)))
        #expect(ConnectError.isCancellation(URLError(.cancelled)))
        #expect(!ConnectError.isCancellation(NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut)))
        #expect(!ConnectError.isCancellation(NSError(domain: "Other", code: NSURLErrorCancelled)))
    }

    @Test func statusCodeAndBodyComeFromUnacceptableStatus() {
        let error = ConnectError.unacceptableStatus(notFound, message: nil)
        #expect(error.statusCode == 404)
        #expect(error.responseBody == Data(#"{"message":"Todo 7 does not exist"}"#.utf8))
        #expect(error.response?.url == URL(string: "http://example.test/todos/7"))
    }

    @Test func statusCodeAndBodyComeFromADecodingFailureWithAResponse() {
        let response = Fixtures.response(status: 200, body: "[]")
        let error = ConnectError.decoding(
            DecodingFailure(type: "Todo", keyPath: nil, reason: "r", underlyingError: nil, response: response))
        #expect(error.statusCode == 200)
        #expect(error.responseBody == Data("[]".utf8))
    }

    @Test func errorsWithoutAResponseHaveNoStatusOrBody() {
        let errors: [ConnectError] = [
            .transport(underlying: URLError(.timedOut)), .cancelled, .invalidResponse, .abandoned,
            .invalidRequest(.multipleBodies),
            .decoding(DecodingFailure(type: "T", keyPath: nil, reason: "r", underlyingError: nil, response: nil)),
        ]
        for error in errors {
            #expect(error.statusCode == nil, "\(error)")
            #expect(error.responseBody == nil, "\(error)")
        }
    }

    @Test func underlyingErrorKeepsTheTransportsURLError() throws {
        let error = ConnectError.transport(underlying: URLError(.cannotConnectToHost))
        let underlying = try #require(error.underlyingError as? URLError)
        #expect(underlying.code == .cannotConnectToHost)
    }

    @Test func underlyingErrorKeepsTheDecodersError() {
        let decodingError = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "bad"))
        let error = ConnectError.decoding(
            DecodingFailure(type: "T", keyPath: nil, reason: "r", underlyingError: decodingError, response: nil))
        #expect(error.underlyingError is DecodingError)
    }

    @Test func underlyingErrorKeepsTheEncodingError() {
        let encodingError = EncodingError.invalidValue(Double.nan, .init(codingPath: [], debugDescription: "NaN"))
        let error = ConnectError.invalidRequest(.encodingFailed(underlying: encodingError))
        #expect(error.underlyingError is EncodingError)
    }

    @Test func errorsWithoutACauseHaveNoUnderlyingError() {
        let errors: [ConnectError] = [
            .cancelled, .invalidResponse, .abandoned, .invalidRequest(.multipleBodies),
            .unacceptableStatus(notFound, message: "m"),
        ]
        for error in errors {
            #expect(error.underlyingError == nil, "\(error)")
        }
    }

    @Test func invalidRequestReasonsCompareByCaseAndValues() {
        #expect(InvalidRequestReason.missingPathValue(slot: "a") == .missingPathValue(slot: "a"))
        #expect(InvalidRequestReason.missingPathValue(slot: "a") != .missingPathValue(slot: "b"))
        #expect(InvalidRequestReason.missingPathValue(slot: "a") != .emptyPathValue(key: "a"))
        #expect(
            InvalidRequestReason.encodingFailed(underlying: URLError(.unknown))
                == .encodingFailed(underlying: CancellationError()))
    }

    /// Descriptions redact URLs: reasons that differ only in a password or a secret query value
    /// describe alike, but are not equal.
    @Test func reasonsThatDifferOnlyWhereTheDescriptionRedactsAreNotEqual() throws {
        let one = "https://user:one@h.test/x?token=1"
        let two = "https://user:two@h.test/x?token=2"
        #expect(InvalidRequestReason.invalidBaseURL(one) != .invalidBaseURL(two))
        #expect(InvalidRequestReason.invalidURL(one) != .invalidURL(two))
        #expect(InvalidRequestReason.unsupportedURL(one) != .unsupportedURL(two))
        #expect(
            InvalidRequestReason.malformedEndpoint("/x?token=1&q={q", detail: "unclosed slot {q")
                != .malformedEndpoint("/x?token=2&q={q", detail: "unclosed slot {q"))
        let (oneURL, twoURL) = (try #require(URL(string: one)), try #require(URL(string: two)))
        #expect(InvalidRequestReason.fileNotFound(oneURL) != .fileNotFound(twoURL))
        #expect(InvalidRequestReason.fileNotReadable(oneURL) != .fileNotReadable(twoURL))
        #expect(InvalidRequestReason.invalidBaseURL(one) == .invalidBaseURL(one))
        #expect(InvalidRequestReason.fileNotFound(oneURL) == .fileNotFound(oneURL))
        #expect(InvalidRequestReason.invalidBaseURL(one) != .invalidURL(one))
    }

    // MARK: Equality

    @Test func errorsCompareByCaseAndValues() {
        #expect(ConnectError.cancelled == .cancelled)
        #expect(ConnectError.cancelled != .abandoned)
        #expect(ConnectError.invalidResponse == .invalidResponse)
        #expect(
            ConnectError.invalidRequest(.missingPathValue(slot: "id")) == .invalidRequest(.missingPathValue(slot: "id"))
        )
        #expect(
            ConnectError.invalidRequest(.missingPathValue(slot: "id")) != .invalidRequest(.missingPathValue(slot: "x")))
        #expect(
            ConnectError.unacceptableStatus(notFound, message: "gone") == .unacceptableStatus(notFound, message: "gone")
        )
        #expect(
            ConnectError.unacceptableStatus(notFound, message: "gone") != .unacceptableStatus(notFound, message: nil))
        let sameAgain = Fixtures.response(
            status: 404, body: #"{"message":"Todo 7 does not exist"}"#, method: "DELETE",
            url: "http://example.test/todos/7"
        )
        #expect(ConnectError.tooManyRedirects(notFound) == .tooManyRedirects(sameAgain), "a response equal in value")
        let otherStatus = Fixtures.response(status: 410, body: #"{"message":"Todo 7 does not exist"}"#)
        let otherBody = Fixtures.response(status: 404, body: "{}", url: "http://example.test/todos/7")
        let otherURL = Fixtures.response(
            status: 404, body: #"{"message":"Todo 7 does not exist"}"#, url: "http://example.test/todos/8")
        for other in [otherStatus, otherBody, otherURL] {
            #expect(ConnectError.tooManyRedirects(notFound) != .tooManyRedirects(other))
        }
        #expect(ConnectError.tooManyRedirects(notFound) != .unacceptableStatus(notFound, message: nil))
    }

    /// Foundation's errors carry where they happened (the failing URL) in `userInfo`; what they
    /// are is their domain and code.
    @Test func aTransportErrorMatchesFoundationErrorsByDomainAndCode() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/todos"))
        let timedOut = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: url])
        #expect(ConnectError.transport(underlying: timedOut) == .transport(underlying: URLError(.timedOut)))
        #expect(ConnectError.transport(underlying: timedOut) != .transport(underlying: URLError(.cannotConnectToHost)))
        #expect(
            ConnectError.transport(underlying: POSIXError(.ECONNRESET))
                == .transport(underlying: POSIXError(.ECONNRESET)))
        #expect(
            ConnectError.transport(underlying: POSIXError(.ECONNRESET))
                != .transport(underlying: POSIXError(.ECONNREFUSED)))
        #expect(ConnectError.transport(underlying: timedOut) != .transport(underlying: POSIXError(.ETIMEDOUT)))
        // As FoundationNetworking reports a timeout: an NSError of the domain.
        let reported = NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut)
        #expect(ConnectError.transport(underlying: reported) == .transport(underlying: URLError(.timedOut)))
        #expect(ConnectError.transport(underlying: URLError(.timedOut)) == .transport(underlying: reported))
        #expect(ConnectError.transport(underlying: reported) != .transport(underlying: URLError(.cancelled)))
        // The same code in another domain is another error.
        let elsewhere = NSError(domain: "com.example.sync", code: NSURLErrorTimedOut)
        #expect(ConnectError.transport(underlying: elsewhere) != .transport(underlying: URLError(.timedOut)))
        #expect(
            ConnectError.transport(underlying: reported).description
                == ConnectError.transport(underlying: URLError(.timedOut)).description,
            "described by what its code means, as the URLError is")
    }

    @Test func wrappedErrorsOfYourOwnCompareByEqualityOrDescription() {
        struct Described: Error { let detail: String }
        #expect(
            ConnectError.transport(underlying: TestFailure.offline) == .transport(underlying: TestFailure.offline))
        #expect(ConnectError.transport(underlying: TestFailure.offline) != .transport(underlying: TestFailure.busy))
        #expect(
            ConnectError.transport(underlying: Described(detail: "a")) == .transport(underlying: Described(detail: "a"))
        )
        #expect(
            ConnectError.transport(underlying: Described(detail: "a")) != .transport(underlying: Described(detail: "b"))
        )
        #expect(
            ConnectError.transport(underlying: TestFailure.offline) != .transport(underlying: Described(detail: "a")))
        let response = Fixtures.response(status: 200)
        #expect(
            ConnectError.validationFailed(response, underlying: TestFailure.busy)
                == .validationFailed(response, underlying: TestFailure.busy))
        #expect(
            ConnectError.validationFailed(response, underlying: TestFailure.busy)
                != .validationFailed(response, underlying: TestFailure.offline))
    }

    @Test func decodingFailuresAndFilesCompareByTheirValues() {
        func failure(_ codingPath: String?, _ response: Response? = nil) -> ConnectError {
            .decoding(
                DecodingFailure(
                    type: "Todo", keyPath: "data", codingPath: codingPath, reason: "r", underlyingError: nil,
                    response: response))
        }
        #expect(failure("data.title") == failure("data.title"))
        #expect(failure("data.title") != failure("data.id"))
        #expect(failure("data.title", notFound) != failure("data.title"))
        let file = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("x".utf8))
        #expect(ConnectError.uploadSourceChanged(file, detail: "d") == .uploadSourceChanged(file, detail: "d"))
        #expect(ConnectError.uploadSourceChanged(file, detail: "d") != .uploadSourceChanged(file, detail: "e"))
        let other = File(name: "a.txt", key: "doc", mimeType: .txt, data: Data("y".utf8))
        #expect(ConnectError.uploadSourceChanged(file, detail: "d") != .uploadSourceChanged(other, detail: "d"))
        func stream(length: UInt64) -> File {
            File(name: "s.bin", key: "doc", mimeType: .binary, length: length) { InputStream(data: Data()) }
        }
        #expect(
            ConnectError.uploadSourceChanged(stream(length: 1), detail: "d")
                != .uploadSourceChanged(stream(length: 2), detail: "d"))
    }

    /// What a test of yours can write: the error a future fails with, expected by value.
    @Test func anErrorCanBeExpectedByValue() async {
        let connect = makeConnect(transport: RecordingTransport())
        let unfilled = TestConnector(endpoint: "/todos/{id}")
        await #expect(throws: ConnectError.invalidRequest(.missingPathValue(slot: "id"))) {
            try await connect.request(unfilled).value
        }
        let slow = makeConnect(
            transport: RecordingTransport { _ in
                try await Task.sleep(nanoseconds: 30_000_000_000)
                return StubTransport.Reply(statusCode: 200, body: Data())
            })
        let future = slow.request(TestConnector(endpoint: "/todos"))
        future.cancel()
        await #expect(throws: ConnectError.cancelled) { try await future.value }
    }

    private enum TestFailure: Error, Equatable {
        case offline, busy
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension ConnectErrorTests {
    /// Two malformed-endpoint reasons are equal only if they name the same endpoint and say the
    /// same about it.
    @Test func malformedEndpointReasonsWithDifferentDetailsDiffer() {
        let unclosed = InvalidRequestReason.malformedEndpoint("/users/{id", detail: "a slot is not closed")
        #expect(unclosed == .malformedEndpoint("/users/{id", detail: "a slot is not closed"))
        #expect(unclosed != .malformedEndpoint("/users/{id", detail: "a slot name is empty"))
        #expect(unclosed != .malformedEndpoint("/users/{ids", detail: "a slot is not closed"))
    }
}

@Suite("ConnectError: user values in descriptions")
struct ConnectErrorEscapingTests {
    /// A control character in a value the description quotes is escaped: the line stays whole.
    @Test(arguments: [
        (InvalidRequestReason.invalidMimeType("image/png\nX: y"), #"'image/png\nX: y'"#),
        (.invalidHeader(name: "X-A\r\nX-B"), #"'X-A\r\nX-B'"#),
        (.invalidMethod("GET\n"), #"'GET\n'"#),
        (.invalidPartName("a\u{0}b\t"), #"'a\0b\t'"#),
        (.invalidBoundary("b\u{1B}\u{7F}"), #"'b\u{1B}\u{7F}'"#),
        (.missingPathValue(slot: "id\n"), #"{id\n}"#),
        // Line breaks to other readers: NEL and the other C1 controls, U+2028 and U+2029.
        (.invalidHeader(name: "X\u{85}Y\u{2028}Z\u{2029}\u{9B}"), #"'X\u{85}Y\u{2028}Z\u{2029}\u{9B}'"#),
        // URLs and paths, which the user wrote or a server sent.
        (.invalidBaseURL("https://api.example.com/v1\nX"), #"'https://api.example.com/v1\nX'"#),
        (.malformedEndpoint("/users/{id\n", detail: "a slot is not closed"), #"'/users/{id\n'"#),
        (.unsupportedURL("ftp://h/\r\nX"), #"'ftp://h/\r\nX'"#),
        (.fileNotFound(URL(fileURLWithPath: "/tmp/a\nb.png")), #"/tmp/a\nb.png"#),
    ])
    func controlCharactersInQuotedValuesAreEscaped(reason: InvalidRequestReason, shown: String) {
        let text = ConnectError.invalidRequest(reason).description
        #expect(!text.contains { $0.isNewline }, "\(text.debugDescription)")
        #expect(
            !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "\(text.debugDescription)")
        #expect(text.contains(shown), "\(text.debugDescription)")
    }

    /// Escaping keeps reasons that differ apart: a backslash is escaped too.
    @Test func reasonsThatDifferStayUnequal() {
        #expect(InvalidRequestReason.invalidHeader(name: "a\nb") != .invalidHeader(name: #"a\nb"#))
    }
}
