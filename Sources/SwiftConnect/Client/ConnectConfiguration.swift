import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a ``Connect`` sends requests and delivers results.
///
/// ```swift
/// var configuration = ConnectConfiguration()
/// configuration.callbackQueue = .global()
/// configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
/// let connect = Connect(configuration: configuration)
/// ```
///
/// - Important: The encoder, decoder and session configuration are reference types. Set them up
///   before handing the configuration to `Connect`, and don't change them afterwards.
public struct ConnectConfiguration: Sendable {

    /// The URLSession configuration (timeouts, caching, cookies, connection limits, …). The
    /// headers in its `httpAdditionalHeaders` are sent with each built request instead of by the
    /// session: the build checks them as it does every header, and a redirect to another origin
    /// drops the credentials among them (see ``Connect/urlRequest(for:)``).
    public var sessionConfiguration: URLSessionConfiguration
    /// When set, every request goes to this base URL instead of its connector's `baseURL` — the
    /// way to point the same connectors at staging, a local server or a test server's port. Use
    /// one `Connect` per service when connectors talk to several.
    public var baseURL: URL?
    /// The queue futures from this `Connect` deliver results on. `DispatchQueue.main` on Apple
    /// platforms; on Linux, where nothing drains the main queue unless the program runs
    /// `dispatchMain()` or a run loop, a serial queue of the library's own.
    public var callbackQueue: DispatchQueue
    /// Encodes `Parameter.jsonObject` bodies, unless the connector has an encoder of its own
    /// (``Connector/jsonEncoder``).
    public var jsonEncoder: JSONEncoder {
        get { encoder.coder }
        set { encoder = SendableCoder(newValue) }
    }
    /// Decodes bodies in `decoded(toType:)` when no decoder is passed.
    public var jsonDecoder: JSONDecoder {
        get { decoder.coder }
        set { decoder = SendableCoder(newValue) }
    }
    // Boxed: Apple's Foundation makes the coders `Sendable` only from macOS 13 and iOS 16.
    private var encoder: SendableCoder<JSONEncoder>
    private var decoder: SendableCoder<JSONDecoder>
    /// Headers sent with every request unless the connector sets one of the same name.
    public var defaultHeaders: [HTTPHeader]
    /// The timeout for requests whose connector has none; `nil` keeps the session's (60 s).
    ///
    /// Held to the rules of ``Connector/timeoutInterval``: NaN, zero or negative fails each request
    /// with ``InvalidRequestReason/invalidTimeout(_:)``, nothing sent; `.infinity` waits about
    /// 31.7 years; on Linux a fraction is rounded up to whole seconds. The session
    /// configuration's own timeouts are held to the same rules, but as a session cannot fail a
    /// request, one that is NaN, zero or negative is replaced by URLSession's default there.
    public var timeoutInterval: TimeInterval?
    /// Where `debugResponse: true` output goes. Debug output is off unless a request asks for it,
    /// or ``debugResponses`` turns it on for every request.
    public var logger: any ConnectLogger
    /// Logs every request and its response, as `debugResponse: true` does for one (credentials
    /// redacted, through ``logger``): the client-wide debug mode. `false` by default.
    public var debugResponses: Bool
    /// Whether and how redirects are followed; ``RedirectPolicy/follow`` (up to ten) by default.
    public var redirectPolicy: RedirectPolicy
    /// Checks every successful response (a connector may replace them with its own).
    public var validators: [ResponseValidator]
    /// Waits before a retry; `Task.sleep` by default. Replace it in tests so retries don't sleep.
    /// It must throw when the waiting task is cancelled.
    ///
    /// The default takes any delay: a negative or NaN one does not wait, and one of 2^62
    /// nanoseconds (about 146 years) or more, `.infinity` included, waits that long: until the
    /// request is cancelled.
    public var sleep: @Sendable (TimeInterval) async throws -> Void

    /// The serial queue used as the default callback queue on Linux.
    public static let defaultCallbackQueue: DispatchQueue = {
        #if canImport(Darwin)
            return .main
        #else
            return DispatchQueue(label: "SwiftConnect.callbacks")
        #endif
    }()

    /// Creates a configuration; every parameter has a default.
    public init(
        sessionConfiguration: URLSessionConfiguration = .default,
        baseURL: URL? = nil,
        callbackQueue: DispatchQueue = ConnectConfiguration.defaultCallbackQueue,
        jsonEncoder: JSONEncoder = JSONEncoder(),
        jsonDecoder: JSONDecoder = JSONDecoder(),
        defaultHeaders: [HTTPHeader] = [],
        timeoutInterval: TimeInterval? = nil,
        logger: any ConnectLogger = PrintLogger(),
        debugResponses: Bool = false,
        redirectPolicy: RedirectPolicy = .follow,
        validators: [ResponseValidator] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { seconds in
            try await Task.sleep(nanoseconds: ConnectConfiguration.nanoseconds(seconds))
        }
    ) {
        self.sessionConfiguration = sessionConfiguration
        self.baseURL = baseURL
        self.callbackQueue = callbackQueue
        encoder = SendableCoder(jsonEncoder)
        decoder = SendableCoder(jsonDecoder)
        self.defaultHeaders = defaultHeaders
        self.timeoutInterval = timeoutInterval
        self.logger = logger
        self.debugResponses = debugResponses
        self.redirectPolicy = redirectPolicy
        self.validators = validators
        self.sleep = sleep
    }

    /// `seconds` as `Task.sleep`'s nanoseconds: `0` for a negative or NaN delay, at most
    /// ``longestSleep`` (converting a delay past `UInt64.max` directly would trap).
    @usableFromInline
    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let nanoseconds = seconds * 1_000_000_000
        return nanoseconds < Double(longestSleep) ? UInt64(nanoseconds) : longestSleep
    }

    /// 2^62 ns, about 146 years. Older concurrency runtimes hand the delay to `dispatch_time` as a
    /// signed 64-bit count added to the current time, so a delay near `UInt64.max` came back at
    /// once (swiftlang/swift#80791); this one cannot overflow there.
    @usableFromInline
    static let longestSleep: UInt64 = 1 << 62

    /// The default configuration.
    public static var `default`: ConnectConfiguration { ConnectConfiguration() }
}
