// The code samples of Usage.md, in the order they appear there, compiled in Swift 5 language mode
// as the usage document's readers write them, and in Swift 6 language mode as a new project does
// (UsageDocumentSwift6Tests compiles this file through a link). `DocumentationTests` checks that every ```swift block
// of Usage.md and README.md appears here, so the documents cannot drift from code that builds.
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let connect = Connect(middleware: ConnectMiddleware(), errorHandler: ErrorHandler())

enum TodoConnector: Connector {

    case get(id: Int)

    var baseURL: URL {
        return URL(string: "https://jsonplaceholder.typicode.com")!
    }

    var endpoint: String {
        switch self {
        case .get:
            return "/todos/{id}"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .get:
            return .get
        }
    }

    var headers: [HTTPHeader] {
        return []
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .get(let id):
            return Parameter.path(key: "id", value: "\(id)")
        }
    }
}

enum TodoAction: String {
    case update
}

enum AdvancedTodoConnector: Connector {

    case update(userId: Int, todoId: Int, action: TodoAction, object: Encodable)

    var baseURL: URL {
        return URL(string: "https://myserver.com")!
    }

    var endpoint: String {
        switch self {
        case .update:
            return "/users/{userId}/todos/{todoId}"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .update:
            return .put
        }
    }

    var headers: [HTTPHeader] {
        return []
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .update(let userId, let todoId, let action, let object):
            return CompositeParameters(
                .path(key: "userId", value: "\(userId)"),
                .path(key: "todoId", value: "\(todoId)"),
                .query(key: "action", value: action.rawValue),
                .jsonObject(value: object)
            )
        }
    }
}

enum AccountConnector: Connector {
    case login(username: String, password: String)
    case importXML(Data)

    var baseURL: URL { URL(string: "https://myserver.com/api/v1")! }

    var endpoint: String {
        switch self {
        case .login: return "/session"
        case .importXML: return "/imports"
        }
    }

    var method: HTTPMethod { .post }

    var parameters: ParametersRepresentable? {
        switch self {
        case .login(let username, let password):
            return CompositeParameters(.form(key: "username", value: username), .form(key: "password", value: password))
        case .importXML(let xml):
            return Parameter.data(xml, contentType: "application/xml")
        }
    }
}

struct APIKey: ParametersRepresentable {
    let key: String

    func apply(to parameters: inout RequestParameters) throws {
        parameters.appendQueryItem(name: "api_key", value: key)
    }
}

enum SearchConnector: Connector {
    case search(term: String)

    var baseURL: URL { URL(string: "https://myserver.com")! }
    var endpoint: String { "/search" }

    var parameters: ParametersRepresentable? {
        switch self {
        case .search(let term):
            return CompositeParameters([APIKey(key: "k-123"), Parameter.query(key: "q", value: term)])
        }
    }
}

enum ProfileConnector: Connector, AuthorizedConnector {
    case me(token: String)
    case publicProfile(id: Int)

    var baseURL: URL { URL(string: "https://myserver.com")! }

    var endpoint: String {
        switch self {
        case .me: return "/me"
        case .publicProfile: return "/profiles/{id}"
        }
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .me: return nil
        case .publicProfile(let id): return Parameter.path(key: "id", value: "\(id)")
        }
    }

    var authorizationToken: AuthorizationToken? {
        switch self {
        case .me(let token): return .bearer(token: token)
        case .publicProfile: return nil
        }
    }
}

struct Todo: Codable {
    let userId: Int
    let id: Int
    let title: String
    let completed: Bool
}

func printTodo() {
    Connect.default.request(TodoConnector.get(id: 123), debugResponse: true).decoded(toType: Todo.self).observe { result in
        switch result {
        case .success(let todo):
            print(todo)
        case .failure(let error):
            print(error)
        }
    }
}

extension Connect {
    func todo(id: Int) -> Future<Todo> {
        request(TodoConnector.get(id: id)).decoded(toType: Todo.self)
    }
}

func chained(connect: Connect) {
    connect.request(TodoConnector.get(id: 1))
        .decoded(toType: Todo.self)
        .flatMap { todo in
            connect.request(AdvancedTodoConnector.update(userId: todo.userId, todoId: todo.id, action: .update, object: todo))
        }
        .decoded(toType: Todo.self, keyPath: "data.item")
        .map { $0.title }
        .recover { _ in "unknown" }
        .observe { result in
            print(result)
        }
}

