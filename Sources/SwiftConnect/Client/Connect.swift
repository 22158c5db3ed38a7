import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends the requests connectors describe and hands back futures of their results.
///
/// ```swift
/// Connect.default.request(TodoConnector.get(id: 123), debugResponse: true)
///     .decoded(toType: Todo.self)
///     .observe { result in
///         switch result {
///         case .success(let todo): print(todo)
///         case .failure(let error): print(error)
///         }
///     }
/// ```
///
/// Each request runs through one pipeline: the connector is built into a `URLRequest` (a mistake
/// fails the future with ``ConnectError/invalidRequest(_:)`` and nothing is sent), the
/// middleware adapts it, the transport sends it, statuses outside the connector's acceptable range
/// go to the ``ErrorHandlerProtocol``, and the middleware may retry a failure.
///
/// A `Connect` may be released while its requests are in flight: they complete as usual.
public final class Connect: Sendable {
    /// A shared instance with the default middleware, error handler and configuration.
    public static let `default` = Connect()

    /// Adapts every request and decides retries.
    public let middleware: any ConnectMiddlewareProtocol
    /// Turns error responses into errors.
    public let errorHandler: any ErrorHandlerProtocol
    /// Session, queue, coders, default headers and logger.
    public let configuration: ConnectConfiguration
    /// What sends the requests.
    public let transport: any Transport

    private let inFlight = RequestRegistry()
    /// ``transport`` when it is the library's own, cast once here rather than on every request: a
    /// cast from `any Transport` to a class goes through the runtime's dynamic cast.
    private let sessionTransport: URLSessionTransport?
    /// The headers every build starts from: the headers a ``URLSessionTransport`` took out of its
    /// session's `httpAdditionalHeaders`, then ``ConnectConfiguration/defaultHeaders``.
    let defaultHeaders: [HTTPHeader]

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - middleware: Adapts and retries requests; the default passes them through.
    ///   - errorHandler: Turns error responses into errors; the default reads `msg`, `message`, `messge`,
    ///     `error` (with an OAuth `error_description`), `err` or `detail` (or a problem's `title`) from JSON bodies.
    ///   - configuration: Session, callback queue, JSON coders, default headers, logger.
    ///   - transport: What sends requests; `nil` (the default) makes a ``URLSessionTransport`` from
    ///     `configuration.sessionConfiguration`. Pass a ``StubTransport`` in tests.
    public init(
        middleware: any ConnectMiddlewareProtocol = ConnectMiddleware(),
        errorHandler: any ErrorHandlerProtocol = ErrorHandler(),
        configuration: ConnectConfiguration = .default,
        transport: (any Transport)? = nil
    ) {
        self.middleware = middleware
        self.errorHandler = errorHandler
        self.configuration = configuration
        let transport =
            transport
            ?? URLSessionTransport(
                configuration: configuration.sessionConfiguration, handsOffBusyResponses: true, liftingHeaders: true
            )
        self.transport = transport
        sessionTransport = transport as? URLSessionTransport
        let sessionHeaders = sessionTransport?.sessionHeaders ?? []
        defaultHeaders = sessionHeaders + configuration.defaultHeaders
    }

    // MARK: Requests

    /// Sends the request `request` describes; the future delivers the response body.
    ///
    /// - Parameters:
    ///   - request: The connector to call.
    ///   - debugResponse: Logs the request as a cURL command (credentials redacted), then the
    ///     status, the elapsed time and the pretty-printed body, through the configuration's logger
    ///     (as every request does when the configuration's `debugResponses` is on).
    /// - Returns: A future of the body, on the configuration's callback queue.
    public func request(_ request: Connector, debugResponse: Bool = false) -> Future<Data> {
        let debugResponse = debugResponse || configuration.debugResponses
        let built: URLRequest
        do {
            built = try urlRequest(for: request)
        } catch {
            return failure(error, debugResponse: debugResponse).data
        }
        let pipeline = pipeline(for: request, debugResponse: debugResponse)
        let response = pendingResponse(for: pipeline)
        // What `data` makes, but completed with the response's future by the request's promise
        // rather than by an observer of it (see `RequestPromise`).
        let body = response.derived(Data.self)
        body.responseSource = response
        send(built, pipeline: consume pipeline, completing: response, body: body)
        return body
    }

    /// Sends the request `connector` describes; the future delivers the whole ``Response`` —
    /// status code, headers and body.
    ///
    /// - Parameters:
    ///   - connector: The connector to call.
    ///   - debugResponse: Logs the request and response (see ``request(_:debugResponse:)``).
    /// - Returns: A future of the response, on the configuration's callback queue.
    public func response(_ connector: Connector, debugResponse: Bool = false) -> Future<Response> {
        let debugResponse = debugResponse || configuration.debugResponses
        let request: URLRequest
        do {
            request = try urlRequest(for: connector)
        } catch {
            return failure(error, debugResponse: debugResponse)
        }
        return send(request, pipeline: pipeline(for: connector, debugResponse: debugResponse))
    }

