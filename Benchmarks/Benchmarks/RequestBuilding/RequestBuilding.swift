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

/// The least any builder can do for the path-and-query request: one pass into one buffer that
/// knows the request's shape in advance (no connector, no template, no parameter list, no checks),
/// encoding the same bytes as Connect, then Foundation's floor. A lower bound for reference, not
/// a baseline: it shows how much of Connect's time is its own work.
enum SinglePurpose {
    /// RFC 3986 unreserved.
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") - 10 + nibble
    }

    @inline(__always)
    static func write(_ string: String, encoded: Bool, to output: UnsafeMutablePointer<UInt8>, at index: inout Int) {
        var string = string
        string.withUTF8 { bytes in
            for byte in bytes {
                if !encoded || isUnreserved(byte) {
                    output[index] = byte
                    index += 1
                } else {
                    output[index] = UInt8(ascii: "%")
                    output[index + 1] = hexDigit(byte >> 4)
                    output[index + 2] = hexDigit(byte & 0x0F)
                    index += 3
                }
            }
        }
    }

    static func find(userId: Int, todoId: Int) -> URLRequest {
        // 256 bytes hold this request's URL with room to spare.
        let string = String(unsafeUninitializedCapacity: 256) { buffer in
            let output = buffer.baseAddress!
            var index = 0
            write("https://api.example.com/v1/users/", encoded: false, to: output, at: &index)
            write(String(userId), encoded: true, to: output, at: &index)
            write("/todos/", encoded: false, to: output, at: &index)
            write(String(todoId), encoded: true, to: output, at: &index)
            write("?", encoded: false, to: output, at: &index)
            write("fields", encoded: true, to: output, at: &index)
            write("=", encoded: false, to: output, at: &index)
            write("id,title", encoded: true, to: output, at: &index)
            write("&", encoded: false, to: output, at: &index)
            write("expand", encoded: true, to: output, at: &index)
            write("=", encoded: false, to: output, at: &index)
            write("owner", encoded: true, to: output, at: &index)
            write("&", encoded: false, to: output, at: &index)
            write("q", encoded: true, to: output, at: &index)
            write("=", encoded: false, to: output, at: &index)
            write("swift 6", encoded: true, to: output, at: &index)
            return index
        }
        return URLRequest(url: URL(string: string)!)
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

    // The lower bound above: what code written for this one request spends.
    guard SinglePurpose.find(userId: 42, todoId: 7).url == URL(string: finishedURL) else {
        fatalError("the single-purpose builder built \(SinglePurpose.find(userId: 42, todoId: 7).url!)")
    }
    Benchmark("PathQuery-SinglePurpose-floor", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(SinglePurpose.find(userId: 42, todoId: 7))
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

    /// A benchmark recording `metric`: `candidate`'s CPU time over `baseline`'s, in thousandths.
    /// Each side runs the iteration's `scaledIterations` itself, so the loops stay in its code.
    func cpuRatio(
        _ name: String, _ metric: BenchmarkMetric, baseline: @escaping (Benchmark) throws -> Void,
        candidate: @escaping (Benchmark) throws -> Void
    ) {
        let alternation = Alternation()
        Benchmark(name, configuration: MicroBenchmark.configuration([metric], ratios: [metric])) { benchmark in
            let (baselineTime, candidateTime) = try alternation.run(
                baseline: { try Elapsed.measure { try baseline(benchmark) } },
                candidate: { try Elapsed.measure { try candidate(benchmark) } })
            benchmark.measurement(metric, Ratio.permille(Double(candidateTime.cpu), over: Double(baselineTime.cpu)))
        }
    }

    let timeRatio = Ratio.metric("Connect/baseline time x1000", prefersLarger: false)
    cpuRatio(
        "Ratio-Build-Connect-over-Foundation", timeRatio,
        baseline: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try Handwritten.update(userId: 42, todoId: 7, draft: draft, encoder: encoder))
            }
        },
        candidate: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try connect.urlRequest(for: TodoConnector.update(userId: 42, todoId: 7, draft: draft)))
            }
        })

    cpuRatio(
        "Ratio-PathQuery-Connect-over-URLComponents", timeRatio,
        baseline: { benchmark in
            for _ in benchmark.scaledIterations { blackHole(Handwritten.find(userId: 42, todoId: 7)) }
        },
        candidate: { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try connect.urlRequest(for: TodoConnector.find(userId: 42, todoId: 7)))
            }
        })

    // The single-purpose builder against the same baseline, in the same way: the lower bound for
    // the path-and-query ratio (no target; named apart from the judged ratios).
    cpuRatio(
        "Reference-PathQuery-SinglePurpose-over-URLComponents",
        Ratio.metric("SinglePurpose/baseline time x1000", prefersLarger: false),
        baseline: { benchmark in
            for _ in benchmark.scaledIterations { blackHole(Handwritten.find(userId: 42, todoId: 7)) }
        },
        candidate: { benchmark in
            for _ in benchmark.scaledIterations { blackHole(SinglePurpose.find(userId: 42, todoId: 7)) }
        })
}