func todoPair(connect: Connect) -> SwiftConnect.Future<(Todo, Todo)> {
    let first = connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self)
    let second = connect.request(TodoConnector.get(id: 2)).decoded(toType: Todo.self)
    first.whenFailure { _ in second.cancel() }
    return first.flatMap { one in second.map { two in (one, two) } }
}

func loadTodoPair(connect: Connect) async throws -> (Todo, Todo) {
    async let first = connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).value
    async let second = connect.request(TodoConnector.get(id: 2)).decoded(toType: Todo.self).value
    return try await (first, second)
}

func deleteTodo(connect: Connect) {
    connect.request(TodoConnector.get(id: 1)).decoded(toType: Empty.self).observe { result in
        print(result)
    }
}

func loadTodo() async throws -> Todo {
    try await Connect.default.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).value
}

@MainActor
final class TodoDetailModel {
    private(set) var todo: Todo?
    private(set) var failure: String?
    private var loading: Task<Void, Never>?

    /// Shows todo `id`; a load still running for the one shown before is cancelled, request and all.
    func show(id: Int, connect: Connect) {
        loading?.cancel()
        loading = Task {
            do {
                todo = try await connect.request(TodoConnector.get(id: id)).decoded(toType: Todo.self).value
                failure = nil
            } catch let error as ConnectError where error.isCancellation {
                // Replaced by a newer load: leave the screen to it.
            } catch {
                failure = error.localizedDescription
            }
        }
    }
}

func delayedAnswer() -> SwiftConnect.Future<Int> {
    let promise = Promise<Int>(callbackQueue: .global())
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
        promise.succeed(42)
    }
    return promise.future
}

func listPage(connect: Connect) {
    connect.response(TodoConnector.get(id: 1)).observe { result in
        guard case .success(let response) = result else { return }
        let total = response.headers["X-Total-Count"]
        print(response.statusCode, total ?? "unknown")
    }
}

extension MimeType {
    static let myAwesomeType = MimeType(rawValue: "awesome/type")
}

struct AlbumInfo: Encodable {
    let title: String
    let isPublic: Bool
}

enum MediaConnector: Connector {
    case avatar(userId: Int)
    case album(AlbumInfo)

    var baseURL: URL { URL(string: "https://myserver.com/api/v1")! }

    var endpoint: String {
        switch self {
        case .avatar: return "/users/{id}/avatar"
        case .album: return "/albums"
        }
    }

    var method: HTTPMethod { .post }

    var parameters: ParametersRepresentable? {
        switch self {
        case .avatar(let userId):
            return Parameter.path(key: "id", value: "\(userId)")
        case .album(let info):
            return Parameter.jsonObject(value: info)  // fields "title" and "isPublic" ("true" or "false")
        }
    }
}

func uploadAvatar(png: Data) {
    let avatar = File(name: "me.png", key: "avatar", mimeType: .png, data: png)
    Connect.default.upload(files: [avatar], to: MediaConnector.avatar(userId: 1)).observe { result in
        print(result)
    }
}

func uploadAlbum(photos: [URL], connect: Connect) -> SwiftConnect.Future<Data> {
    let files = photos.map { File(key: "photos", fileURL: $0) }
    let info = AlbumInfo(title: "Holiday", isPublic: true)
    return connect.upload(files: files, to: MediaConnector.album(info)) { progress in
        print("\(progress.bytesSent) of \(progress.totalBytes) bytes")
    }
}

func uploadVideo(at url: URL, connect: Connect) async throws -> Data {
    let task = connect.uploadTask(files: [File(key: "video", fileURL: url)], to: MediaConnector.album(AlbumInfo(title: "Clips", isPublic: false)))
    for await progress in task.progress {
        print(Int(progress.fractionCompleted * 100), "%")
    }
    return try await task.response.value
}

func uploadChunked(file: File, connect: Connect) -> SwiftConnect.Future<Data> {
    let options = UploadOptions(framing: .chunked, boundary: "test-boundary")
    return connect.upload(files: [file], to: MediaConnector.avatar(userId: 1), options: options)
}

func describeUploadFailure(_ error: Error) -> String {
    switch error as? ConnectError {
    case .invalidRequest(.fileNotFound(let url))?:
        return "no file at \(url.path)"
    case .uploadSourceChanged(let file, let detail)?:
        return "\(file.name) changed while uploading: \(detail)"
    default:
        return "\(error)"
    }
}

struct APIError: Error {
    let code: String
    let status: Int
}

struct APIErrorHandler: ErrorHandlerProtocol {
    func handle(response: [String: Any]) -> Error? {
        handle(response: response, statusCode: 0)
    }

