import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Middleware = MiddlewareFixtures

/// The service's typed error body.
private struct APIFailure: Decodable, Error, Equatable {
    let message: String
    let code: Int
}

/// A snake-case error body.
private struct SnakeFailure: Decodable, Error, Equatable {
    let errorCode: String
}

/// A fallback whose error names the status.
private struct StatusFallback: ErrorHandlerProtocol {
    func handle(response: [String: Any]) -> Error? { Fixtures.TestError(code: "json") }
    func handle(_ response: Response) -> Error? { Fixtures.TestError(code: "status \(response.statusCode)") }
}

// MARK: - Unit

@Suite("DecodingErrorHandler")
struct DecodingErrorHandlerTests {
    @Test func matchingBodyBecomesTheUsersError() {
        let handler = DecodingErrorHandler(APIFailure.self)
        let error = handler.handle(Fixtures.response(status: 422, body: #"{"message":"bad email","code":17}"#))
        #expect(error as? APIFailure == APIFailure(message: "bad email", code: 17))
    }

    @Test func nonMatchingBodyFallsBackToUnacceptableStatusWithTheMessage() throws {
        let handler = DecodingErrorHandler(APIFailure.self)
        let error = handler.handle(Fixtures.response(status: 500, body: #"{"message":"no code"}"#))
        guard case .unacceptableStatus(let response, let message)? = error as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 500)
        #expect(message == "no code")
    }

    @Test(arguments: ["", "not json", "[1,2]", #"{"message":"x","code":"not a number"}"#])
    func undecodableBodiesFallBackAndKeepTheBody(body: String) throws {
        let handler = DecodingErrorHandler(APIFailure.self)
        let error = try #require(handler.handle(Fixtures.response(status: 503, body: body)) as? ConnectError)
        #expect(error.statusCode == 503)
        #expect(error.responseBody == Data(body.utf8))
    }

    @Test func customFallbackIsUsedForOtherBodies() {
        let handler = DecodingErrorHandler(APIFailure.self, fallback: StatusFallback())
        let error = handler.handle(Fixtures.response(status: 502, body: "<html>bad gateway</html>"))
        #expect(error as? Fixtures.TestError == Fixtures.TestError(code: "status 502"))
    }

    @Test func customDecoderIsUsed() {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let handler = DecodingErrorHandler(SnakeFailure.self, decoder: decoder)
        let error = handler.handle(Fixtures.response(status: 400, body: #"{"error_code":"E42"}"#))
        #expect(error as? SnakeFailure == SnakeFailure(errorCode: "E42"))
    }

    @Test func jsonObjectEntryPointAsksTheFallback() {
        let handler = DecodingErrorHandler(APIFailure.self)
        #expect(handler.handle(response: ["message": "direct"]) as? ErrorMessage == ErrorMessage(message: "direct"))
    }
}

// MARK: - Through Connect

@Suite("DecodingErrorHandler: through Connect", timeLimit(minutes: 1))
struct DecodingErrorHandlerPipelineTests {
    @Test func typedErrorBodyReachesTheObserverAsTheUsersError() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"bad email","code":17}"#, status: 422) }
        let connect = Middleware.connect(transport: transport, errorHandler: DecodingErrorHandler(APIFailure.self))
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? APIFailure == APIFailure(message: "bad email", code: 17))
    }

    /// Given no decoder, the handler decodes with the configuration's, as `decoded(toType:)` does;
    /// one given to it wins.
    @Test func typedErrorBodyIsDecodedWithTheConfigurationsDecoderUnlessGivenOne() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"error_code":"E42"}"#, status: 400) }
        let configured = Middleware.connect(transport: transport, errorHandler: DecodingErrorHandler(SnakeFailure.self))
        {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        }
        let result = await configured.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? SnakeFailure == SnakeFailure(errorCode: "E42"))

        let own = Middleware.connect(
            transport: transport, errorHandler: DecodingErrorHandler(SnakeFailure.self, decoder: JSONDecoder())
        ) {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        }
        let fellBack = await own.request(Middleware.Call()).asyncResult
        #expect((Fixtures.error(of: fellBack) as? ConnectError)?.statusCode == 400)
    }

    /// Typed handlers chained as fallbacks each decode with the configuration's decoder.
    @Test func aTypedFallbackDecodesWithTheConfigurationsDecoderToo() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"error_code":"E42"}"#, status: 409) }
        let chained = DecodingErrorHandler(APIFailure.self, fallback: DecodingErrorHandler(SnakeFailure.self))
        let connect = Middleware.connect(transport: transport, errorHandler: chained) {
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        }
        let result = await connect.request(Middleware.Call()).asyncResult
        #expect(Fixtures.error(of: result) as? SnakeFailure == SnakeFailure(errorCode: "E42"))
    }

    @Test func typedErrorAlsoReachesADecodedChain() async throws {
        let transport = RecordingTransport { _ in Fixtures.json(#"{"message":"gone","code":4}"#, status: 410) }
        let connect = Middleware.connect(transport: transport, errorHandler: DecodingErrorHandler(APIFailure.self))
        do {
            _ = try await connect.request(Middleware.Call()).decoded(toType: Fixtures.Todo.self).value
            Issue.record("expected a failure")
        } catch let failure as APIFailure {
            #expect(failure == APIFailure(message: "gone", code: 4))
        }
    }

    @Test func nonMatchingErrorBodyFailsWithUnacceptableStatus() async throws {
        let transport = RecordingTransport { _ in
            StubTransport.Reply(statusCode: 500, headers: ["Content-Type": "text/plain"], body: Data("oops".utf8))
        }
        let connect = Middleware.connect(transport: transport, errorHandler: DecodingErrorHandler(APIFailure.self))
        let result = await connect.request(Middleware.Call()).asyncResult
        guard case .unacceptableStatus(let response, let message)? = Fixtures.error(of: result) as? ConnectError else {
            Issue.record("expected unacceptableStatus, got \(result)")
            return
        }
        #expect(response.statusCode == 500)
        #expect(response.data == Data("oops".utf8))
        #expect(message == "oops")
    }

    @Test func successIsNotTouchedEvenIfItLooksLikeAnError() async throws {
        let body = #"{"message":"created","code":0}"#
        let transport = RecordingTransport { _ in Fixtures.json(body, status: 201) }
        let connect = Middleware.connect(transport: transport, errorHandler: DecodingErrorHandler(APIFailure.self))
        #expect(try await connect.request(Middleware.Call()).value == Data(body.utf8))
    }
}
