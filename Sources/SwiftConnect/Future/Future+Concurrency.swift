extension Future {
    /// The value, awaited: returns it on success and throws the error on failure.
    ///
    /// ```swift
    /// let todo = try await connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self).value
    /// ```
    ///
    /// Cancelling the awaiting task cancels the future, and through it the HTTP request; the
    /// await then throws ``ConnectError/cancelled``. No callback queue is involved.
    public var value: Value {
        get async throws {
            try await result(awaiting: ()).get()
        }
    }

    /// The result, awaited; never throws. Cancelling the awaiting task cancels the future.
    public var asyncResult: Result<Value, any Error> {
        get async { await result(awaiting: ()) }
    }

    private func result(awaiting _: Void) async -> Result<Value, any Error> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
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
