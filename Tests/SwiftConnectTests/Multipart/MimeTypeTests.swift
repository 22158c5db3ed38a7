import Foundation
import Testing

@testable import SwiftConnect

@Suite("MimeType")
struct MimeTypeTests {
    @Test func commonTypesHaveTheirRegisteredNames() {
        #expect(MimeType.jpg.rawValue == "image/jpeg")
        #expect(MimeType.png.rawValue == "image/png")
        #expect(MimeType.gif.rawValue == "image/gif")
        #expect(MimeType.tiff.rawValue == "image/tiff")
        #expect(MimeType.mp4.rawValue == "video/mp4")
        #expect(MimeType.mov.rawValue == "video/quicktime")
        #expect(MimeType.pdf.rawValue == "application/pdf")
        #expect(MimeType.json.rawValue == "application/json")
        #expect(MimeType.txt.rawValue == "text/plain")
        #expect(MimeType.binary.rawValue == "application/octet-stream")
    }

    @Test func isExtensibleAndComparedByValue() {
        let awesome = MimeType(rawValue: "awesome/type")
        #expect(awesome == MimeType(rawValue: "awesome/type"))
        #expect(awesome != .binary)
        #expect(Set([MimeType.png, MimeType(rawValue: "image/png")]).count == 1)
        #expect("\(awesome)" == "awesome/type")
    }

    @Test(arguments: [
        ("jpg", MimeType.jpg), ("JPEG", .jpg), (".png", .png), ("gif", .gif), ("tif", .tiff), ("tiff", .tiff),
        ("mp4", .mp4), ("MOV", .mov), ("pdf", .pdf), ("json", .json), ("txt", .txt), ("heic", .heic),
        ("csv", .csv), ("zip", .zip), ("docx", .docx), ("mp3", .mp3),
    ])
    func extensionsMapToTheirTypes(fileExtension: String, expected: MimeType) {
        #expect(MimeType(fileExtension: fileExtension) == expected)
    }

    @Test(arguments: ["", "xyz", "tar.gz", "jpg ", "ﬁle"])
    func unknownExtensionsFallBackToOctetStream(fileExtension: String) {
        #expect(MimeType(fileExtension: fileExtension) == .binary)
    }

    @Test func inferenceReadsTheURLsExtension() {
        #expect(MimeType(inferringFrom: URL(fileURLWithPath: "/tmp/Holiday.MOV")) == .mov)
        #expect(MimeType(inferringFrom: URL(fileURLWithPath: "/tmp/archive.tar.gz")) == .gzip)
        #expect(MimeType(inferringFrom: URL(fileURLWithPath: "/tmp/README")) == .binary)
        #expect(MimeType(inferringFrom: URL(fileURLWithPath: "/tmp/.hidden")) == .binary)
    }

    @Test func fileFromURLInfersItsTypeAndName() {
        let file = File(key: "doc", fileURL: URL(fileURLWithPath: "/tmp/report.pdf"))
        #expect(file.mimeType == .pdf)
        #expect(file.name == "report.pdf")
        #expect(file.fileURL?.path == "/tmp/report.pdf")
        #expect(file.data == nil)

        let named = File(name: "other.bin", key: "doc", mimeType: .json, fileURL: URL(fileURLWithPath: "/tmp/a.pdf"))
        #expect(named.mimeType == .json)
        #expect(named.name == "other.bin")
    }

    @Test func onlyPrintableASCIIIsAValidHeaderValue() {
        #expect(MimeType.jpg.isValid)
        #expect(MimeType(rawValue: "text/plain; charset=utf-8").isValid)
        #expect(!MimeType(rawValue: "").isValid)
        #expect(!MimeType(rawValue: "text/plain\r\nX-Evil: 1").isValid)
        #expect(!MimeType(rawValue: "text/plain\n").isValid)
        #expect(!MimeType(rawValue: "text/plaïn").isValid)
    }
}
