import Foundation

/// The avatar the demo uploads: a real PNG, drawn at run time and written to a temporary file, as
/// big as a phone photo so that the upload's progress shows.
enum DemoAvatar {
    /// Draws a `size`×`size` avatar and writes it to a new temporary file.
    ///
    /// - Returns: The file's URL; delete it when done.
    static func writePNG(size: Int = 768) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("avatar-\(UUID().uuidString).png")
        try png(size: size).write(to: url)
        return url
    }

    /// A disc on a gradient, as an uncompressed 8-bit RGB PNG.
    static func png(size: Int) -> Data {
        var pixels = [UInt8]()
        pixels.reserveCapacity(size * (3 * size + 1))
        let centre = Double(size) / 2
        for y in 0..<size {
            pixels.append(0)  // filter type: none
            for x in 0..<size {
                let inDisc = hypot(Double(x) - centre, Double(y) - centre) < centre * 0.7
                let shade = UInt8(255 * y / size)
                pixels += inDisc ? [255, 200, shade / 2] : [shade / 3, 90, 160]
            }
        }
        var header = Data()
        header.appendBigEndian(UInt32(size))
        header.appendBigEndian(UInt32(size))
        header.append(contentsOf: [8, 2, 0, 0, 0])  // 8 bits, RGB, deflate, no filter, no interlace
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.appendChunk("IHDR", header)
        png.appendChunk("IDAT", zlibStored(pixels))
        png.appendChunk("IEND", Data())
        return png
    }

    /// A zlib stream of uncompressed ("stored") deflate blocks.
    private static func zlibStored(_ bytes: [UInt8]) -> Data {
        var stream = Data([0x78, 0x01])
        let blockSize = 65_535
        for start in stride(from: 0, to: bytes.count, by: blockSize) {
            let block = bytes[start..<min(start + blockSize, bytes.count)]
            stream.append(start + blockSize >= bytes.count ? 1 : 0)  // the last block says so
            let length = UInt16(block.count)
            stream.append(contentsOf: [
                UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8),
            ])
            stream.append(contentsOf: block)
        }
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        stream.appendBigEndian(b << 16 | a)  // Adler-32
        return stream
    }
}

extension Data {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [
            UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
        ])
    }

    /// Appends a PNG chunk: length, type, data, CRC-32 of type and data.
    fileprivate mutating func appendChunk(_ type: String, _ data: Data) {
        appendBigEndian(UInt32(data.count))
        let typeAndData = Data(type.utf8) + data
        append(typeAndData)
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in typeAndData {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        appendBigEndian(~crc)
    }
}