    /// The future of a request that could not be built.
    private func failure(_ error: any Error, debugResponse: Bool) -> Future<Response> {
        if debugResponse { configuration.logger.log("SwiftConnect: \(error)") }
        return Future(result: .failure(error), callbackQueue: configuration.callbackQueue, context: futureContext)
    }

    /// The pipeline for one of `connector`'s requests.
    func pipeline(for connector: Connector, debugResponse: Bool) -> Pipeline {
        let middleware = connector.middleware.resolved(with: middleware)
        // Names only a name check would miss: `Authorization` and the like need no entry. (Class
        // casts: a cast to the protocol costs a conformance lookup on every request.)
        var credentialHeaders: Set<String> = []
        var directTransport: URLSessionTransport? = nil
        if let composed = middleware as? ConnectMiddleware {
            if !composed.adapters.isEmpty {
                credentialHeaders = composed.credentialHeaderNames
            } else if composed.retriers.isEmpty, composed.interceptors.isEmpty {
                directTransport = sessionTransport
            }
        } else if let authenticator = middleware as? TokenAuthenticator {
            credentialHeaders = authenticator.credentialHeaderNames
        }
        // The headers a token authenticator sets (only it names any) that the connector sets
        // itself, which the authenticator then leaves alone.
        let authenticatorHeaders = credentialHeaders
        var connectorHeaderNames: Set<String> = []
        if let token = RequestBuilder.authorizationToken(of: connector) {
            let name = token.header.name.lowercased()
            credentialHeaders.insert(name)
            if authenticatorHeaders.contains(name) { connectorHeaderNames.insert(name) }
        }
        if !authenticatorHeaders.isEmpty {
            for header in connector.headers {
                let name = header.name.lowercased()
                if authenticatorHeaders.contains(name) { connectorHeaderNames.insert(name) }
            }
        }
        if !credentialHeaders.isEmpty {
            credentialHeaders = credentialHeaders.filter { !DebugDescription.isSensitive(name: $0) }
        }
        // Built whole, in one initializer call: built and then changed field by field, the struct
        // was copied once more, a retain and a release for each of its references.
        return Pipeline(
            middleware: middleware, errorHandler: errorHandler,
            transport: transport, logger: debugResponse ? configuration.logger : nil,
            acceptableStatusCodes: connector.acceptableStatusCodes, isIdempotent: connector.isIdempotent,
            validators: connector.validators ?? configuration.validators,
            redirectPolicy: connector.redirectPolicy ?? configuration.redirectPolicy, sleep: configuration.sleep,
            credentialHeaders: credentialHeaders, connectorHeaderNames: connectorHeaderNames,
            decoder: SendableCoder(connector.jsonDecoder ?? configuration.jsonDecoder),
            directTransport: directTransport)
    }

