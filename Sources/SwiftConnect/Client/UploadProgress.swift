/// How much of an upload's body has been sent.
///
/// Reported while an upload runs (see ``Connect/upload(files:to:options:debugResponse:progress:)``
/// and ``UploadTask/progress``): `bytesSent` never decreases, `totalBytes` is the body's exact
/// length from the start — also for streamed bodies, where URLSession on Linux reports `0` — and
/// an upload that succeeds always ends with `bytesSent == totalBytes`.
public struct UploadProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes of the body handed to the network so far.
    public let bytesSent: Int64
    /// The body's length in bytes: multipart framing, fields and files together.
    public let totalBytes: Int64

    /// Creates a progress value.
    public init(bytesSent: Int64, totalBytes: Int64) {
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
    }

    /// `bytesSent / totalBytes`, from `0` to `1` (`1` for an empty body). A value made by hand
    /// with `bytesSent` outside `0...totalBytes` gives the nearer end.
    public var fractionCompleted: Double {
        totalBytes > 0 ? min(1, max(0, Double(bytesSent) / Double(totalBytes))) : 1
    }

    /// Whether the whole body has been sent.
    public var isComplete: Bool { bytesSent >= totalBytes }

    /// `"1048576 of 4194304 bytes (25%)"`.
    public var description: String {
        "\(bytesSent) of \(totalBytes) bytes (\(Int((fractionCompleted * 100).rounded(.down)))%)"
    }
}
