import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The reason building `connector` was rejected with; records an issue (and returns `nil`) when
/// the request was built, or failed with anything but ``ConnectError/invalidRequest(_:)``.
func rejectionReason(
    building connector: Connector,
    sourceLocation: SourceLocation = #_sourceLocation
) -> InvalidRequestReason? {
    do {
        let request = try connector.asURLRequest()
        Issue.record(
            "Expected the request to be rejected, but it was built: \(request.httpMethod ?? "?") \(request.url?.absoluteString ?? "?")",
            sourceLocation: sourceLocation)
        return nil
    } catch ConnectError.invalidRequest(let reason) {
        return reason
    } catch {
        Issue.record("Expected ConnectError.invalidRequest, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Sends `connector` through a `Connect` over a ``RecordingTransport`` (or the client
/// `makeClient` makes over it) and returns the ``InvalidRequestReason`` the future failed with.
/// Records an issue when the future did not fail with ``ConnectError/invalidRequest(_:)``, or when
/// the transport was asked to send anything.
func rejectionReasonWhenSent(
    _ connector: Connector,
    connect makeClient: (RecordingTransport) -> Connect = { makeConnect(transport: $0) },
    sourceLocation: SourceLocation = #_sourceLocation
) async -> InvalidRequestReason? {
    let transport = RecordingTransport()
    let connect = makeClient(transport)
    let result = await connect.request(connector).asyncResult
    #expect(transport.requests.isEmpty, "nothing may be sent", sourceLocation: sourceLocation)
    return invalidRequestReason(of: result, sourceLocation: sourceLocation)
}

/// The ``InvalidRequestReason`` `result` failed with; records an issue (and returns `nil`) for a
/// success or any other error.
func invalidRequestReason<Value>(
    of result: Result<Value, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) -> InvalidRequestReason? {
    switch result {
    case .success(let value):
        Issue.record("Expected invalidRequest, but the request succeeded with \(value)", sourceLocation: sourceLocation)
        return nil
    case .failure(ConnectError.invalidRequest(let reason)):
        return reason
    case .failure(let error):
        Issue.record("Expected invalidRequest, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Expects sending `connector` to fail with `ConnectError.invalidRequest(expected)` with nothing
/// sent (see ``rejectionReasonWhenSent(_:connect:sourceLocation:)``).
func expectRejectedBeforeSending(
    _ connector: Connector,
    with expected: InvalidRequestReason,
    connect makeClient: (RecordingTransport) -> Connect = { makeConnect(transport: $0) },
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let reason = await rejectionReasonWhenSent(connector, connect: makeClient, sourceLocation: sourceLocation)
    #expect(reason == expected, sourceLocation: sourceLocation)
}

/// A `Connect` over `transport` whose configuration was set up by `configure`.
func makeConfiguredConnect(
    transport: any Transport,
    _ configure: (inout ConnectConfiguration) -> Void
) -> Connect {
    var configuration = ConnectConfiguration()
    configuration.callbackQueue = DispatchQueue(label: "test.request-building.callbacks")
    configuration.logger = CapturingLogger()
    configure(&configuration)
    return Connect(configuration: configuration, transport: transport)
}

/// The body of `request` parsed as a JSON object.
func jsonObject(in request: URLRequest, sourceLocation: SourceLocation = #_sourceLocation) throws -> NSDictionary {
    let body = try #require(request.httpBody, "the request has no body", sourceLocation: sourceLocation)
    let object = try JSONSerialization.jsonObject(with: body)
    return try #require(object as? NSDictionary, "the body is not a JSON object", sourceLocation: sourceLocation)
}
