import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request's way through middleware, transport, redirects, validation and retries.
struct Pipeline: Sendable {
    let middleware: any ConnectMiddlewareProtocol
    let errorHandler: any ErrorHandlerProtocol
    let transport: any Transport
    /// Set when the request asked for debug output.
    let logger: (any ConnectLogger)?
    let acceptableStatusCodes: Range<Int>
    let isIdempotent: Bool
    let validators: [ResponseValidator]
    let redirectPolicy: RedirectPolicy
    let sleep: @Sendable (TimeInterval) async throws -> Void
    /// Names, lowercased, that carry this request's credentials beyond those a name marks as one
    /// (``DebugDescription/isSensitive(name:credentialHeaders:)``): the connector's token header
    /// and the middleware's (``CredentialHeaderNaming``). Treated as `Authorization` is.
    var credentialHeaders: Set<String> = []
    /// The names, lowercased, of the headers a ``TokenAuthenticator`` among the adapters sets that
    /// the connector sets itself — with its token, or in its `headers` — which the authenticator
    /// then leaves as they are (``ConnectorHeaders``).
    var connectorHeaderNames: Set<String> = []
    /// The configuration's decoder, for validators and error handlers that decode
    /// (``ResponseValidator/basicResponse(_:decoder:validate:)``, ``DecodingErrorHandler``); `nil`
    /// for a plain one.
    var jsonDecoder: JSONDecoder? { decoder?.coder }
    /// ``jsonDecoder``, boxed: Apple's Foundation makes `JSONDecoder` `Sendable` only from macOS 13
    /// and iOS 16.
    var decoder: SendableCoder<JSONDecoder>? = nil
    /// An upload's body, sent with every attempt and kept on `307`/`308` hops; `nil` otherwise.
    var uploadBody: UploadBody? = nil
    /// Where an upload reports progress.
    var uploadProgress: UploadProgressReporter? = nil
    /// The future the run's result completes, set by `Connect` for the run's task: cancelled, it
    /// stops the run as the task's cancellation does. A task started with `Task.immediate` runs up
    /// to its first suspension — adapters that do not suspend, the transport starting its
    /// transfer — before `Connect` can pass the future's cancellation on to it; meanwhile only
    /// the future knows (a `cancelAllRequests()` from another thread, say).
    var future: Future<Response>? = nil
    /// The library's own transport, when the middleware has nothing to run (no adapters,
    /// retriers or interceptors) and a ``DirectExchange`` may send the request without a task.
    var directTransport: URLSessionTransport? = nil

    /// Whether the request was cancelled: its task, or its future before the task could learn of
    /// it. The future completes only with the run's result, after the run, so until then a
    /// completed one was cancelled.
    var isCancelled: Bool { Task.isCancelled || future?.isPending == false }

    /// Attempts in all, whatever retriers answer, so that no combination of them loops forever.
    static let attemptLimit = 20

    func run(_ request: URLRequest) async -> Result<Response, any Error> {
        // Where credentials may go: the first request sent, as the adapters left it (an `https`
        // upgrade, a staging host: the caller's own choice), set by its attempt. Should a retrier
        // redirect before any request got past the adapters, the URL the request was built for.
        let builtURL = request.url
        var origin: URL? = nil
        var request = request
        var number = 0
        var statuses: [Int?] = []
        while true {
            number += 1
            if isCancelled { return .failure(ConnectError.cancelled) }
            if origin == nil, request.url != builtURL { origin = builtURL }
            let outcome = await attemptOnce(request, credentialOrigin: &origin)
            guard case .failure(let error) = outcome.result else { return outcome.result }
            if isCancelled || (error as? ConnectError)?.isCancellation == true {
                return .failure(ConnectError.cancelled)
            }
            guard number < Self.attemptLimit else { return outcome.result }
            let attempt = FailedAttempt(
                request: request, error: error, response: outcome.response, number: number,
                isIdempotent: isIdempotent, earlierStatusCodes: statuses)
            statuses.append(outcome.response?.statusCode)
            let decision = await ConnectorHeaders.$names.withValue(connectorHeaderNames) {
                await middleware.retry(attempt)
            }
            switch decision {
            case .retry:
                continue
            case .retryWithDelay(let delay):
                do {
                    try await sleep(delay)
                } catch {
                    // Cancelled while waiting, or a sleep of the configuration's that failed: its
                    // error, which is not a cancellation unless the request was cancelled.
                    return .failure(isCancelled ? ConnectError.cancelled : error)
                }
            case .redirect(let url):
                request.url = url  // method and body kept; attemptOnce keeps credentials to `origin`
                do {
                    request = try request.checkedForSending(keepingContentLength: uploadBody != nil)
                } catch {
                    return .failure(error)
                }
            case .doNotRetry:
                return outcome.result
            case .doNotRetryWithError(let error):
                return .failure(error)
            }
        }
    }

