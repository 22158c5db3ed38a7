import Foundation

/// What completes the futures of one request a `Connect` sends: its response's and, for
/// ``Connect/request(_:debugResponse:)``, its body's, derived from the response's.
///
/// Completing the body's future here, right after the response's, spares the observer that
/// ``Future/data`` registers — a closure, its context and a work item per request.
///
/// Released before it completes them, it fails them with ``ConnectError/abandoned``, as a
/// ``Promise`` does.
///
/// Not final: a ``DirectExchange`` is the promise of the request it sends, one object a request
/// instead of two. (`@unchecked Sendable`, as a class that is not final cannot be checked: its
/// state and that of its subclass are constants, each `Sendable`.)
class RequestPromise: @unchecked Sendable {
    final let response: Future<Response>
    /// The body's future, if the caller asked for the body alone; its ``Future/responseSource``
    /// is `response`.
    final let body: Future<Data>?

    init(response: Future<Response>, body: Future<Data>?) {
        self.response = response
        self.body = body
    }

    deinit {
        response.abandon()
        body?.abandon()
    }

    /// The future the caller holds: the body's if there is one, else the response's. Cancelling
    /// it cancels the request.
    final var outermost: any CancellableFuture {
        Self.outermost(response: response, body: body)
    }

    /// The future the caller holds of a request with these futures, for a subclass to register
    /// before it is initialised.
    static func outermost(response: Future<Response>, body: Future<Data>?) -> any CancellableFuture {
        if let body { return body }
        return response
    }

    /// Completes the response's future, then the body's, each unless it has completed.
    final func complete(with result: Result<Response, any Error>) {
        response.complete(with: result)
        guard let body else { return }
        switch result {
        case .success(let response): body.complete(with: .success(response.data))
        case .failure(let error): body.complete(with: .failure(error))
        }
    }
}
