import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Timeouts as URLSession can take them.
///
/// FoundationNetworking (Linux) arms a request's timer with `Int(timeout) * 1000` milliseconds.
/// It traps on a NaN, an infinite or a huge timeout (past about 9.2e15 s), and it truncates a
/// fraction: a timeout of 0.5 s fails the request at once, before any answer can come. So a
/// timeout
/// - is refused when it is NaN, zero or negative: no request can wait that long;
/// - waits at most ``longest`` (about 31.7 years), which is what `.infinity` means;
/// - on Linux, is rounded up to whole seconds, so that a request never times out earlier than
///   asked.
enum RequestTimeout {
    /// The longest wait: 10⁹ s, about 31.7 years.
    static let longest: TimeInterval = 1e9

    /// `seconds` as the request is given it, or `nil` when no request can wait that long.
    static func sendable(_ seconds: TimeInterval) -> TimeInterval? {
        guard seconds > 0 else { return nil }  // NaN too
        let capped = min(seconds, longest)
        #if canImport(FoundationNetworking)
            return capped.rounded(.up)
        #else
            return capped
        #endif
    }

    /// `configuration`, or a copy of it whose timeouts URLSession can take: each as
    /// ``sendable(_:)`` makes it, and, where that refuses it, URLSession's default (60 s for a
    /// request, 7 days for a resource). A session cannot fail a request with an error of its own.
    static func sanitized(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        let request = sendable(configuration.timeoutIntervalForRequest) ?? 60
        let resource = sendable(configuration.timeoutIntervalForResource) ?? 7 * 24 * 60 * 60
        guard
            request != configuration.timeoutIntervalForRequest || resource != configuration.timeoutIntervalForResource,
            let copy = configuration.copy() as? URLSessionConfiguration
        else { return configuration }
        copy.timeoutIntervalForRequest = request
        copy.timeoutIntervalForResource = resource
        return copy
    }
}