    /// Adapts and sends `request` once. Credential headers, and credential query items the
    /// adapters add, go only to `credentialOrigin`, the origin of the first request sent — the one
    /// the request was built for, or where the adapters sent it — whatever adapters add after a
    /// retrier's `.redirect(to:)`. `nil` before the first attempt, which sets it.
    private func attemptOnce(_ request: URLRequest, credentialOrigin: inout URL?) async
        -> (result: Result<Response, any Error>, response: Response?)
    {
        var adapted: URLRequest
        do {
            adapted = try await ConnectorHeaders.$names.withValue(connectorHeaderNames) {
                try await middleware.adapt(request)
            }
        } catch {
            // An adapter's error passes through as it is: a `CancellationError` of its own is not
            // the request being cancelled, which `run` tells by its task (or future).
            return (.failure(isCancelled ? ConnectError.cancelled : error), nil)
        }
        // Adapters write headers and timeouts the build never saw; without adapters, the request
        // is the one the build checked.
        if (middleware as? ConnectMiddleware)?.adapters.isEmpty != true {
            do {
                adapted = try adapted.checkedForSending(keepingContentLength: uploadBody != nil)
            } catch {
                return (.failure(error), nil)
            }
        }
        // Cancelled while an adapter ran (one that ignores cancellation): nothing is sent.
        if isCancelled { return (.failure(ConnectError.cancelled), nil) }
        if credentialOrigin == nil { credentialOrigin = adapted.url }
        adapted = RedirectSafety.removingCredentials(
            from: adapted, adaptedFrom: request, unlessSentTo: credentialOrigin, credentialHeaders: credentialHeaders)
        logger?.log(DebugDescription.curl(adapted, credentialHeaders: credentialHeaders))
        let response: Response
        do {
            response = try await sendFollowingRedirects(adapted, credentialOrigin: credentialOrigin)
        } catch {
            return (.failure(error), (error as? ConnectError)?.response)
        }
        do {
            return (validated(response, decision: try await middleware.intercept(response)), response)
        } catch {
            return (.failure(error), response)
        }
    }

    /// Checks a response the interceptors let through: a status outside the acceptable range goes
    /// to the error handler (unless an interceptor accepted the response), then the validators run.
    func validated(_ response: Response, decision: InterceptorDecision) -> Result<Response, any Error> {
        if case .proceed = decision, !acceptableStatusCodes.contains(response.statusCode),
            let error = handledError(response)
        {
            return .failure(error)
        }
        for validator in validators {
            do {
                try validator.validate(response, decoder: jsonDecoder ?? JSONDecoder())
            } catch {
                return .failure(ConnectError.validationFailed(response, underlying: error))
            }
        }
        return .success(response)
    }

    /// The error handler's answer for an unacceptable response; one that decodes gets the
    /// configuration's decoder.
    private func handledError(_ response: Response) -> (any Error)? {
        if let jsonDecoder, let decoding = errorHandler as? ConfigurationDecodingErrorHandler {
            return decoding.handle(response, configurationDecoder: jsonDecoder)
        }
        return errorHandler.handle(response)
    }

