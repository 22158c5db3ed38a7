import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// Unwraps `.unacceptableStatus`, recording an issue for anything else.
private func unacceptable(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation)
    -> (response: Response, message: String?)?
{
    guard case .unacceptableStatus(let response, let message)? = error as? ConnectError else {
        Issue.record(
            "expected ConnectError.unacceptableStatus, got \(String(describing: error))", sourceLocation: sourceLocation
        )
        return nil
    }
    return (response, message)
}

@Suite("ErrorHandler: the default handler")
struct DefaultErrorHandlerTests {
    let handler = ErrorHandler()

    @Test(
        "the message is read from msg, message, messge, error, err in that priority",
        arguments: [
            (#"{"msg":"from msg","message":"from message","error":"from error","err":"from err"}"#, "from msg"),
            (#"{"message":"from message","messge":"from messge","error":"from error"}"#, "from message"),
            (#"{"messge":"from messge","error":"from error","err":"from err"}"#, "from messge"),
            (#"{"error":"from error","err":"from err"}"#, "from error"),
            (#"{"err":"from err","detail":"ignored"}"#, "from err"),
            (#"{"err":"from err","msg":"from msg"}"#, "from msg"),
        ])
    func messageKeysAreReadInPriorityOrder(body: String, expected: String) throws {
        let error = handler.handle(Fixtures.response(status: 400, body: body))
        let failure = try #require(unacceptable(error))
        #expect(failure.message == expected)
    }

    /// RFC 9457 problem details: the `detail`, or the `title` when there is none.
    @Test(arguments: [
        (#"{"type":"about:blank","title":"Not Found","status":404,"detail":"No todo 7"}"#, "No todo 7"),
        (#"{"type":"about:blank","title":"Not Found","status":404}"#, "Not Found"),
    ])
    func problemDetailsGiveTheirDetailOrTitle(body: String, expected: String) throws {
        let response = Fixtures.response(
            status: 404, body: body, headers: ["Content-Type": "application/problem+json; charset=utf-8"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == expected)
    }

    /// OAuth 2.0's error (RFC 6749 §5.2): the code and its description.
    @Test func anOAuthErrorGivesItsCodeAndDescription() throws {
        let body = #"{"error":"invalid_token","error_description":"The access token expired"}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 401, body: body))))
        #expect(failure.message == "invalid_token: The access token expired")
    }

    /// The keys read before `detail` keep their place.
    @Test(arguments: [
        (#"{"message":"from message","detail":"from detail","title":"T"}"#, "from message"),
        (#"{"err":"from err","detail":"from detail"}"#, "from err"),
        (#"{"msg":"from msg","error":"invalid_token","error_description":"expired"}"#, "from msg"),
    ])
    func detailComesAfterTheOtherMessageKeys(body: String, expected: String) throws {
        let response = Fixtures.response(status: 400, body: body, headers: ["Content-Type": "application/problem+json"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == expected)
    }

    @Test func nestedErrorObjectMessageIsRead() throws {
        let body = #"{"error":{"code":"E42","message":"Quota exceeded"}}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 429, body: body))))
        #expect(failure.message == "Quota exceeded")
    }

    @Test func keyWithoutTextFallsThroughToTheNextKey() throws {
        let body = #"{"error":{"code":"E42"},"err":"fallback text"}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 400, body: body))))
        #expect(failure.message == "fallback text")
    }

    /// A blank message says nothing: the next key is read, and with none left there is no message
    /// (`nil`, not `""`).
    @Test(arguments: [
        (#"{"msg":"","message":"the real one"}"#, "the real one"),
        (#"{"msg":"  ","error":{"msg":"","message":"nested"}}"#, "nested"),
        (#"{"message":["", "only this"]}"#, "only this"),
        (#"{"msg":""}"#, nil),
    ])
    func blankMessagesArePassedOver(body: String, expected: String?) throws {
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 400, body: body))))
        #expect(failure.message == expected)
    }

    @Test func arrayOfStringsBecomesOneMessageWithEveryString() throws {
        let body = #"{"message":["name is required","email is invalid"]}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 422, body: body))))
        let message = try #require(failure.message)
        #expect(message.contains("name is required"))
        #expect(message.contains("email is invalid"))
    }

    @Test func arrayOfErrorObjectsGivesTheirMessages() throws {
        let body = #"{"error":[{"message":"first"},{"msg":"second"}]}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 422, body: body))))
        let message = try #require(failure.message)
        #expect(message.contains("first"))
        #expect(message.contains("second"))
    }

    /// A body that is an array (Salesforce answers `[{"message": "…", "errorCode": "…"}]`): its
    /// objects are read as a body that is an object is, nested messages included, and its strings
    /// are messages; blank ones and objects without a message are passed over.
    @Test(arguments: [
        (#"[{"message":"Session expired","errorCode":"INVALID_SESSION_ID"}]"#, "Session expired"),
        (#"[{"message":"first"},{"code":"none"},{"error":{"msg":"nested"}}]"#, "first; nested"),
        (#"["name is required", " ", "email is invalid"]"#, "name is required; email is invalid"),
        (#"[{"code":"none"}, 7, null]"#, nil),
        ("[]", nil),
    ])
    func bodyThatIsAnArrayGivesTheMessagesOfItsObjectsAndStrings(body: String, expected: String?) throws {
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 400, body: body))))
        #expect(failure.message == expected)
        #expect(failure.response.data == Data(body.utf8))
    }

    @Test func jsonObjectWithoutAnyMessageKeyHasNoMessageButKeepsStatusAndBody() throws {
        let body = #"{"code":"E500","title":"not a problem+json body"}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 500, body: body))))
        #expect(failure.message == nil)
        #expect(failure.response.statusCode == 500)
        #expect(failure.response.data == Data(body.utf8))
    }

    @Test func unacceptableStatusCarriesStatusCodeHeadersAndBody() throws {
        let body = #"{"message":"Not found"}"#
        let response = Fixtures.response(
            status: 404, body: body, headers: ["Content-Type": "application/json", "X-Request-Id": "abc-123"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.response.statusCode == 404)
        #expect(failure.response.headers["x-request-id"] == "abc-123")
        #expect(failure.response.data == Data(body.utf8))
        #expect(failure.message == "Not found")
    }

    @Test func htmlBodyGivesUnacceptableStatusWithStatusAndBody() throws {
        let html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
        let response = Fixtures.response(status: 502, body: html, headers: ["Content-Type": "text/html"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.response.statusCode == 502)
        #expect(failure.response.data == Data(html.utf8))
        #expect(failure.message == nil)
    }

    @Test func emptyBodyGivesUnacceptableStatusWithStatus() throws {
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 503, body: ""))))
        #expect(failure.response.statusCode == 503)
        #expect(failure.response.data.isEmpty)
        #expect(failure.message == nil)
    }

    @Test func jsonArrayBodyGivesUnacceptableStatusWithStatusAndBody() throws {
        let body = #"["bad", "request"]"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 400, body: body))))
        #expect(failure.response.statusCode == 400)
        #expect(failure.response.data == Data(body.utf8))
    }

    @Test func shortPlainTextBodyBecomesTheMessage() throws {
        let response = Fixtures.response(
            status: 403, body: "  Forbidden: no access to this project\n",
            headers: ["Content-Type": "text/plain; charset=utf-8"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == "Forbidden: no access to this project")
    }

    /// A plain-text body in the charset its `Content-Type` names (ISO-8859-1 from an older server)
    /// is read in that charset: decoded as UTF-8, it was no text at all, and the message was lost.
    @Test(arguments: ["iso-8859-1", "ISO-8859-1", "\"latin1\"", "windows-1252"])
    func plainTextInTheCharsetItsContentTypeNamesBecomesTheMessage(charset: String) throws {
        let url = try #require(URL(string: "http://example.test/items"))
        let http = try #require(
            HTTPURLResponse(
                url: url, statusCode: 403, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "text/plain; charset=\(charset)"]))
        let body = Data("Accès refusé".unicodeScalars.map { UInt8($0.value) })  // one byte a letter
        let response = Response(request: URLRequest(url: url), httpResponse: http, data: body)
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == "Accès refusé")
    }

    /// How a test writes a text in UTF-16 or UTF-32, byte by byte (`String.data(using:)` resolves
    /// to an overload newer than the package's Apple deployment targets here).
    enum WideText: Sendable {
        case utf16LittleEndianWithMark, utf16LittleEndian, utf16BigEndian
        case utf32LittleEndianWithMark, utf32LittleEndian, utf32BigEndian

        func bytes(of text: String) -> Data {
            func littleEndian<T: FixedWidthInteger>(_ unit: T) -> [UInt8] {
                (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: unit >> ($0 * 8)) }
            }
            let utf16 = Array(text.utf16)
            let utf32 = text.unicodeScalars.map(\.value)
            switch self {
            case .utf16LittleEndianWithMark: return Data([0xFF, 0xFE] + utf16.flatMap(littleEndian))
            case .utf16LittleEndian: return Data(utf16.flatMap(littleEndian))
            case .utf16BigEndian: return Data(utf16.flatMap { littleEndian($0).reversed() })
            case .utf32LittleEndianWithMark: return Data([0xFF, 0xFE, 0, 0] + utf32.flatMap(littleEndian))
            case .utf32LittleEndian: return Data(utf32.flatMap(littleEndian))
            case .utf32BigEndian: return Data(utf32.flatMap { littleEndian($0).reversed() })
            }
        }
    }

    /// A UTF-16 or UTF-32 body (a Windows server's) is read in the charset named, with or without
    /// a byte order mark; `utf-16` without one is big-endian (RFC 2781).
    @Test(arguments: [
        ("utf-16", WideText.utf16LittleEndianWithMark), ("UTF-16LE", .utf16LittleEndian),
        ("utf-16be", .utf16BigEndian), ("utf-16", .utf16BigEndian), ("utf-32", .utf32LittleEndianWithMark),
        ("utf-32le", .utf32LittleEndian), ("utf-32be", .utf32BigEndian),
    ])
    func plainTextInUTF16OrUTF32BecomesTheMessage(charset: String, text: WideText) throws {
        let url = try #require(URL(string: "http://example.test/items"))
        let http = try #require(
            HTTPURLResponse(
                url: url, statusCode: 403, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "text/plain; charset=\(charset)"]))
        let body = text.bytes(of: "Zugriff verweigert – ß 🔒")
        let response = Response(request: URLRequest(url: url), httpResponse: http, data: body)
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == "Zugriff verweigert – ß 🔒")
    }

    @Test func longPlainTextBodyIsNotUsedAsTheMessage() throws {
        let text = String(repeating: "x", count: 4096)
        let response = Fixtures.response(status: 500, body: text, headers: ["Content-Type": "text/plain"])
        let failure = try #require(unacceptable(handler.handle(response)))
        #expect(failure.message == nil)
        #expect(failure.response.data.count == 4096)
    }

    /// "Up to 1 KiB" (Usage.md), exactly: 1,024 bytes are the message, 1,025 are not.
    @Test func plainTextUpToOneKibibyteIsTheMessage() throws {
        let limit = String(repeating: "a", count: 1024)
        let atLimit = Fixtures.response(status: 500, body: limit, headers: ["Content-Type": "text/plain"])
        #expect(try #require(unacceptable(handler.handle(atLimit))).message == limit)
        let over = Fixtures.response(status: 500, body: limit + "a", headers: ["Content-Type": "text/plain"])
        #expect(try #require(unacceptable(handler.handle(over))).message == nil)
    }

    @Test func customMessageKeysAreReadInTheirOrder() throws {
        let handler = ErrorHandler(messageKeys: ["detail", "title"])
        let body = #"{"title":"Bad Request","detail":"page must be positive","message":"ignored"}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 400, body: body))))
        #expect(failure.message == "page must be positive")
    }

    /// Usage.md's example for a list of errors.
    @Test func aListOfErrorObjectsIsReadThroughTheKeysNamed() throws {
        let handler = ErrorHandler(messageKeys: ["errors", "message"])
        let body = #"{"errors":[{"message":"name is required"},{"message":"email is invalid"}]}"#
        let failure = try #require(unacceptable(handler.handle(Fixtures.response(status: 422, body: body))))
        #expect(failure.message == "name is required; email is invalid")
    }

    @Test func handleResponseDictionaryReturnsTheServersMessage() throws {
        let error = try #require(handler.handle(response: ["msg": "Token expired"]) as? ErrorMessage)
        #expect(error.message == "Token expired")
        #expect(error.description == "Token expired")
    }

    /// Apps show `error.localizedDescription`; for an error that is not a `LocalizedError` that
    /// is "The operation could not be completed. (SwiftConnect.ErrorMessage error 1.)".
    @Test func anErrorMessagesLocalizedDescriptionIsTheServersMessage() {
        let error: any Error = ErrorMessage(message: "Token expired")
        #expect(error.localizedDescription == "Token expired")
    }

    @Test func handleResponseDictionaryWithoutMessageStillReturnsAnError() {
        #expect(handler.handle(response: ["unrelated": 1]) != nil)
    }
}

// MARK: - Custom handlers

/// A handler as the usage document shows it: only `handle(response:)`.
private struct CodeErrorHandler: ErrorHandlerProtocol {
    func handle(response: [String: Any]) -> Error? {
        guard let code = response["code"] as? String else { return nil }
        return PipelineFixtures.TestError(code: code)
    }
}

/// A handler that also wants the status code.
private struct StatusErrorHandler: ErrorHandlerProtocol {
    let seen: PipelineFixtures.Recorder<Int>

    func handle(response: [String: Any]) -> Error? {
        PipelineFixtures.TestError(code: "without status")
    }

    func handle(response: [String: Any], statusCode: Int) -> Error? {
        seen.append(statusCode)
        return PipelineFixtures.TestError(code: "status \(statusCode)")
    }
}

/// A handler that counts how often it is asked.
private struct CountingErrorHandler: ErrorHandlerProtocol {
    let calls: PipelineFixtures.Counter

    func handle(response: [String: Any]) -> Error? {
        calls.increment()
        return PipelineFixtures.TestError(code: "counted")
    }
}

@Suite("ErrorHandler: in the Connect pipeline")
struct ErrorHandlerPipelineTests {
    private func connect(status: Int, body: String, handler: any ErrorHandlerProtocol = ErrorHandler()) -> Connect {
        makeConnect(transport: StubTransport { _ in Fixtures.json(body, status: status) }, errorHandler: handler)
    }

    @Test(arguments: [199, 300, 304, 400, 401, 404, 418, 500, 503])
    func statusOutsideTheSuccessRangeGoesToTheErrorHandler(status: Int) async throws {
        let connect = connect(status: status, body: #"{"message":"nope"}"#)
        let result = await connect.request(TestConnector()).asyncResult
        let failure = try #require(unacceptable(Fixtures.error(of: result)))
        #expect(failure.response.statusCode == status)
        #expect(failure.message == "nope")
    }

    @Test(arguments: [200, 201, 204, 299])
    func statusInTheSuccessRangeSucceedsWithoutTheErrorHandler(status: Int) async throws {
        let calls = Fixtures.Counter()
        let connect = connect(status: status, body: #"{"code":"E1"}"#, handler: CountingErrorHandler(calls: calls))
        let data = try await connect.request(TestConnector()).value
        #expect(data == Data(#"{"code":"E1"}"#.utf8))
        #expect(calls.value == 0)
    }

    @Test func connectorsAcceptableStatusCodesWidenTheSuccessRange() async throws {
        let connect = connect(status: 304, body: #"{"cached":true}"#)
        let connector = TestConnector(acceptableStatusCodes: 200..<400)
        let data = try await connect.request(connector).value
        #expect(data == Data(#"{"cached":true}"#.utf8))
    }

    @Test func connectorsAcceptableStatusCodesNarrowTheSuccessRange() async throws {
        let connect = connect(status: 202, body: #"{"msg":"still processing"}"#)
        let connector = TestConnector(acceptableStatusCodes: 200..<202)
        let result = await connect.request(connector).asyncResult
        let failure = try #require(unacceptable(Fixtures.error(of: result)))
        #expect(failure.response.statusCode == 202)
        #expect(failure.message == "still processing")
    }

    @Test func customHandlersErrorReachesTheObserverUnchanged() async throws {
        let connect = connect(status: 409, body: #"{"code":"DUPLICATE"}"#, handler: CodeErrorHandler())
        let (result, calls) = await Fixtures.observeOnce(connect.request(TestConnector()))
        #expect(calls == 1)
        let error = try #require(Fixtures.error(of: result) as? PipelineFixtures.TestError)
        #expect(error == PipelineFixtures.TestError(code: "DUPLICATE"))
    }

    @Test func customHandlerReturningNilTurnsTheErrorResponseIntoSuccessWithTheBody() async throws {
        let body = #"{"items":[],"note":"legacy API answers 404 for an empty list"}"#
        let connect = connect(status: 404, body: body, handler: CodeErrorHandler())
        let data = try await connect.request(TestConnector()).value
        #expect(data == Data(body.utf8))
    }

    @Test func customHandlerReturningNilLetsTheBodyDecode() async throws {
        let connect = connect(status: 404, body: #"{"id":7,"title":"kept"}"#, handler: CodeErrorHandler())
        let todo = try await connect.request(TestConnector()).decoded(toType: PipelineFixtures.Todo.self).value
        #expect(todo == PipelineFixtures.Todo(id: 7, title: "kept"))
    }

    @Test func customHandlerReturningNilGivesTheResponseWithItsStatus() async throws {
        let connect = connect(status: 404, body: #"{}"#, handler: CodeErrorHandler())
        let response = try await connect.response(TestConnector()).value
        #expect(response.statusCode == 404)
    }

    @Test func statusCodeVariantReceivesTheStatus() async throws {
        let seen = PipelineFixtures.Recorder<Int>()
        let connect = connect(status: 422, body: #"{"field":"name"}"#, handler: StatusErrorHandler(seen: seen))
        let result = await connect.request(TestConnector()).asyncResult
        #expect(
            Fixtures.error(of: result) as? PipelineFixtures.TestError == PipelineFixtures.TestError(code: "status 422"))
        #expect(seen.values == [422])
    }

    /// The usage document: for any unacceptable status "the ErrorHandler kicks in and calls
    /// handle(response:)", and you decide the error. An empty, HTML or array body gives `[:]`.
    @Test(arguments: [
        (502, "text/html", "<h1>oops</h1>"), (404, "application/json", ""), (400, "application/json", "[1,2]"),
        (500, "text/plain", "down"),
    ])
    func customHandlerDecidesForEveryUnacceptableStatusWhateverTheBody(
        status: Int, contentType: String, body: String
    ) async throws {
        let seen = PipelineFixtures.Recorder<Int>()
        let transport = StubTransport { _ in
            StubTransport.Reply(statusCode: status, headers: ["Content-Type": contentType], body: Data(body.utf8))
        }
        let connect = makeConnect(transport: transport, errorHandler: StatusErrorHandler(seen: seen))
        let result = await connect.request(TestConnector()).asyncResult
        #expect(
            Fixtures.error(of: result) as? PipelineFixtures.TestError
                == PipelineFixtures.TestError(code: "status \(status)"))
        #expect(seen.values == [status])
    }

    /// `nil` accepts the response, whatever its body: "you may even return nil".
    @Test func customHandlerReturningNilAcceptsAnEmptyErrorBody() async throws {
        struct Accepting: ErrorHandlerProtocol {
            let seen: PipelineFixtures.Recorder<Int>
            func handle(response: [String: Any]) -> Error? {
                seen.append(response.count)
                return nil
            }
        }
        let seen = PipelineFixtures.Recorder<Int>()
        let transport = StubTransport { _ in StubTransport.Reply(statusCode: 404, headers: [:], body: Data()) }
        let data = try await makeConnect(transport: transport, errorHandler: Accepting(seen: seen))
            .request(TestConnector()).value
        #expect(data.isEmpty)
        #expect(seen.values == [0])
    }

    @Test func defaultHandlerNonJSONBodyThroughConnectKeepsStatusAndBody() async throws {
        let transport = StubTransport { _ in
            StubTransport.Reply(statusCode: 500, headers: ["Content-Type": "text/html"], body: Data("<p>err</p>".utf8))
        }
        let result = await makeConnect(transport: transport).request(TestConnector()).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        #expect(error.statusCode == 500)
        #expect(error.responseBody == Data("<p>err</p>".utf8))
    }
}
