/// A media type (MIME type) such as `image/jpeg`: the `Content-Type` of one uploaded file.
///
/// An open set: the common types are static members, and you add your own the same way.
///
/// ```swift
/// extension MimeType {
///     static let myAwesomeType = MimeType(rawValue: "awesome/type")
/// }
/// ```
///
/// ``init(fileExtension:)`` and ``init(inferringFrom:)`` pick a type from a file name's extension
/// (from a built-in table, the same on every platform), falling back to ``binary``
/// (`application/octet-stream`).
///
/// A raw value must be printable ASCII (it is sent as a header); one with CR, LF or other control
/// characters fails the upload with ``InvalidRequestReason/invalidMimeType(_:)`` before anything
/// is sent.
public struct MimeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The media type as sent, e.g. `"image/jpeg"` or `"text/plain; charset=utf-8"`.
    public let rawValue: String

    /// Creates a media type from its text, e.g. `MimeType(rawValue: "application/vnd.api+json")`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The raw value.
    public var description: String { rawValue }

    /// Whether the value can be sent as a header: non-empty printable ASCII (spaces allowed,
    /// for parameters such as `; charset=utf-8`).
    var isValid: Bool {
        !rawValue.isEmpty && rawValue.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

extension MimeType {
    // MARK: Images

    /// `image/jpeg`
    public static let jpg = MimeType(rawValue: "image/jpeg")
    /// `image/png`
    public static let png = MimeType(rawValue: "image/png")
    /// `image/gif`
    public static let gif = MimeType(rawValue: "image/gif")
    /// `image/tiff`
    public static let tiff = MimeType(rawValue: "image/tiff")
    /// `image/bmp`
    public static let bmp = MimeType(rawValue: "image/bmp")
    /// `image/webp`
    public static let webp = MimeType(rawValue: "image/webp")
    /// `image/heic`
    public static let heic = MimeType(rawValue: "image/heic")
    /// `image/heif`
    public static let heif = MimeType(rawValue: "image/heif")
    /// `image/avif`
    public static let avif = MimeType(rawValue: "image/avif")
    /// `image/svg+xml`
    public static let svg = MimeType(rawValue: "image/svg+xml")
    /// `image/vnd.microsoft.icon`
    public static let ico = MimeType(rawValue: "image/vnd.microsoft.icon")

    // MARK: Video

    /// `video/mp4`
    public static let mp4 = MimeType(rawValue: "video/mp4")
    /// `video/quicktime`
    public static let mov = MimeType(rawValue: "video/quicktime")
    /// `video/x-m4v`
    public static let m4v = MimeType(rawValue: "video/x-m4v")
    /// `video/webm`
    public static let webm = MimeType(rawValue: "video/webm")
    /// `video/x-msvideo`
    public static let avi = MimeType(rawValue: "video/x-msvideo")
    /// `video/mpeg`
    public static let mpeg = MimeType(rawValue: "video/mpeg")
    /// `video/3gpp`
    public static let threeGP = MimeType(rawValue: "video/3gpp")

    // MARK: Audio

    /// `audio/mpeg`
    public static let mp3 = MimeType(rawValue: "audio/mpeg")
    /// `audio/mp4`
    public static let m4a = MimeType(rawValue: "audio/mp4")
    /// `audio/aac`
    public static let aac = MimeType(rawValue: "audio/aac")
    /// `audio/wav`
    public static let wav = MimeType(rawValue: "audio/wav")
    /// `audio/ogg`
    public static let ogg = MimeType(rawValue: "audio/ogg")
    /// `audio/flac`
    public static let flac = MimeType(rawValue: "audio/flac")

    // MARK: Documents and data

    /// `application/pdf`
    public static let pdf = MimeType(rawValue: "application/pdf")
    /// `application/json`
    public static let json = MimeType(rawValue: "application/json")
    /// `application/xml`
    public static let xml = MimeType(rawValue: "application/xml")
    /// `text/plain`
    public static let txt = MimeType(rawValue: "text/plain")
    /// `text/html`
    public static let html = MimeType(rawValue: "text/html")
    /// `text/css`
    public static let css = MimeType(rawValue: "text/css")
    /// `text/csv`
    public static let csv = MimeType(rawValue: "text/csv")
    /// `text/markdown`
    public static let markdown = MimeType(rawValue: "text/markdown")
    /// `text/javascript`
    public static let javascript = MimeType(rawValue: "text/javascript")
    /// `application/rtf`
    public static let rtf = MimeType(rawValue: "application/rtf")
    /// `application/msword`
    public static let doc = MimeType(rawValue: "application/msword")
    /// `application/vnd.openxmlformats-officedocument.wordprocessingml.document`
    public static let docx = MimeType(
        rawValue: "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    /// `application/vnd.ms-excel`
    public static let xls = MimeType(rawValue: "application/vnd.ms-excel")
    /// `application/vnd.openxmlformats-officedocument.spreadsheetml.sheet`
    public static let xlsx = MimeType(rawValue: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    /// `application/vnd.ms-powerpoint`
    public static let ppt = MimeType(rawValue: "application/vnd.ms-powerpoint")
    /// `application/vnd.openxmlformats-officedocument.presentationml.presentation`
    public static let pptx = MimeType(
        rawValue: "application/vnd.openxmlformats-officedocument.presentationml.presentation")

    // MARK: Archives

    /// `application/zip`
    public static let zip = MimeType(rawValue: "application/zip")
    /// `application/gzip`
    public static let gzip = MimeType(rawValue: "application/gzip")
    /// `application/x-tar`
    public static let tar = MimeType(rawValue: "application/x-tar")
    /// `application/x-7z-compressed`
    public static let sevenZip = MimeType(rawValue: "application/x-7z-compressed")

    // MARK: Fallback

    /// `application/octet-stream`: arbitrary bytes, the type of anything not otherwise known.
    public static let binary = MimeType(rawValue: "application/octet-stream")
}