    func handle(response: [String: Any], statusCode: Int) -> Error? {
        if statusCode == 404, response["optional"] as? Bool == true {
            return nil  // an expected miss: deliver the body as a success
        }
        return APIError(code: response["code"] as? String ?? "unknown", status: statusCode)
    }
}

let apiConnect = Connect(middleware: ConnectMiddleware(), errorHandler: APIErrorHandler())

func describe(_ error: Error) -> String {
    guard let error = error as? ConnectError else { return "\(error)" }
    if error.isCancellation { return "cancelled" }
    switch error {
    case .unacceptableStatus(let response, let message):
        return "HTTP \(response.statusCode): \(message ?? "no message")"
    case .decoding(let failure):
        return "bad payload at \(failure.codingPath ?? "top level"): \(failure.reason)"
    default:
        return error.description
    }
}

struct SigningAdapter: RequestAdapter {
    func adapt(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("client-42", forHTTPHeaderField: "X-Client-ID")
        return request
    }
}

struct RetryOnceOnServerError: RequestRetrier {
    func retry(_ attempt: FailedAttempt) async -> RetryResult {
        guard attempt.number < 2, let status = attempt.statusCode, status >= 500 else { return .doNotRetry }
        return .retryWithDelay(0.5)
    }
}

let resilientConnect = Connect(
    middleware: ConnectMiddleware(adapters: [SigningAdapter()], retriers: [RetryOnceOnServerError()]),
    errorHandler: ErrorHandler()
)

struct QuotaExceeded: Error {}

let observedConnect = Connect(
    middleware: ConnectMiddleware(
        adapters: [
            ClosureAdapter { request in
                print("→", request.httpMethod ?? "GET", request.url?.absoluteString ?? "")
                return request
            }
        ],
        interceptors: [
            ClosureInterceptor { response in
                if response.statusCode == 429 { throw QuotaExceeded() }
                return .proceed
            }
        ]
    ),
    errorHandler: ErrorHandler()
)

let keyedConnect = Connect(
    middleware: ConnectMiddleware(adapters: [
        QueryItemsAdapter([URLQueryItem(name: "api_key", value: "k-123")]),
        QueryItemsAdapter { request in
            [URLQueryItem(name: "ts", value: String(Int(Date().timeIntervalSince1970)))]
        },
    ]),
    errorHandler: ErrorHandler()
)

let retryingConnect = Connect(
    middleware: ConnectMiddleware(retriers: [RetryPolicy(maximumAttempts: 4, baseDelay: 0.25)]),
    errorHandler: ErrorHandler()
)

struct LoginReply: Decodable, Sendable {
    let accessToken: String
    let expiresIn: Double
}

enum AuthConnector: Connector {
    case refresh(refreshToken: String)

    var baseURL: URL { URL(string: "https://myserver.com")! }
    var endpoint: String { "/oauth/token" }
    var method: HTTPMethod { .post }
    var middleware: ConnectorMiddleware { .none }  // the refresh call itself carries no access token

    var parameters: ParametersRepresentable? {
        switch self {
        case .refresh(let refreshToken):
            return CompositeParameters(.form(key: "grant_type", value: "refresh_token"), .form(key: "refresh_token", value: refreshToken))
        }
    }
}

func makeAuthenticatedConnect(refreshToken: String) -> Connect {
    let plain = Connect()
    let authenticator = TokenAuthenticator(token: nil) { _ in
        let reply = try await plain.request(AuthConnector.refresh(refreshToken: refreshToken))
            .decoded(toType: LoginReply.self)
            .value
        return AccessToken(reply.accessToken, expiresAt: Date().addingTimeInterval(reply.expiresIn))
    }
    return Connect(middleware: authenticator, errorHandler: ErrorHandler())
}

struct MirrorOnOutage: RequestRetrier {
    let mirrorHost: String

    func retry(_ attempt: FailedAttempt) async -> RetryResult {
        guard attempt.statusCode == 503, let url = attempt.request.url,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return .doNotRetry }
        components.host = mirrorHost  // the same request: path and query as they were sent
        return components.url.map { .redirect(to: $0) } ?? .doNotRetry
    }
}

struct ServiceEnvelope: Decodable, Sendable {
    let status: String
}

struct ServiceError: Error {
    let status: String
}

func makeValidatingConnect() -> Connect {
    var configuration = ConnectConfiguration()
    configuration.validators = [
        .contentType(["application/json", "application/*+json"]),
        .requiredJSONKeys(["status", "data.id"]),
        .basicResponse(ServiceEnvelope.self) { envelope in
            guard envelope.status == "ok" else { throw ServiceError(status: envelope.status) }
        },
        .data { data in
            guard data.count < 10_000_000 else { throw ServiceError(status: "too large") }
        },
    ]
    return Connect(configuration: configuration)
}