    /// Builds the `URLRequest` `connector` describes, with the connector's encoder or this
    /// client's, and this client's default headers and timeout — what
    /// ``request(_:debugResponse:)`` sends before middleware. The headers of the session
    /// configuration's `httpAdditionalHeaders` are among the headers, below the default headers:
    /// they are sent with the request rather than by the session, so that the build checks them
    /// and a redirect to another origin drops the credentials among them (`Authorization`,
    /// `Cookie`, `X-API-Key`, …).
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)``.
    public func urlRequest(for connector: Connector) throws -> URLRequest {
        try RequestBuilder.makeRequest(
            for: connector, encoder: configuration.jsonEncoder, defaultHeaders: defaultHeaders,
            timeout: configuration.timeoutInterval, baseURL: configuration.baseURL)
    }

    /// The request `connector` describes as a `curl` command, as debug output logs it, without
    /// sending anything (Alamofire's `cURLDescription()`): the request ``urlRequest(for:)``
    /// builds — before middleware, so the headers adapters add are not in it — with credentials
    /// redacted as in debug output (the connector's token, whatever its header; secret-looking
    /// query items, form fields and JSON keys) and a text body past 64 KiB cut, with a line saying so.
    ///
    /// ```swift
    /// print(try connect.cURLDescription(for: TodoConnector.get(id: 1)))
    /// // $ curl -v \
    /// //     -X GET \
    /// //     "https://jsonplaceholder.typicode.com/todos/1"
    /// ```
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)``, as ``urlRequest(for:)`` does.
    public func cURLDescription(for connector: Connector) throws -> String {
        let request = try urlRequest(for: connector)
        let credentialHeaders = pipeline(for: connector, debugResponse: false).credentialHeaders
        return DebugDescription.curl(request, credentialHeaders: credentialHeaders, framed: false)
    }

    /// Cancels every request this client has in flight; each future fails with
    /// ``ConnectError/cancelled``.
    public func cancelAllRequests() {
        inFlight.cancelAll()
    }

    // MARK: Pipeline

    var futureContext: FutureContext { FutureContext(decoder: configuration.jsonDecoder) }

    /// Runs a built request through middleware, transport, validation and retries. Consumes the
    /// pipeline, as the `send` it calls does.
    func send(_ request: URLRequest, pipeline: consuming Pipeline) -> Future<Response> {
        let future = pendingResponse(for: pipeline)
        send(request, pipeline: consume pipeline, completing: future, body: nil)
        return future
    }

    /// The future of the response to a request sent with `pipeline`, pending.
    private func pendingResponse(for pipeline: Pipeline) -> Future<Response> {
        Future<Response>(
            callbackQueue: configuration.callbackQueue, context: FutureContext(decoder: pipeline.jsonDecoder))
    }

    /// Sends `request`, completing `future` with the outcome and then `body`, if any, with the
    /// response's body.
    ///
    /// The pipeline is consumed, so the caller's is handed on rather than copied and then
    /// released: a copy costs a retain and a release for each of its references.
    private func send(
        _ request: URLRequest, pipeline: consuming Pipeline, completing future: Future<Response>, body: Future<Data>?
    ) {
        let registry = inFlight
        // A direct exchange is the request's promise. It leaves the registry itself, as it
        // completes the promise or is cancelled: no observer to register, which would cost a
        // closure and a work item per request. It is what cancelling the future cancels from
        // before its transfer starts.
        if let transport = pipeline.directTransport, pipeline.uploadBody == nil {
            DirectExchange.start(
                request, pipeline: consume pipeline, transport: transport, response: future, body: body,
                registry: registry)
            return
        }
        let promise = RequestPromise(response: future, body: body)
        let slot = registry.insert(promise.outermost)
        // Out of the registry once it completes, however that happens.
        let outermost = promise.outermost
        future.register(on: nil) {
            registry.remove(slot, holding: outermost)
            return .empty
        }
        // Cancelled before the task below can be told (while it runs at once, up to its first
        // suspension), the future itself stops the pipeline.
        var running = pipeline
        running.future = future
        let pipeline = running
        let run: @isolated(any) @Sendable () async -> Void = {
            let result = await pipeline.run(request)
            if let progress = pipeline.uploadProgress {
                progress.finish(succeeded: (try? result.get()) != nil)
                progress.afterDeliveries { promise.complete(with: result) }
            } else {
                promise.complete(with: result)
            }
        }
        // The pipeline starts on this thread — adapters, until one suspends, and handing the
        // request to the transport — rather than after a hop to another thread.
        // Not on URLSession's own queue (a validator or error handler of another request sending
        // this one): the transport would create its task there, which waits on that queue.
        let task: Task<Void, Never>
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *), !SessionQueue.isCurrent {
            task = Task.immediate(operation: run)
        } else {
            task = Task(operation: run)
        }
        if let progress = pipeline.uploadProgress {
            // An upload's progress ends with the caller's `cancel()`, not when URLSession is done.
            future.setCancelAction {
                progress.cancel()
                task.cancel()
            }
        } else {
            future.setCancelAction { task.cancel() }
        }
    }
}

/// The futures of a client's requests in flight, for ``Connect/cancelAllRequests()``: for each,
/// the one handed to the caller (the body's, for ``Connect/request(_:debugResponse:)``), whose
/// cancelling reaches the response's and the request.
///
/// Each holds a slot of its own until its request completes, and a slot freed is reused: no
/// hashing and, once the slots have grown to the number in flight, no allocation per request.
/// When every slot is free again and there are more than ``keptSlots`` of them, they are let go,
/// so that a burst of thousands of requests does not keep its slots for the client's lifetime.
final class RequestRegistry: Sendable {
    private struct Slots {
        var futures: [(any CancellableFuture)?] = []
        var free: [Int] = []
    }

    /// How many free slots are kept for the next requests when none is in use.
    static let keptSlots = 64

    private let slots = LockedBox(Slots())

    /// The number of slots, in use or free.
    var slotCount: Int { slots.withLock { $0.futures.count } }

    /// Adds `future`; returns its slot.
    func insert(_ future: any CancellableFuture) -> Int {
        slots.withLock { slots in
            if let slot = slots.free.popLast() {
                slots.futures[slot] = future
                return slot
            }
            slots.futures.append(future)
            return slots.futures.count - 1
        }
    }

    /// Frees `slot` if it still holds `future`: removing twice, or after the slot went to another
    /// request, does nothing.
    func remove(_ slot: Int, holding future: any CancellableFuture) {
        slots.withLock { slots in
            // A slot past the end was let go with the others since this request left it.
            guard slot < slots.futures.count, slots.futures[slot] === future else { return }
            slots.futures[slot] = nil
            slots.free.append(slot)
            if slots.free.count == slots.futures.count, slots.futures.count > Self.keptSlots { slots = Slots() }
        }
    }

    /// Cancels every future registered now. Each leaves the registry as its request completes, as
    /// it would without this call.
    func cancelAll() {
        let futures = slots.withLock { $0.futures.compactMap { $0 } }
        for future in futures { CancelTarget.future(future).cancel() }
    }
}
