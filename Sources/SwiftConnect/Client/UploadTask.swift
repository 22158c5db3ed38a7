import Foundation

/// An upload in flight: its response, its progress as an `AsyncSequence`, and a way to cancel it.
///
/// ```swift
/// let task = connect.uploadTask(files: [video], to: VideoConnector.create)
/// for await progress in task.progress {
///     print(progress.fractionCompleted)
/// }
/// let body = try await task.response.value
/// ```
///
/// Made by ``Connect/uploadTask(files:to:options:debugResponse:)``.
public struct UploadTask: Sendable {
    /// The response body, as ``Connect/upload(files:to:debugResponse:)`` delivers it.
    public let response: Future<Data>
    /// The progress, while the body is sent: `bytesSent` only increases, and a successful upload
    /// ends with `bytesSent == totalBytes`. The sequence finishes when the upload succeeds, fails
    /// or is cancelled. It keeps only the newest value for a consumer that falls behind, and,
    /// like every `AsyncStream`, serves one consumer.
    public let progress: AsyncStream<UploadProgress>

    /// Cancels the upload: the transfer stops, open files are closed, and ``response`` fails with
    /// ``ConnectError/cancelled``.
    public func cancel() {
        response.cancel()
    }
}
