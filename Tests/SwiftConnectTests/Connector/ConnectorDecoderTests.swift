import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// A connector's own `jsonDecoder` serves its calls in place of the configuration's.
@Suite("Connector: its own JSON decoder")
struct ConnectorDecoderTests {
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
        var validators: [ResponseValidator]? = nil
        var baseURL: URL { URL(string: "https://api.test")! }
        var endpoint: String { "/people" }
        var parameters: ParametersRepresentable? { Parameter.jsonObject(value: Payload(firstName: "Ada")) }
        var jsonDecoder: JSONDecoder? { ownDecoder ? ConnectorDecoderTests.snakeDecoder : nil }
    }

    func connect(_ transport: RecordingTransport, errorHandler: any ErrorHandlerProtocol = ErrorHandler()) -> Connect {
        Fixtures.connect(transport: transport, errorHandler: errorHandler) { _ in }
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
}