    /// Sends `request` and follows redirects as the policy says, with ``RedirectSafety``'s rules
    /// (the adapters do not run again on a hop, so credentials they add never reach another origin).
    /// A policy's `.followWith` request keeps credential headers only to `credentialOrigin`, the
    /// origin of the first request sent.
    private func sendFollowingRedirects(_ request: URLRequest, credentialOrigin: URL?) async throws -> Response {
        var current = request
        var uploadBody = self.uploadBody
        var hops = 0
        while true {
            let start = DispatchTime.now()
            let outcome: Result<(Data, HTTPURLResponse), any Error>
            do {
                if let uploadBody {
                    let reporter = uploadProgress
                    outcome = .success(
                        try await transport.send(
                            current, body: uploadBody, progress: { reporter?.report(bytesSent: $0.bytesSent) }))
                } else {
                    outcome = .success(try await transport.send(current))
                }
            } catch {
                outcome = .failure(error)
            }
            let response = try self.response(to: current, from: outcome, since: start)
            let next: URLRequest
            switch try hop(after: response, hops: &hops) {
            case .done(let response):
                return response
            case .next(let request):
                next = request
            case .ask(let redirect, let decide):
                switch await decide(redirect) {
                case .follow: next = redirect.proposedRequest
                case .followWith(let request):
                    // The upload's body goes on only with its method (below), and its
                    // `Content-Length` only with the body.
                    next = try RedirectSafety.request(
                        chosen: request, credentialOrigin: credentialOrigin, credentialHeaders: credentialHeaders,
                        keepingContentLength: uploadBody != nil && request.httpMethod == current.httpMethod)
                case .stop: return response
                }
            }
            if isCancelled { throw ConnectError.cancelled }
            logger?.log(DebugDescription.curl(next, credentialHeaders: credentialHeaders))
            // RedirectSafety turns the request into a GET without a body exactly when it changes
            // the method (303, or POST on 301/302); the upload body goes with it.
            if next.httpMethod != current.httpMethod { uploadBody = nil }
            current = next
        }
    }

    /// Turns what the transport returned for `request` into a ``Response``, logging it (or the
    /// failure, classified) when the request asked for debug output.
    func response(
        to request: URLRequest, from outcome: Result<(Data, HTTPURLResponse), any Error>, since start: DispatchTime
    ) throws -> Response {
        switch outcome {
        case .success(let (data, httpResponse)):
            let response = Response(request: request, httpResponse: httpResponse, data: data, decoder: jsonDecoder)
            logger?.log(
                DebugDescription.response(
                    response, elapsed: Self.seconds(since: start), credentialHeaders: credentialHeaders))
            return response
        case .failure(let error):
            let error = Self.classify(error)
            logger?.log(DebugDescription.failure(request, error: error, elapsed: Self.seconds(since: start)))
            throw error
        }
    }

    /// Where a response leads under the redirect policy.
    enum Hop {
        /// It is the answer: not a redirect, or one the policy does not follow.
        case done(Response)
        /// Send this request next (``RedirectSafety``'s rules already applied).
        case next(URLRequest)
        /// Ask the policy's closure first.
        case ask(Redirect, decide: @Sendable (Redirect) async -> RedirectDecision)
    }

    /// Where `response` leads; `hops` counts the redirects followed so far, this one included.
    ///
    /// - Throws: ``ConnectError/tooManyRedirects(_:)`` past the policy's `maximumHops`.
    func hop(after response: Response, hops: inout Int) throws -> Hop {
        guard
            let proposed = RedirectSafety.request(
                following: response.httpResponse, from: response.request, credentialHeaders: credentialHeaders)
        else {
            return .done(response)
        }
        hops += 1
        switch redirectPolicy.kind {
        case .doNotFollow:
            return .done(response)
        case .follow:
            guard hops <= redirectPolicy.maximumHops else { throw ConnectError.tooManyRedirects(response) }
            return .next(proposed)
        case .decide(let decide):
            guard hops <= redirectPolicy.maximumHops else { throw ConnectError.tooManyRedirects(response) }
            return .ask(Redirect(response: response, proposedRequest: proposed, hop: hops), decide: decide)
        }
    }

    /// A transport's failure: cancellations become ``ConnectError/cancelled``, other failures are
    /// wrapped in ``ConnectError/transport(underlying:)``, and library errors pass through.
    static func classify(_ error: any Error) -> any Error {
        if ConnectError.isCancellation(error) { return ConnectError.cancelled }
        if error is ConnectError { return error }
        return ConnectError.transport(underlying: error)
    }

    static func seconds(since start: DispatchTime) -> TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000_000
    }
}

/// The headers the connector of the request being adapted or retried sets itself, for middleware
/// that must not override them: a ``TokenAuthenticator`` sends a connector's own credentials as
/// they are. Bound by ``Pipeline`` around its adapters and retriers.
enum ConnectorHeaders {
    /// Their names, lowercased; empty outside a pipeline's adapters and retriers.
    @TaskLocal static var names: Set<String> = []
}
