import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request's way through middleware, transport, validation and retries.
struct Pipeline: Sendable {
    let middleware: any ConnectMiddlewareProtocol
    let errorHandler: any ErrorHandlerProtocol
    let transport: any Transport
    /// Set when the request asked for debug output.
    let logger: (any ConnectLogger)?
    let acceptableStatusCodes: Range<Int>
    /// An upload's body, sent with every attempt and kept on `307`/`308` hops; `nil` otherwise.
    var uploadBody: UploadBody? = nil
    /// Where an upload reports progress.
    var uploadProgress: UploadProgressReporter? = nil

    func run(_ request: URLRequest) async -> Result<Response, any Error> {
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled { return .failure(ConnectError.cancelled) }
            let outcome = await attemptOnce(request)
            guard case .failure(let error) = outcome.result else { return outcome.result }
            if Task.isCancelled || (error as? ConnectError)?.isCancellation == true {
                return .failure(ConnectError.cancelled)
            }
            switch await middleware.retry(request, dueTo: error, response: outcome.response, attempt: attempt) {
            case .retry:
                continue
            case .retryWithDelay(let delay):
                do {
                    try await Task.sleep(nanoseconds: UInt64(max(0, delay) * 1_000_000_000))
                } catch {
                    return .failure(ConnectError.cancelled)
                }
            case .doNotRetry:
                return outcome.result
            case .doNotRetryWithError(let error):
                return .failure(error)
            }
        }
    }

    private func attemptOnce(_ request: URLRequest) async -> (result: Result<Response, any Error>, response: Response?) {
        let adapted: URLRequest
        do {
            adapted = try await middleware.adapt(request)
        } catch {
            return (.failure(Self.classify(error, wrapTransport: false)), nil)
        }
        logger?.log(DebugDescription.curl(adapted))
        let response: Response
        do {
            response = try await sendFollowingRedirects(adapted)
        } catch {
            return (.failure(error), nil)
        }
        if acceptableStatusCodes.contains(response.statusCode) {
            return (.success(response), response)
        }
        if let error = errorHandler.handle(response) {
            return (.failure(error), response)
        }
        return (.success(response), response)
    }

    /// Sends `request` and follows redirects with ``RedirectSafety``'s rules (the adapters do not
    /// run again on a hop, so credentials they add never reach another origin).
    private func sendFollowingRedirects(_ request: URLRequest) async throws -> Response {
        var current = request
        var uploadBody = self.uploadBody
        var hops = 0
        while true {
            let start = DispatchTime.now()
            let data: Data
            let httpResponse: HTTPURLResponse
            do {
                if let uploadBody {
                    let reporter = uploadProgress
                    (data, httpResponse) = try await transport.send(
                        current, body: uploadBody, progress: { reporter?.report(bytesSent: $0.bytesSent) })
                } else {
                    (data, httpResponse) = try await transport.send(current)
                }
            } catch {
                let error = Self.classify(error, wrapTransport: true)
                logger?.log(DebugDescription.failure(current, error: error, elapsed: Self.seconds(since: start)))
                throw error
            }
            let response = Response(request: current, httpResponse: httpResponse, data: data)
            logger?.log(DebugDescription.response(response, elapsed: Self.seconds(since: start)))
            guard let next = RedirectSafety.request(following: httpResponse, from: current) else {
                return response
            }
            hops += 1
            if hops > RedirectSafety.maximumHops { throw ConnectError.tooManyRedirects(response) }
            if Task.isCancelled { throw ConnectError.cancelled }
            logger?.log(DebugDescription.curl(next))
            // RedirectSafety turns the request into a GET without a body exactly when it changes
            // the method (303, or POST on 301/302); the upload body goes with it.
            if next.httpMethod != current.httpMethod { uploadBody = nil }
            current = next
        }
    }

    /// Cancellations become ``ConnectError/cancelled``; other transport failures are wrapped in
    /// ``ConnectError/transport(underlying:)`` (when `wrapTransport`); library errors pass through.
    static func classify(_ error: any Error, wrapTransport: Bool) -> any Error {
        if error is CancellationError { return ConnectError.cancelled }
        if let urlError = error as? URLError, urlError.code == .cancelled { return ConnectError.cancelled }
        if error is ConnectError || !wrapTransport { return error }
        return ConnectError.transport(underlying: error)
    }

    static func seconds(since start: DispatchTime) -> TimeInterval {
        TimeInterval(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000_000
    }
}
