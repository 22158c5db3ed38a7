import Testing

@testable import SwiftConnect

@Suite("UTF8Writer")
struct UTF8WriterTests {
    private struct Failure: Error, Equatable {}

    @Test func writesBytesStringsAndSubstringsInOrder() {
        let text = "prefix?query"
        let string = UTF8Writer.string { output in
            output.append(text[..<text.firstIndex(of: "?")!])
            output.append(UInt8(ascii: "/"))
            output.append("a longer string than fits inline, with é and 日本")
        }
        #expect(string == "prefix/a longer string than fits inline, with é and 日本")
    }

    @Test func nothingWrittenIsTheEmptyString() {
        #expect(UTF8Writer.string { _ in }.isEmpty)
    }

    @Test func countIsTheNumberOfBytesSoFar() {
        var counts: [Int] = []
        _ = UTF8Writer.string { output in
            output.append("é")
            counts.append(output.count)
            output.append(UInt8(ascii: "x"))
            counts.append(output.count)
        }
        // Counted, then written: the same counts twice.
        #expect(counts == [2, 3, 2, 3])
    }

    @Test func anErrorFromTheBodyIsThrown() {
        #expect(throws: Failure()) {
            _ = try UTF8Writer.string { output in
                output.append("abc")
                throw Failure()
            }
        }
    }

    @Test func invalidUTF8IsRepairedAsStringDecodingDoes() {
        let bytes: [UInt8] = [0x61, 0xFF, 0x62]
        let string = UTF8Writer.string { output in
            bytes.withUnsafeBufferPointer { output.append(contentsOf: $0) }
        }
        #expect(string == String(decoding: bytes, as: UTF8.self))
    }
}
