/// How ``Connect`` sends an upload: the body's framing and, for tests, its multipart boundary.
///
/// ```swift
/// var options = UploadOptions()
/// options.framing = .chunked
/// ```
public struct UploadOptions: Sendable, Hashable {
    /// How the end of the body is marked on the wire. ``UploadBody/Framing/contentLength`` (the
    /// default) sends a `Content-Length`, which every server accepts; ``UploadBody/Framing/chunked``
    /// sends `Transfer-Encoding: chunked`. Both stream files from disk at the same speed and
    /// memory.
    public var framing: UploadBody.Framing
    /// The multipart boundary, or `nil` (the default) for a random one. Set it to get
    /// byte-for-byte reproducible bodies in tests; it must be 1–70 RFC 2046 characters and must
    /// not occur in a field or in a file given as `Data`, or the upload fails with
    /// ``InvalidRequestReason/invalidBoundary(_:)``. (Files on disk and streams are not searched:
    /// they are read while they are sent.)
    public var boundary: String?

    /// Creates options; the defaults send a `Content-Length` and a random boundary.
    public init(framing: UploadBody.Framing = .contentLength, boundary: String? = nil) {
        self.framing = framing
        self.boundary = boundary
    }
}
