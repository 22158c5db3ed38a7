import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// A connector's own `jsonEncoder` and `jsonDecoder` serve its calls in place of the configuration's.
@Suite("Connector: its own JSON encoder and decoder")
struct ConnectorCodersTests {
    static let snakeEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    static let snakeDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    struct Payload: Encodable, Sendable {
        let firstName: String
    }

    struct Reply: Decodable, Sendable, Equatable {
        let firstName: String
    }

    struct Envelope: Decodable, Sendable {
        let requestId: String
    }

    struct Failure: Decodable, Error, Equatable {
        let errorCode: String
    }

    struct Call: Connector {
        var method: HTTPMethod = .post
        var ownDecoder = true
        var ownEncoder = false
        var validators: [ResponseValidator]? = nil
        var baseURL: URL { URL(string: "https://api.test")! }
        var endpoint: String { "/people" }
        var parameters: ParametersRepresentable? { Parameter.jsonObject(value: Payload(firstName: "Ada")) }
        var jsonEncoder: JSONEncoder? { ownEncoder ? ConnectorCodersTests.snakeEncoder : nil }
        var jsonDecoder: JSONDecoder? { ownDecoder ? ConnectorCodersTests.snakeDecoder : nil }
    }

    /// A parameters type of the caller's own, encoding its body with the encoder it is handed.
    struct OwnBody: ParametersRepresentable {
        func apply(to parameters: inout RequestParameters) throws {
            let data = try parameters.jsonEncoder.encode(Payload(firstName: "Ada"))
            try parameters.setBody(data, contentType: "application/json")
        }
    }

    struct OwnBodyCall: Connector {
        var baseURL: URL { URL(string: "https://api.test")! }
        var endpoint: String { "/people" }
        var method: HTTPMethod { .post }
        var parameters: ParametersRepresentable? { OwnBody() }
        var jsonEncoder: JSONEncoder? { ConnectorCodersTests.snakeEncoder }
    }

