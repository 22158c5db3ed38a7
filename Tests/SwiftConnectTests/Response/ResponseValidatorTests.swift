import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// The envelope every reply of an imagined service has.
private struct Envelope: Decodable, Sendable {
    let status: String
}

private struct EnvelopeNotOK: Error, Equatable {
    let status: String
}

/// The `MissingJSONKeys` a validator threw on `body`, or `nil` if it passed.
private func missingKeys(_ keys: [String], in body: String) -> [String]? {
    do {
        try ResponseValidator.requiredJSONKeys(keys).validate(Fixtures.response(status: 200, body: body))
        return nil
    } catch let error as MissingJSONKeys {
        return error.keys
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// The response and underlying error of a `.validationFailed`, or `nil` for any other result.
private func validationFailure<Value>(_ result: Result<Value, any Error>) -> (
    response: Response, underlying: any Error
)? {
    guard case .validationFailed(let response, let underlying)? = Fixtures.error(of: result) as? ConnectError else {
        return nil
    }
    return (response, underlying)
}

/// The error `.contentType(acceptable)` threw for a response with `contentType` (none when
/// `nil`) and `body`, or `nil` if it passed.
private func contentTypeError(
    _ acceptable: [String], for contentType: String?, body: String = "{}"
) -> UnacceptableContentType? {
    let headers = contentType.map { ["Content-Type": $0] } ?? [:]
    do {
        try ResponseValidator.contentType(acceptable).validate(
            Fixtures.response(status: 200, body: body, headers: headers))
        return nil
    } catch let error as UnacceptableContentType {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

// MARK: - Unit

@Suite("ResponseValidator")
struct ResponseValidatorTests {
    /// Apps show `error.localizedDescription`, which said only "The operation could not be
    /// completed. (SwiftConnect.MissingJSONKeys error 1.)".
    @Test func missingJSONKeysLocalizedDescriptionNamesTheKeys() {
        let validator = ResponseValidator.requiredJSONKeys(["status", "data.id"])
        #expect {
            try validator.validate(Fixtures.response(status: 200, body: "{}"))
        } throws: { error in
            error.localizedDescription == "Missing JSON keys: status, data.id"
        }
    }

    @Test(arguments: [
        ("application/json", ["application/json"]),
        ("application/json; charset=utf-8", ["application/json"]),
        ("Application/JSON", ["application/json"]),
        ("application/json", ["APPLICATION/Json"]),
        ("  text/plain ;format=flowed", ["text/plain; charset=utf-8"]),
        ("text/csv", ["application/json", "text/csv"]),
        ("application/xml", ["application/*"]),
        ("image/png", ["*/*"]),
        ("application/problem+json", ["application/*+json"]),
        ("application/vnd.api+json; charset=utf-8", ["application/*+json"]),
        ("application/vnd.api+json", ["*/*+json"]),
    ])
    func contentTypeAccepts(received: String, acceptable: [String]) {
        #expect(contentTypeError(acceptable, for: received) == nil)
    }

    @Test(arguments: [
        ("application/xml", ["application/json"]),
        ("text/json", ["application/json"]),
        ("application/jsonp", ["application/json"]),
        ("application/problem+json", ["application/json"]),
        ("application/json", ["application/*+json"]),
        ("application/+json", ["application/*+json"]),
        ("application/json+xml", ["application/*+json"]),
        ("text/html", ["application/*"]),
        ("json", ["application/json"]),
        ("application/", ["application/*"]),
        ("/json", ["*/json"]),
        ("", ["application/json"]),
        ("application/json", ["json"]),
        ("application/json", ["application"]),
        ("application/json", []),
    ])
    func contentTypeRejects(received: String, acceptable: [String]) {
        #expect(
            contentTypeError(acceptable, for: received)
                == UnacceptableContentType(
                    acceptable: acceptable, received: received))
    }

    @Test func contentTypeMissingPassesOnlyAnything() {
        #expect(
            contentTypeError(["application/json"], for: nil)
                == UnacceptableContentType(
                    acceptable: ["application/json"], received: nil))
        #expect(contentTypeError(["application/*", "*/*"], for: nil) == nil)
        #expect(contentTypeError(["*/*"], for: "not a media type") == nil)
    }

    @Test func contentTypeLetsAResponseWithoutABodyThrough() {
        // A `204`, the answer to a `HEAD`: nothing to describe, whatever the header says.
        #expect(contentTypeError(["application/json"], for: nil, body: "") == nil)
        #expect(contentTypeError(["application/json"], for: "text/html", body: "") == nil)
    }

    @Test func unacceptableContentTypeSaysWhatCameAndWhatWasExpected() {
        let error = UnacceptableContentType(acceptable: ["application/json", "text/csv"], received: "text/html")
        #expect(
            error.localizedDescription
                == "Unacceptable content type: Content-Type text/html, expected application/json or text/csv")
        #expect(
            UnacceptableContentType(acceptable: ["a/b"], received: nil).description
                == "Unacceptable content type: no Content-Type, expected a/b")
    }

    @Test func dataValidatorReceivesTheBody() throws {
        let seen = Fixtures.Recorder<Data>()
        try ResponseValidator.data { seen.append($0) }.validate(Fixtures.response(status: 200, body: #"{"a":1}"#))
        #expect(seen.values == [Data(#"{"a":1}"#.utf8)])
    }

    @Test func dataValidatorThrowsItsError() throws {
        let validator = ResponseValidator.data { data in
            if data.isEmpty { throw Fixtures.TestError(code: "empty") }
        }
        #expect(throws: Fixtures.TestError(code: "empty")) {
            try validator.validate(Fixtures.response(status: 200, body: ""))
        }
        try validator.validate(Fixtures.response(status: 200, body: "x"))
    }

    @Test func requiredJSONKeysPassesWhenEveryKeyAndKeyPathIsPresent() {
        #expect(missingKeys(["a", "data.id"], in: #"{"a":1,"data":{"id":7,"x":0}}"#) == nil)
    }

    @Test func requiredJSONKeysNamesEachMissingKeyInOrder() {
        #expect(missingKeys(["a", "data.id"], in: #"{"data":{}}"#) == ["a", "data.id"])
        #expect(missingKeys(["a", "data.id"], in: #"{"a":"here","data":{"name":"x"}}"#) == ["data.id"])
        #expect(missingKeys(["a", "data.id", "b"], in: #"{"data":{"id":1}}"#) == ["a", "b"])
    }

    /// As documented: a key whose value is `null` is there; a path that walks through `null` is not.
    @Test func aKeyWhoseValueIsNullIsPresent() {
        #expect(missingKeys(["data.id", "data"], in: #"{"data":{"id":null}}"#) == nil)
        #expect(missingKeys(["data.id"], in: #"{"data":null}"#) == ["data.id"])
    }

    @Test func requiredJSONKeyPathThroughANonObjectIsMissing() {
        #expect(missingKeys(["data.id"], in: #"{"data":[{"id":1}]}"#) == ["data.id"])
        #expect(missingKeys(["data.id"], in: #"{"data":"id"}"#) == ["data.id"])
    }

    /// A number indexes an array, as in `decoded(toType:keyPath:)`.
    @Test func requiredJSONKeyPathIndexesAnArrayByNumber() {
        let body = #"{"items":[{"id":1},{"name":"x"}]}"#
        #expect(missingKeys(["items.0.id", "items.1.name", "items.0"], in: body) == nil)
        let absent = ["items.1.id", "items.2", "items.-1", "items.x"]
        #expect(missingKeys(absent, in: body) == absent)
    }

    /// Every component is a key, empty ones too: `a..b` is not `a.b`, and `""` is not "any body".
    @Test func anEmptyComponentIsAKeyOfItsOwnNotSkipped() {
        let body = #"{"a":{"b":1}}"#
        let absent = ["a..b", "", "a.", ".a"]
        #expect(missingKeys(absent, in: body) == absent)
        #expect(missingKeys(["a..b", ""], in: #"{"a":{"":{"b":1}},"":0}"#) == nil)
    }

    /// A top-level key with dots in its name is found as it is; otherwise dots separate.
    @Test func aTopLevelKeyWithDotsInItsNameIsFound() {
        #expect(missingKeys(["user.name"], in: #"{"user.name":"ada"}"#) == nil)
        #expect(missingKeys(["user.name"], in: #"{"user":{"name":"ada"}}"#) == nil)
        #expect(missingKeys(["user.name"], in: #"{"user":{}}"#) == ["user.name"])
    }

    @Test func requiredJSONKeysOnABodyThatIsNotAJSONObjectAreAllMissing() {
        #expect(missingKeys(["a", "data.id"], in: "not json") == ["a", "data.id"])
        #expect(missingKeys(["a"], in: "[1,2]") == ["a"])
        #expect(missingKeys(["a"], in: "") == ["a"])
    }

    @Test func missingJSONKeysDescriptionNamesTheKeys() {
        let validator = ResponseValidator.requiredJSONKeys(["a", "data.id"])
        #expect {
            try validator.validate(Fixtures.response(status: 200, body: "{}"))
        } throws: { error in
            "\(error)" == "Missing JSON keys: a, data.id"
        }
    }

    @Test func basicResponseDecodesAndPassesTheValueToValidate() throws {
        let seen = Fixtures.Recorder<String>()
        let validator = ResponseValidator.basicResponse(Envelope.self) { seen.append($0.status) }
        try validator.validate(Fixtures.response(status: 200, body: #"{"status":"ok","data":1}"#))
        #expect(seen.values == ["ok"])
    }

    @Test func basicResponseThrowsADecodingErrorForABodyWithoutTheEnvelope() {
        let validator = ResponseValidator.basicResponse(Envelope.self)
        do {
            try validator.validate(Fixtures.response(status: 200, body: #"{"data":1}"#))
            Issue.record("expected a decoding error")
        } catch {
            guard case .decoding(let failure)? = error as? ConnectError else {
                Issue.record("expected ConnectError.decoding, got \(error)")
                return
            }
            #expect(failure.type.contains("Envelope"))
        }
    }

    /// An empty body (a `204`, a `HEAD`) fails with advice for a validator: the decoder's own
    /// (`Empty`, `decodedIfPresent`) is for a call, and does not help here.
    @Test func basicResponseOnAnEmptyBodySaysHowToExemptAConnector() {
        let validator = ResponseValidator.basicResponse(Envelope.self)
        for body in ["", " \n"] {
            do {
                try validator.validate(Fixtures.response(status: 204, body: body))
                Issue.record("expected a decoding error")
            } catch {
                guard case .decoding(let failure)? = error as? ConnectError else {
                    Issue.record("expected ConnectError.decoding, got \(error)")
                    continue
                }
                #expect(failure.type.contains("Envelope"))
                #expect(failure.reason.contains("validators: []"))
                #expect(!failure.reason.contains("decodedIfPresent"))
                #expect(failure.response?.statusCode == 204)
            }
        }
    }
}

// MARK: - Through Connect

@Suite("ResponseValidator: through Connect", timeLimit(minutes: 1))
struct ResponseValidatorPipelineTests {
    private func connect(
        _ transport: RecordingTransport, validators: [ResponseValidator],
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        errorHandler: any ErrorHandlerProtocol = ErrorHandler()
    ) -> Connect {
        Middleware.connect(transport: transport, middleware: middleware, errorHandler: errorHandler) {
            $0.validators = validators
        }
    }

    @Test func missingRequiredKeysFailTheRequestWithValidationFailedNamingThem() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"data":{"name":"x"}}"#) }
        let result = await connect(transport, validators: [.requiredJSONKeys(["a", "data.id"])])
            .request(Middleware.Call()).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        #expect((failure.underlying as? MissingJSONKeys)?.keys == ["a", "data.id"])
        #expect(failure.response.statusCode == 200)
        #expect(failure.response.data == Data(#"{"data":{"name":"x"}}"#.utf8))
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        #expect(error.underlyingError is MissingJSONKeys)
        #expect(error.statusCode == 200)
    }

    @Test func presentRequiredKeysLetTheResponseThrough() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"a":1,"data":{"id":2}}"#) }
        let data = try await connect(transport, validators: [.requiredJSONKeys(["a", "data.id"])])
            .request(Middleware.Call()).value
        #expect(data == Data(#"{"a":1,"data":{"id":2}}"#.utf8))
    }

    @Test func anUnacceptableContentTypeFailsTheRequestWithValidationFailed() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("<html></html>", headers: ["Content-Type": "text/html"])
        }
        let result = await connect(transport, validators: [.contentType(["application/json"])])
            .request(Middleware.Call()).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        #expect(
            failure.underlying as? UnacceptableContentType
                == UnacceptableContentType(
                    acceptable: ["application/json"], received: "text/html"))
        let accepted = try await connect(transport, validators: [.contentType(["text/html"])])
            .request(Middleware.Call()).value
        #expect(accepted == Data("<html></html>".utf8))
    }

    @Test func dataValidatorErrorIsWrappedInValidationFailed() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("[]") }
        let validator = ResponseValidator.data { data in
            if data == Data("[]".utf8) { throw Fixtures.TestError(code: "empty list") }
        }
        let result = await connect(transport, validators: [validator]).request(Middleware.Call()).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        #expect(failure.underlying as? Fixtures.TestError == Fixtures.TestError(code: "empty list"))
    }

    /// Like `decoded(toType:)`, `.basicResponse` decodes with the configuration's decoder unless
    /// it was given its own.
    @Test func basicResponseDecodesWithTheConfigurationsDecoderUnlessGivenOne() async throws {
        struct Envelope: Decodable, Sendable {
            let requestStatus: String
        }
        let transport = RecordingTransport { _ in Fixtures.json(#"{"request_status":"ok"}"#) }
        let seen = Fixtures.Recorder<String>()
        let snakeCase = Middleware.connect(transport: transport) {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.validators = [.basicResponse(Envelope.self) { seen.append($0.requestStatus) }]
        }
        _ = try await snakeCase.request(Middleware.Call()).value
        #expect(seen.values == ["ok"])

        let ownDecoder = Middleware.connect(transport: transport) {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.validators = [.basicResponse(Envelope.self, decoder: JSONDecoder())]
        }
        let result = await ownDecoder.request(Middleware.Call()).asyncResult
        #expect(validationFailure(result) != nil, "got \(result)")
    }

    @Test func basicResponseValidateClosureCanRejectASuccess() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"status":"maintenance","data":null}"#) }
        let validator = ResponseValidator.basicResponse(Envelope.self) { envelope in
            guard envelope.status == "ok" else { throw EnvelopeNotOK(status: envelope.status) }
        }
        let result = await connect(transport, validators: [validator]).request(Middleware.Call()).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        #expect(failure.underlying as? EnvelopeNotOK == EnvelopeNotOK(status: "maintenance"))
    }

    @Test func basicResponseThatDoesNotDecodeFailsValidation() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"id":1}"#) }
        let result = await connect(transport, validators: [.basicResponse(Envelope.self)])
            .request(Middleware.Call()).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        guard case .decoding? = failure.underlying as? ConnectError else {
            Issue.record("expected an underlying decoding error, got \(failure.underlying)")
            return
        }
    }

    @Test func basicResponseAcceptsAMatchingEnvelopeAndTheBodyDecodesAsUsual() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"status":"ok","data":{"id":3,"title":"t"}}"#) }
        let validator = ResponseValidator.basicResponse(Envelope.self) { envelope in
            guard envelope.status == "ok" else { throw EnvelopeNotOK(status: envelope.status) }
        }
        let todo = try await connect(transport, validators: [validator]).request(Middleware.Call())
            .decoded(toType: Fixtures.Todo.self, keyPath: "data").value
        #expect(todo == Fixtures.Todo(id: 3, title: "t"))
    }

    @Test func configurationValidatorsRunOnEverySuccessInOrder() async throws {
        let transport = RecordingTransport()
        let log = Fixtures.Recorder<String>()
        let first = ResponseValidator { log.append("first \($0.request.url?.path ?? "")") }
        let second = ResponseValidator { log.append("second \($0.request.url?.path ?? "")") }
        let connect = connect(transport, validators: [first, second])
        for path in ["/a", "/b", "/c"] {
            _ = try await connect.request(Middleware.Call(endpoint: path)).value
        }
        #expect(log.values == ["first /a", "second /a", "first /b", "second /b", "first /c", "second /c"])
    }

    @Test func laterValidatorsDoNotRunAfterOneFails() async throws {
        let transport = RecordingTransport()
        let ran = Fixtures.Counter()
        let failing = ResponseValidator { _ in throw Fixtures.TestError(code: "first") }
        let second = ResponseValidator { _ in ran.increment() }
        let result = await connect(transport, validators: [failing, second]).request(Middleware.Call()).asyncResult
        #expect(validationFailure(result)?.underlying as? Fixtures.TestError == Fixtures.TestError(code: "first"))
        #expect(ran.value == 0)
    }

    @Test func validatorsDoNotRunOnErrorResponses() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"boom"}"#, status: 500) }
        let ran = Fixtures.Counter()
        let result = await connect(transport, validators: [ResponseValidator { _ in ran.increment() }])
            .request(Middleware.Call()).asyncResult
        guard case .unacceptableStatus(_, let message)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(result)")
            return
        }
        #expect(message == "boom")
        #expect(ran.value == 0)
    }

    @Test func connectorWithEmptyValidatorsOptsOut() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"unrelated":true}"#) }
        let connect = connect(transport, validators: [.requiredJSONKeys(["a"])])
        let data = try await connect.request(Middleware.Call(validators: [])).value
        #expect(data == Data(#"{"unrelated":true}"#.utf8))
        let inherited = await connect.request(Middleware.Call()).asyncResult
        #expect((validationFailure(inherited)?.underlying as? MissingJSONKeys)?.keys == ["a"])
    }

    @Test func connectorValidatorsReplaceTheConfigurations() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"b":1}"#) }
        let configurationRan = Fixtures.Counter()
        let connect = connect(transport, validators: [ResponseValidator { _ in configurationRan.increment() }])
        let result = await connect.request(Middleware.Call(validators: [.requiredJSONKeys(["a", "b"])])).asyncResult
        #expect((validationFailure(result)?.underlying as? MissingJSONKeys)?.keys == ["a"])
        #expect(configurationRan.value == 0)
    }

    @Test func validationFailureIsNotRetriedByTheRetryPolicy() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        let result = await connect(
            transport, validators: [.requiredJSONKeys(["a"])],
            middleware: ConnectMiddleware(retriers: [RetryPolicy(jitter: 0)])
        ).request(Middleware.Call()).asyncResult
        #expect(validationFailure(result) != nil)
        #expect(transport.requests.count == 1)
    }

    @Test func connectorsAcceptableStatusCodesDecideWhatIsASuccess() async throws {
        let created = RecordingTransport { _ in Fixtures.json(#"{"id":1}"#, status: 201) }
        let onlyOK = await connect(created, validators: [])
            .request(Middleware.Call(acceptableStatusCodes: 200..<201)).asyncResult
        #expect((Fixtures.error(of: onlyOK) as? ConnectError)?.statusCode == 201)

        let notFound = RecordingTransport { _ in Fixtures.json(#"{"message":"none"}"#, status: 404) }
        let response = try await connect(notFound, validators: [])
            .response(Middleware.Call(acceptableStatusCodes: 200..<500)).value
        #expect(response.statusCode == 404)
    }

    @Test func validatorsRunOnAResponseAcceptedThroughTheConnectorsStatusRange() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"none"}"#, status: 404) }
        let result = await connect(transport, validators: [.requiredJSONKeys(["id"])])
            .request(Middleware.Call(acceptableStatusCodes: 200..<500)).asyncResult
        let failure = try #require(validationFailure(result), "got \(result)")
        #expect(failure.response.statusCode == 404)
    }

    @Test func validatorsRunOnAResponseTheErrorHandlerAccepts() async throws {
        struct Accepting: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { nil }
        }
        let transport = RecordingTransport { _ in Fixtures.json(#"{"status":"partial"}"#, status: 500) }
        let result = await connect(transport, validators: [.requiredJSONKeys(["id"])], errorHandler: Accepting())
            .request(Middleware.Call()).asyncResult
        #expect((validationFailure(result)?.underlying as? MissingJSONKeys)?.keys == ["id"])
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension ResponseValidatorTests {
    private struct Status: Decodable, Sendable {
        let status: String
    }

    /// Only an empty body gets the validator's advice: a body that is there but does not decode
    /// keeps the decoder's own reason, coding path and underlying error.
    @Test func basicResponseKeepsTheDecodersReasonForABodyThatIsThere() throws {
        let error = #expect(throws: ConnectError.self) {
            try ResponseValidator.basicResponse(Status.self).validate(
                PipelineFixtures.response(status: 200, body: #"{"status":1}"#))
        }
        let failure = try #require(decodingFailure(error))
        #expect(failure.codingPath == "status")
        #expect(failure.underlyingError != nil)
        #expect(!failure.reason.contains("validators: []"))
    }
}
