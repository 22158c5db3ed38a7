import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The local httpbin server the integration tests talk to, found through `HTTPBIN_URL`.
enum HTTPBin {
    /// `HTTPBIN_URL`, e.g. `http://127.0.0.1:54321`; `nil` when the tests run without a server.
    static let url: URL? = ProcessInfo.processInfo.environment["HTTPBIN_URL"].flatMap(URL.init(string:))

    /// Why integration tests are skipped when there is no server.
    static let skipReason: Comment =
        "HTTPBIN_URL is not set: run scripts/test.sh, which starts httpbin on 127.0.0.1 and runs the tests"

    /// Whether the server is there.
    static var isAvailable: Bool { url != nil }

    /// The server's URL; only called from tests enabled by `isAvailable`.
    static var baseURL: URL { url ?? URL(string: "http://127.0.0.1:9")! }

    /// The same server under another origin (`localhost` instead of `127.0.0.1`).
    static var otherOriginURL: URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.host = components.host == "localhost" ? "127.0.0.1" : "localhost"
        return components.url!
    }

    /// A client whose callbacks run on a private queue.
    static func connect(
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
        transport: (any Transport)? = nil,
        configure: (inout ConnectConfiguration) -> Void = { _ in }
    ) -> Connect {
        var configuration = ConnectConfiguration()
        configuration.callbackQueue = DispatchQueue(label: "integration.callbacks")
        configuration.timeoutInterval = 20
        configure(&configuration)
        return Connect(
            middleware: middleware, errorHandler: errorHandler, configuration: configuration, transport: transport)
    }
}

/// What httpbin's `/anything`, `/get`, `/post`, … echo back.
struct Echo: Decodable, Sendable {
    let method: String?
    let url: String
    let args: [String: StringOrStrings]
    let headers: [String: String]
    let json: JSONValue?
    let data: String?
    let form: [String: StringOrStrings]?
    /// The files of a multipart body, by field name.
    let files: [String: StringOrStrings]?

    /// A header as the server received it (httpbin title-cases names).
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// httpbin gives a single value as a string and a repeated one as a list.
enum StringOrStrings: Decodable, Sendable, Equatable {
    case one(String)
    case many([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) {
            self = .one(value)
        } else {
            self = .many(try container.decode([String].self))
        }
    }
}

/// Any JSON value, for comparing what the server parsed.
indirect enum JSONValue: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