    /// The configuration's encoder writes what neither a default encoder nor the connector's
    /// would: a body it encoded is told apart from theirs.
    static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }()

    func connect(_ transport: RecordingTransport, errorHandler: any ErrorHandlerProtocol = ErrorHandler()) -> Connect {
        Fixtures.connect(transport: transport, errorHandler: errorHandler) { configuration in
            configuration.jsonEncoder = ConnectorCodersTests.prettyEncoder
        }
    }

    @Test func bodiesAreEncodedWithTheConnectorsEncoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        _ = try await connect(transport).request(Call(ownEncoder: true)).value
        _ = try await connect(transport).request(Call(ownEncoder: false)).value
        #expect(
            transport.requests.map(\.httpBody) == [
                Data(#"{"first_name":"Ada"}"#.utf8), Data("{\n  \"firstName\" : \"Ada\"\n}".utf8),
            ])
        #expect(try Call(ownEncoder: true).asURLRequest().httpBody == Data(#"{"first_name":"Ada"}"#.utf8))
        #expect(try Call(ownEncoder: false).asURLRequest().httpBody == Data(#"{"firstName":"Ada"}"#.utf8))
    }

    @Test func anUploadsJSONFieldsAreNamedByTheConnectorsEncoder() throws {
        // `.jsonObject` on an upload becomes one form field per member, named as the encoder
        // writes them.
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        let own = try connect(transport).uploadRequest(files: [], to: Call(ownEncoder: true)).body
        let ownText = String(decoding: try own.data(), as: UTF8.self)
        #expect(ownText.contains(#"name="first_name""#) && !ownText.contains(#"name="firstName""#))
        let plain = try connect(transport).uploadRequest(files: [], to: Call(ownEncoder: false)).body
        #expect(String(decoding: try plain.data(), as: UTF8.self).contains(#"name="firstName""#))
    }

    @Test func aParametersTypeOfYourOwnIsHandedTheConnectorsEncoder() throws {
        let transport = RecordingTransport { _ in Fixtures.json("{}") }
        let request = try connect(transport).urlRequest(for: OwnBodyCall())
        #expect(request.httpBody == Data(#"{"first_name":"Ada"}"#.utf8))
    }

    @Test func decodedWithoutADecoderUsesTheConnectorsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"first_name":"Ada"}"#) }
        let reply = try await connect(transport).request(Call()).decoded(toType: Reply.self).value
        #expect(reply == Reply(firstName: "Ada"))
        let viaResponse = try await connect(transport).response(Call()).decoded(toType: Reply.self).value
        #expect(viaResponse == Reply(firstName: "Ada"))
        let plain = await connect(transport).request(Call(ownDecoder: false)).decoded(toType: Reply.self).asyncResult
        #expect(Fixtures.error(of: plain) != nil, "the configuration's decoder knows no snake case")
    }

    @Test func aResponseDecodesWithItsRequestsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"first_name":"Ada"}"#) }
        // The connector's own decoder.
        let response = try await connect(transport).response(Call()).value
        #expect(try response.decoded(toType: Reply.self) == Reply(firstName: "Ada"))
        try ResponseValidator.basicResponse(Reply.self).validate(response)  // a validator run by hand too
        // The configuration's, for a connector without one; its body handed to an error handler too.
        let configured = Fixtures.connect(transport: transport) { configuration in
            configuration.jsonDecoder = ConnectorCodersTests.snakeDecoder
        }
        let plainCall = try await configured.response(Call(ownDecoder: false)).value
        #expect(try plainCall.decoded(toType: Reply.self) == Reply(firstName: "Ada"))
        // A decoder passed wins; a plain one knows no snake case.
        #expect(throws: ConnectError.self) { try response.decoded(toType: Reply.self, decoder: JSONDecoder()) }
        // Neither configured: a plain decoder.
        let unconfigured = try await connect(transport).response(Call(ownDecoder: false)).value
        #expect(throws: ConnectError.self) { try unconfigured.decoded(toType: Reply.self) }
        // Made by hand: a plain decoder, unless one is passed.
        let byHand = Response(request: response.request, httpResponse: response.httpResponse, data: response.data)
        #expect(throws: ConnectError.self) { try byHand.decoded(toType: Reply.self) }
        #expect(throws: ConnectError.self) { try ResponseValidator.basicResponse(Reply.self).validate(byHand) }
        #expect(try byHand.decoded(toType: Reply.self, decoder: Self.snakeDecoder) == Reply(firstName: "Ada"))
        // Rebuilt with the received one's decoder, it decodes as that one does.
        let rebuilt = Response(
            request: response.request, httpResponse: response.httpResponse, data: response.data,
            decoder: response.decoder)
        #expect(rebuilt.decoder === Self.snakeDecoder)
        #expect(try rebuilt.decoded(toType: Reply.self) == Reply(firstName: "Ada"))
    }

    @Test func aResponseAnErrorHandlerIsGivenDecodesWithItsRequestsDecoder() async throws {
        struct ReadingHandler: ErrorHandlerProtocol {
            func handle(response: [String: Any]) -> Error? { nil }
            func handle(_ response: Response) -> Error? {
                (try? response.decoded(toType: Failure.self)) ?? ConnectError.invalidResponse
            }
        }
        let transport = RecordingTransport { _ in Fixtures.json(#"{"error_code":"E1"}"#, status: 409) }
        let result = await connect(transport, errorHandler: ReadingHandler()).request(Call()).asyncResult
        #expect(Fixtures.error(of: result) as? Failure == Failure(errorCode: "E1"))
    }

    @Test func validatorsDecodeWithTheConnectorsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"request_id":"r-1"}"#) }
        let validators: [ResponseValidator] = [.basicResponse(Envelope.self)]
        let result = await connect(transport).request(Call(validators: validators)).asyncResult
        #expect(Fixtures.value(of: result) != nil)
        let plain = await connect(transport).request(Call(ownDecoder: false, validators: validators)).asyncResult
        guard case .validationFailed? = Fixtures.error(of: plain) as? ConnectError else {
            Issue.record("expected validationFailed with the configuration's decoder, got \(plain)")
            return
        }
    }

    @Test func aDecodingErrorHandlerUsesTheConnectorsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"error_code":"E1"}"#, status: 409) }
        let result = await connect(transport, errorHandler: DecodingErrorHandler(Failure.self)).request(Call())
            .asyncResult
        #expect(Fixtures.error(of: result) as? Failure == Failure(errorCode: "E1"))
    }

    // A chain decodes a body with the decoder of the request it came from, also when a `flatMap`
    // or `flatRecover` continued with another endpoint's request (Usage.md: "used for its calls
    // only").

    @Test func aBodyAFlatMapContinuedWithIsDecodedWithThatEndpointsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"first_name":"Ada"}"#) }
        let connect = connect(transport)
        let viaBody = try await connect.request(Call(ownDecoder: false))
            .flatMap { _ in connect.request(Call()) }
            .decoded(toType: Reply.self).value
        #expect(viaBody == Reply(firstName: "Ada"))
        let viaResponse = try await connect.response(Call(ownDecoder: false))
            .flatMap { _ in connect.response(Call()) }
            .decoded(toType: Reply.self).value
        #expect(viaResponse == Reply(firstName: "Ada"))
        let viaResponseBody = try await connect.response(Call(ownDecoder: false))
            .flatMap { _ in connect.response(Call()) }
            .data.decoded(toType: Reply.self).value
        #expect(viaResponseBody == Reply(firstName: "Ada"))
    }

    @Test func aBodyAFlatMapContinuedWithKeepsTheDecoderOfItsOwnEndpoint() async throws {
        // The other way round: the first endpoint's decoder does not decode the second's body.
        let transport = RecordingTransport { _ in Fixtures.json(#"{"first_name":"Ada"}"#) }
        let connect = connect(transport)
        let result = await connect.request(Call())
            .flatMap { _ in connect.request(Call(ownDecoder: false)) }
            .decoded(toType: Reply.self).asyncResult
        #expect(Fixtures.error(of: result) != nil, "the configuration's decoder knows no snake case")
    }

    @Test func aBodyAFlatRecoverContinuedWithIsDecodedWithThatEndpointsDecoder() async throws {
        let transport = RecordingTransport { request in
            request.httpMethod == "GET" ? Fixtures.json("{}", status: 500) : Fixtures.json(#"{"first_name":"Ada"}"#)
        }
        let connect = connect(transport)
        let viaBody = try await connect.request(Call(method: .get, ownDecoder: false))
            .flatRecover { _ in connect.request(Call()) }
            .decoded(toType: Reply.self).value
        #expect(viaBody == Reply(firstName: "Ada"))
        let viaResponse = try await connect.response(Call(method: .get, ownDecoder: false))
            .flatRecover { _ in connect.response(Call()) }
            .decoded(toType: Reply.self).value
        #expect(viaResponse == Reply(firstName: "Ada"))
    }

    @Test func aBodyPassedThroughMapErrorKeepsItsEndpointsDecoder() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"first_name":"Ada"}"#) }
        let connect = connect(transport)
        let viaResponse = try await connect.response(Call())
            .mapError { $0 }
            .decoded(toType: Reply.self).value
        #expect(viaResponse == Reply(firstName: "Ada"))
    }
}
