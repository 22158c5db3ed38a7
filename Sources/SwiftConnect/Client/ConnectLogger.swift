/// Where `debugResponse: true` output goes. Replace it to route SwiftConnect's debug output into
/// your own logging.
///
/// ```swift
/// struct OSLogger: ConnectLogger {
///     func log(_ message: String) { logger.debug("\(message)") }
/// }
/// ```
public protocol ConnectLogger: Sendable {
    /// Writes one message (it may span several lines).
    func log(_ message: String)
}

/// Prints messages to standard output. The default logger.
public struct PrintLogger: ConnectLogger {
    /// Creates a print logger.
    public init() {}

    /// Prints `message`.
    public func log(_ message: String) {
        print(message)
    }
}
