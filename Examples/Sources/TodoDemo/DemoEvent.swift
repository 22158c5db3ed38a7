/// What the scripted session reports as it goes, for a terminal or a test to show.
public enum DemoEvent: Sendable, Equatable {
    /// A new step begins.
    case step(String)
    /// A request did what the step expected.
    case success(String)
    /// A detail: a todo in a list, what happens next.
    case note(String)
    /// An error response the step asked for: the request (`GET /todos/8`), then the status and the
    /// message the error handler read.
    case serverError(ServerError, request: String)
    /// How much of an upload has been sent, from 0 to 1.
    case progress(Double)
    /// SwiftConnect's own debug output: cURL commands and responses (`--verbose`).
    case debug(String)
}

/// An error response: its status and the server's message, `{"message": …}`.
public struct ServerError: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status code.
    public let status: Int
    /// The server's message.
    public let message: String

    /// Creates an error response's summary.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// `404 todo 8 not found`.
    public var description: String { "\(status) \(message)" }
}
