import Foundation

/// A parsed `multipart/form-data` body (RFC 7578): text fields and files.
///
/// A small parser for the demo server: the whole body in memory, no nested multiparts.
struct MultipartForm {
    /// One part of the body.
    struct Part {
        let name: String
        let filename: String?
        let contentType: String?
        let body: Data
    }

    let parts: [Part]

    /// Text fields by name (parts without a file name).
    var fields: [String: String] {
        Dictionary(
            parts.filter { $0.filename == nil }.map { ($0.name, String(decoding: $0.body, as: UTF8.self)) },
            uniquingKeysWith: { first, _ in first })
    }

    /// The first file part named `name`.
    func file(named name: String) -> Part? {
        parts.first { $0.name == name && $0.filename != nil }
    }

    /// Parses `body` sent with `contentType`.
    ///
    /// - Throws: ``MultipartForm/Malformed`` saying what is wrong.
    init(body: Data, contentType: String?) throws {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw Malformed("expected a multipart/form-data body, got \(contentType ?? "no content type")")
        }
        guard let boundary = Self.parameter("boundary", in: contentType) else {
            throw Malformed("the content type has no boundary")
        }
        let delimiter = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else {
            throw Malformed("the body does not contain its boundary")
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { break }
            guard body[cursor...].starts(with: crlf) else { throw Malformed("a boundary is not followed by CRLF") }
            cursor += crlf.count
            guard let next = body.range(of: crlf + delimiter, in: cursor..<body.endIndex) else {
                throw Malformed("the body ends without a closing boundary")
            }
            parts.append(try Self.part(body[cursor..<next.lowerBound]))
            cursor = next.upperBound
        }
        self.parts = parts
    }

    private static func part(_ bytes: Data) throws -> Part {
        guard let separator = bytes.range(of: Data("\r\n\r\n".utf8)) else {
            throw Malformed("a part has no blank line after its headers")
        }
        var headers: [String: String] = [:]
        for line in String(decoding: bytes[..<separator.lowerBound], as: UTF8.self).components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        guard let disposition = headers["content-disposition"], let name = parameter("name", in: disposition) else {
            throw Malformed("a part has no Content-Disposition name")
        }
        return Part(
            name: name, filename: parameter("filename", in: disposition), contentType: headers["content-type"],
            body: Data(bytes[separator.upperBound...]))
    }

    /// The value of `name=value` or `name="value"` in a header such as `form-data; name="a"`.
    private static func parameter(_ name: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            let value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                return String(value.dropFirst().dropLast()).replacingOccurrences(of: #"\""#, with: "\"")
            }
            return value
        }
        return nil
    }

    /// Why a body could not be parsed.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
