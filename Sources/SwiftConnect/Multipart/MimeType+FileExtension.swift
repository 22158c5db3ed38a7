import Foundation

extension MimeType {
    /// The media type for a file name extension such as `"jpg"` or `".PDF"`, or ``binary``
    /// (`application/octet-stream`) when the extension is not in the built-in table.
    ///
    /// The lookup ignores case and a leading dot, and uses a table of its own rather than the
    /// operating system's, so it answers the same on Linux and Apple platforms.
    ///
    /// ```swift
    /// MimeType(fileExtension: "jpeg")  // .jpg
    /// MimeType(fileExtension: "xyz")   // .binary
    /// ```
    public init(fileExtension: String) {
        var key = fileExtension.lowercased()
        if key.hasPrefix(".") { key.removeFirst() }
        self = MimeType.byFileExtension[key] ?? .binary
    }

    /// The media type for a file's extension (see ``init(fileExtension:)``): `photo.JPG` gives
    /// ``jpg``; a file without a known extension gives ``binary``.
    public init(inferringFrom fileURL: URL) {
        self.init(fileExtension: fileURL.pathExtension)
    }

    /// Extensions (lowercased, without the dot) and their types.
    static let byFileExtension: [String: MimeType] = [
        "jpg": .jpg, "jpeg": .jpg, "jpe": .jpg, "png": .png, "gif": .gif, "tif": .tiff, "tiff": .tiff,
        "bmp": .bmp, "webp": .webp, "heic": .heic, "heif": .heif, "avif": .avif, "svg": .svg, "ico": .ico,
        "mp4": .mp4, "mov": .mov, "qt": .mov, "m4v": .m4v, "webm": .webm, "avi": .avi, "mpeg": .mpeg,
        "mpg": .mpeg, "3gp": .threeGP,
        "mp3": .mp3, "m4a": .m4a, "aac": .aac, "wav": .wav, "ogg": .ogg, "oga": .ogg, "flac": .flac,
        "pdf": .pdf, "json": .json, "xml": .xml, "txt": .txt, "text": .txt, "log": .txt, "html": .html,
        "htm": .html, "css": .css, "csv": .csv, "md": .markdown, "markdown": .markdown, "js": .javascript,
        "mjs": .javascript, "rtf": .rtf, "doc": .doc, "docx": .docx, "xls": .xls, "xlsx": .xlsx,
        "ppt": .ppt, "pptx": .pptx,
        "zip": .zip, "gz": .gzip, "tgz": .gzip, "tar": .tar, "7z": .sevenZip,
        "bin": .binary,
    ]
}