struct APIFailure: Decodable, Error {
    let message: String
    let code: Int
}

let typedConnect = Connect(errorHandler: DecodingErrorHandler(APIFailure.self))

func makeConfiguredConnect() -> Connect {
    var configuration = ConnectConfiguration()
    configuration.baseURL = URL(string: "https://staging.myserver.com")  // instead of each connector's
    configuration.callbackQueue = DispatchQueue(label: "api.results")
    configuration.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
    configuration.jsonEncoder.keyEncodingStrategy = .convertToSnakeCase
    configuration.defaultHeaders = [.accept("application/json"), .userAgent("MyApp/1.0")]
    configuration.timeoutInterval = 15
    return Connect(configuration: configuration)
}

struct LegacyReport: Codable {
    var title: String
    var createdAt: Date
}

enum LegacyReportConnector: Connector {
    case report(id: Int)
    case file(LegacyReport)

    // Dates in seconds since 1970, unlike the rest of the API.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    var baseURL: URL { URL(string: "https://legacy.myserver.com")! }
    var endpoint: String {
        switch self {
        case .report: return "/reports/{id}"
        case .file: return "/reports"
        }
    }
    var method: HTTPMethod {
        switch self {
        case .report: return .get
        case .file: return .post
        }
    }
    var parameters: ParametersRepresentable? {
        switch self {
        case .report(let id): return Parameter.path(key: "id", value: String(id))
        case .file(let report): return Parameter.jsonObject(value: report)
        }
    }
    var jsonEncoder: JSONEncoder? { LegacyReportConnector.encoder }
    var jsonDecoder: JSONDecoder? { LegacyReportConnector.decoder }
}

func describeTodoRequest(connect: Connect) throws -> String {
    try connect.cURLDescription(for: TodoConnector.get(id: 1))
}

struct CollectingLogger: ConnectLogger {
    let sink: @Sendable (String) -> Void

    func log(_ message: String) {
        sink(message)
    }
}

/// Counts the requests in flight, for a network activity indicator.
nonisolated final class ActivityCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var running = 0

    var inFlight: Int { lock.withLock { running } }

    func begin() { lock.withLock { running += 1 } }
    func end() { lock.withLock { running -= 1 } }
}

extension Connect {
    /// `request(_:)`, counted from the call until its future completes, however it ends.
    func request(_ connector: Connector, countedBy activity: ActivityCounter) -> Future<Data> {
        activity.begin()
        return request(connector).observe { _ in activity.end() }
    }
}

func makeStubbedConnect() -> Connect {
    let transport = StubTransport { request in
        if request.url?.path == "/todos/1" {
            return StubTransport.Reply(statusCode: 200, body: Data(#"{"userId":1,"id":1,"title":"Write tests","completed":false}"#.utf8))
        }
        return StubTransport.Reply(statusCode: 404, body: Data(#"{"message":"not found"}"#.utf8))
    }
    return Connect(transport: transport)
}

func fetchTodoThroughAStub() async throws -> [URLRequest] {
    let transport = StubTransport { _ in
        try await Task.sleep(nanoseconds: 20_000_000)  // a slow server: cancelling the request ends the wait
        return StubTransport.Reply(statusCode: 204)
    }
    _ = try await Connect(transport: transport).request(TodoConnector.get(id: 7)).value
    return transport.requests  // what went out: URL, method, headers, body
}

/// A redirect decision kept in a function of its own: `RedirectPolicy.decide(stayOnOurHost)`.
@Sendable func stayOnOurHost(_ redirect: Redirect) async -> RedirectDecision {
    redirect.proposedRequest.url?.host == "api.myserver.com" ? .follow : .stop
}

func stayOnOurHostStopsAtAnotherHost() async -> Bool {
    let from = URL(string: "https://api.myserver.com/old")!
    let to = URL(string: "https://elsewhere.example/new")!
    let response = Response(
        request: URLRequest(url: from),
        httpResponse: HTTPURLResponse(
            url: from, statusCode: 302, httpVersion: nil, headerFields: ["Location": to.absoluteString])!,
        data: Data())
    let redirect = Redirect(response: response, proposedRequest: URLRequest(url: to), hop: 1)
    let decision = await stayOnOurHost(redirect)
    if case .stop = decision { return true }
    return false
}

nonisolated struct Profile: Codable, Sendable {
    let id: Int
    let name: String
}
