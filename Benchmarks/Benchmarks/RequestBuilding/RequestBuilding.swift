// Suite 2 — request building: connector → URLRequest, against the same request built by hand with
// URLComponents and JSONEncoder.
//
// The request: PUT https://api.example.com/v1/users/42/todos/7?fields=id,title&expand=owner&q=swift%206
// with a small JSON body. "Path and query" is the same request without the body (a GET).
// Both sides share one JSONEncoder, as a Connect shares its configuration's.

import Benchmark
import BenchmarkSupport
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct TodoDraft: Codable, Equatable, Sendable {
    let userId: Int
    let title: String
    let completed: Bool
}

let baseURL = URL(string: "https://api.example.com/v1")!
let draft = TodoDraft(userId: 42, title: "Write the benchmarks", completed: false)

enum TodoConnector: Connector {
    case update(userId: Int, todoId: Int, draft: TodoDraft)
    case find(userId: Int, todoId: Int)

    var baseURL: URL { RequestBuilding.baseURL }

    var endpoint: String { "/users/{userId}/todos/{todoId}" }

    var method: HTTPMethod {
        switch self {
        case .update: return .put
        case .find: return .get
        }
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .update(let userId, let todoId, let draft):
            return CompositeParameters(
                .path(key: "userId", value: String(userId)),
                .path(key: "todoId", value: String(todoId)),
                .query(key: "fields", value: "id,title"),
                .query(key: "expand", value: "owner"),
                .query(key: "q", value: "swift 6"),
                .jsonObject(value: draft)
            )
        case .find(let userId, let todoId):
            return CompositeParameters(
                .path(key: "userId", value: String(userId)),
                .path(key: "todoId", value: String(todoId)),
                .query(key: "fields", value: "id,title"),
                .query(key: "expand", value: "owner"),
                .query(key: "q", value: "swift 6")
            )
        }
    }
}

/// The same requests, written the way plain Foundation code writes them.
enum Handwritten {
    static func find(userId: Int, todoId: Int) -> URLRequest {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.path += "/users/\(userId)/todos/\(todoId)"
        components.queryItems = [
            URLQueryItem(name: "fields", value: "id,title"),
            URLQueryItem(name: "expand", value: "owner"),
            URLQueryItem(name: "q", value: "swift 6"),
        ]
        return URLRequest(url: components.url!)
    }

    static func update(userId: Int, todoId: Int, draft: TodoDraft, encoder: JSONEncoder) throws -> URLRequest {
        var request = find(userId: userId, todoId: todoId)
        request.httpMethod = "PUT"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try encoder.encode(draft)
        return request
    }
}

let benchmarks: @Sendable () -> Void = {
    let connect = Connect()
    let encoder = connect.configuration.jsonEncoder

    // Both sides must build the same request, or the comparison means nothing.
    do {
        let mine = try connect.urlRequest(for: TodoConnector.update(userId: 42, todoId: 7, draft: draft))
        let theirs = try Handwritten.update(userId: 42, todoId: 7, draft: draft, encoder: encoder)
        func parts(_ request: URLRequest) -> String {
            let components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            // JSONEncoder's key order varies from call to call: compare the decoded value.
            let body = request.httpBody.flatMap { try? JSONDecoder().decode(TodoDraft.self, from: $0) }
            return "\(request.httpMethod ?? "-") \(components.path) \(components.queryItems ?? []) "
                + "\(request.value(forHTTPHeaderField: "Content-Type") ?? "-") \(body.map { "\($0)" } ?? "-")"
        }
        if parts(mine) != parts(theirs) {
            fatalError("Connect built \(parts(mine)), Foundation \(parts(theirs))")
        }
    } catch {
        fatalError("building the benchmark request failed: \(error)")
    }

    // Raw figures: time and allocations per request (shown per request: scaling factor 1000).

    Benchmark("Build-Connect", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try connect.urlRequest(for: TodoConnector.update(userId: 42, todoId: 7, draft: draft)))
        }
    }

    Benchmark("Build-Foundation-baseline", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try Handwritten.update(userId: 42, todoId: 7, draft: draft, encoder: encoder))
        }
    }

    Benchmark("PathQuery-Connect", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try connect.urlRequest(for: TodoConnector.find(userId: 42, todoId: 7)))
        }
    }

    Benchmark("PathQuery-URLComponents-baseline", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Handwritten.find(userId: 42, todoId: 7))
        }
    }

    // What both path-and-query sides spend in Foundation whatever they do: parsing the finished
    // URL string (`URL(string:)` validates every component) and making the `URLRequest`.
    guard let finishedURL = try? connect.urlRequest(for: TodoConnector.find(userId: 42, todoId: 7)).url?.absoluteString
    else { fatalError("building the path-and-query request failed") }
    Benchmark("PathQuery-Foundation-floor", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(URLRequest(url: URL(string: finishedURL)!))
        }
    }

    Benchmark("JSONEncoder-alone", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(draft))
        }
    }

    // Ratios: both sides in the same iteration, in alternating order. Process CPU time rather than
    // wall time: the work is single-threaded, and CPU time leaves out the time the thread sat
    // preempted by other processes on this shared machine.

    let timeRatio = Ratio.metric("Connect/baseline time x1000", prefersLarger: false)
    let buildAlternation = Alternation()
    Benchmark(
        "Ratio-Build-Connect-over-Foundation",
        configuration: MicroBenchmark.configuration([timeRatio], ratios: [timeRatio])
    ) {
        benchmark in
        let (baseline, candidate) = try buildAlternation.run(
            baseline: {
                try Elapsed.measure {
                    for _ in benchmark.scaledIterations {
                        blackHole(try Handwritten.update(userId: 42, todoId: 7, draft: draft, encoder: encoder))
                    }
                }
            },
            candidate: {
                try Elapsed.measure {
                    for _ in benchmark.scaledIterations {
                        blackHole(
                            try connect.urlRequest(for: TodoConnector.update(userId: 42, todoId: 7, draft: draft)))
                    }
                }
            })
        benchmark.measurement(timeRatio, Ratio.permille(Double(candidate.cpu), over: Double(baseline.cpu)))
    }

    let pathAlternation = Alternation()
    Benchmark(
        "Ratio-PathQuery-Connect-over-URLComponents",
        configuration: MicroBenchmark.configuration([timeRatio], ratios: [timeRatio])
    ) {
        benchmark in
        let (baseline, candidate) = try pathAlternation.run(
            baseline: {
                Elapsed.measure {
                    for _ in benchmark.scaledIterations {
                        blackHole(Handwritten.find(userId: 42, todoId: 7))
                    }
                }
            },
            candidate: {
                try Elapsed.measure {
                    for _ in benchmark.scaledIterations {
                        blackHole(try connect.urlRequest(for: TodoConnector.find(userId: 42, todoId: 7)))
                    }
                }
            })
        benchmark.measurement(timeRatio, Ratio.permille(Double(candidate.cpu), over: Double(baseline.cpu)))
    }
}
