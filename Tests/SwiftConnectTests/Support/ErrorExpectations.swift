import SwiftConnect
import Testing

/// The `ConnectError` a future fails with, recording an issue if it succeeds or fails otherwise.
func expectConnectError<Value>(
    _ future: SwiftConnect.Future<Value>, sourceLocation: SourceLocation = #_sourceLocation
) async -> ConnectError? {
    switch await future.asyncResult {
    case .success(let value):
        Issue.record("expected a failure, got \(value)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        guard let error = error as? ConnectError else {
            Issue.record("expected a ConnectError, got \(error)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }
}

/// Unwraps `.decoding`, recording an issue for anything else.
func decodingFailure(_ error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation)
    -> DecodingFailure?
{
    guard case .decoding(let failure)? = error as? ConnectError else {
        Issue.record("expected ConnectError.decoding, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return failure
}
