extension Future {
    /// The value, awaited: returns it on success and throws the error on failure.
    ///
    /// ```swift
    /// let todo = try await connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).value
    /// ```
    ///
    /// Cancelling the awaiting task cancels the future, and through it the HTTP request; the
    /// await then throws ``ConnectError/cancelled``. No callback queue is involved — but for an
    /// upload that reports progress (``Connect/uploadTask(files:to:options:debugResponse:)`` or a
    /// `progress:` handler), which completes only after its last progress callback has run on the
    /// callback queue: a queue that nothing drains (`.main` in a command-line tool, say) holds that
    /// await back.
    @inlinable
    public var value: Value {
        get async throws {
            try await result(awaiting: ()).get()
        }
    }

    /// The result, awaited; never throws. Cancelling the awaiting task cancels the future.
    @inlinable
    public var asyncResult: Result<Value, any Error> {
        get async { await result(awaiting: ()) }
    }

    @inlinable
    func result(awaiting _: Void) async -> Result<Value, any Error> {
        await withTaskCancellationHandler {
            // Unsafe, not checked: the observer is the only thing that resumes it, and every
            // observer runs exactly once (a promise dropped uncompleted fails its future with
            // `abandoned`). The checked continuation's extra allocation buys nothing here.
            await withUnsafeContinuation { continuation in
                register(on: nil) { [self] in
                    continuation.resume(returning: outcome)
                    return .empty
                }
            }
        } onCancel: {
            cancel()
        }
    }
}
