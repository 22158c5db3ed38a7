import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries failed requests that are safe to repeat, with exponential backoff and jitter.
///
/// Off unless you add it:
///
/// ```swift
/// let connect = Connect(middleware: ConnectMiddleware(retriers: [RetryPolicy()]), errorHandler: ErrorHandler())
/// ```
///
/// It retries only idempotent requests (GET, HEAD, PUT, DELETE, OPTIONS, TRACE, QUERY — a
/// connector can say otherwise with `isIdempotent`), only on the chosen statuses (408, 429, 500,
/// 502, 503, 504) and transport errors (timeouts, lost connections, refused connections, …), and
/// never for other 4xx or decoding failures. The delay before retry *n* is
/// `min(maximumDelay, baseDelay × multiplier^(n-1))`, scaled by a random factor in
/// `1 - jitter ... 1`. A `Retry-After` header (seconds or an HTTP date) replaces that delay; one
/// longer than `maximumRetryAfter` stops the retries instead.
public struct RetryPolicy: RequestRetrier {
    /// Attempts in all, the first one included. `3` means up to two retries. No request is sent
    /// more than 20 times, whatever the retriers say: above 20 this changes nothing.
    public var maximumAttempts: Int
    /// The statuses that are retried.
    public var retryableStatusCodes: Set<Int>
    /// The transport errors that are retried.
    public var retryableURLErrorCodes: Set<URLError.Code>
    /// The delay before the first retry, in seconds.
    public var baseDelay: TimeInterval
    /// How much each further retry's delay grows.
    public var multiplier: Double
    /// The longest computed delay, in seconds.
    public var maximumDelay: TimeInterval
    /// How much of each delay is random, from `0` (none) to `1` (anything from 0 to the delay).
    public var jitter: Double
    /// The longest `Retry-After` honoured, in seconds; a longer one ends the retries.
    public var maximumRetryAfter: TimeInterval
    /// A source of random numbers in `0..<1` (replace it in tests).
    public var random: @Sendable () -> Double
    /// The current date, for `Retry-After` dates (replace it in tests).
    public var now: @Sendable () -> Date

    /// The statuses retried by default: 408, 429, 500, 502, 503, 504.
    public static let defaultRetryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The transport errors retried by default: timeouts, lost or refused connections, DNS, no
    /// connection to the internet, and a response the server sent malformed.
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
        .notConnectedToInternet, .badServerResponse,
    ]

    /// Creates a policy; every parameter has a default.
    public init(
        maximumAttempts: Int = 3,
        retryableStatusCodes: Set<Int> = RetryPolicy.defaultRetryableStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes,
        baseDelay: TimeInterval = 0.5,
        multiplier: Double = 2,
        maximumDelay: TimeInterval = 30,
        jitter: Double = 0.5,
        maximumRetryAfter: TimeInterval = 120,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.maximumAttempts = maximumAttempts
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumRetryAfter = maximumRetryAfter
        self.random = random
        self.now = now
    }

    /// Retries with a delay when the attempt is retryable, else `.doNotRetry`.
    public func retry(_ attempt: FailedAttempt) async -> RetryResult {
        guard attempt.isIdempotent, attempt.number < maximumAttempts, isRetryable(attempt) else { return .doNotRetry }
        if let response = attempt.response, let header = response.headers["Retry-After"],
            let wait = Self.retryAfter(header, now: now())
        {
            return wait <= maximumRetryAfter ? .retryWithDelay(wait) : .doNotRetry
        }
        return .retryWithDelay(delay(beforeRetry: attempt.number))
    }

    /// Whether the failure is one this policy retries (ignoring idempotency and attempt count).
    public func isRetryable(_ attempt: FailedAttempt) -> Bool {
        if let status = attempt.statusCode { return retryableStatusCodes.contains(status) }
        if let code = attempt.urlErrorCode { return retryableURLErrorCodes.contains(code) }
        return false
    }

    /// The delay before retry number `retry` (1 for the first retry), jitter applied. A figure
    /// that is NaN or negative (`baseDelay`, `multiplier`, `maximumDelay`) gives no delay: the
    /// retry goes at once, as a `sleep` given such a delay does.
    public func delay(beforeRetry retry: Int) -> TimeInterval {
        let exponential = baseDelay * pow(multiplier, Double(max(1, retry) - 1))  // `retry - 1` overflows at Int.min
        // `min` would take NaN for the smaller number, or pass it through: compared here, a NaN
        // on either side gives no delay.
        let capped = exponential < maximumDelay ? exponential : maximumDelay
        guard capped > 0, !exponential.isNaN else { return 0 }
        let spread = min(1, max(0, jitter))
        return capped * (1 - spread + spread * min(1, max(0, random())))
    }

    /// Seconds to wait from a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
    public static func retryAfter(_ value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return TimeInterval(trimmed)  // a Double, so a huge value is huge rather than unreadable
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

/// HTTP dates: IMF-fixdate, with the obsolete RFC 850 and asctime forms accepted as RFC 9110 asks.
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    static func parse(_ text: String) -> Date? {
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
