import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The body nginx serves (Benchmarks/Server/todo.json), decoded on both sides.
struct Todo: Decodable, Sendable {
    let userId: Int
    let id: Int
    let title: String
    let completed: Bool
}

/// The server scripts/bench.sh started, from `SWIFTCONNECT_BENCH_URL`; `nil` skips the suite.
let serverURL: URL? = ProcessInfo.processInfo.environment["SWIFTCONNECT_BENCH_URL"].flatMap { URL(string: $0) }

/// Where the network benchmarks send requests: `serverURL`, or, when there is none and they are
/// skipped, a closed loopback port.
let networkBaseURL = serverURL ?? URL(string: "http://127.0.0.1:1")!

/// What the library's user writes.
enum TodoConnector: Connector {
    case get(id: Int)

    case stubbed(id: Int)

    var baseURL: URL {
        switch self {
        case .get: return networkBaseURL
        case .stubbed: return StubProtocol.baseURL
        }
    }

    var endpoint: String { "/todos/{id}" }

    var parameters: ParametersRepresentable? {
        switch self {
        case .get(let id), .stubbed(let id): return Parameter.path(key: "id", value: String(id))
        }
    }
}

/// What the same user writes without the library: one URLSession with the default configuration
/// (as `Connect()` makes), the status checked, the body decoded with one shared JSONDecoder (as a
/// `Connect` shares its configuration's).
final class HandwrittenClient: Sendable {
    let session: URLSession
    let decoder = JSONDecoder()
    let base: String

    init(base: URL, configuration: URLSessionConfiguration = .default) {
        self.base = base.absoluteString
        session = URLSession(configuration: configuration)
    }

    func url(id: Int) -> URL {
        URL(string: "\(base)/todos/\(id)")!
    }

    /// async/await: `URLSession.data(for:)`, then decode.
    func todo(id: Int) async throws -> Todo {
        let (data, response) = try await session.data(for: URLRequest(url: url(id: id)))
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            throw URLError(.badServerResponse)
        }
        return try decoder.decode(Todo.self, from: data)
    }

    /// Callbacks: a data task with a completion handler that decodes (on the session's delegate
    /// queue, as a Connect future's observer decodes on its callback queue).
    func todo(id: Int, completion: @escaping @Sendable (Result<Todo, any Error>) -> Void) {
        let decoder = self.decoder
        session.dataTask(with: URLRequest(url: url(id: id))) { data, response, error in
            if let error {
                completion(.failure(error))
                return
            }
            guard let data, let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
                completion(.failure(URLError(.badServerResponse)))
                return
            }
            completion(Result { try decoder.decode(Todo.self, from: data) })
        }.resume()
    }
}
