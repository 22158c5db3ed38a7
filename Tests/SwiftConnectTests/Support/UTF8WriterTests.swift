import Foundation
import Testing

@testable import SwiftConnect

@Suite("UTF8Writer")
struct UTF8WriterTests {
    private struct Failure: Error, Equatable {}

    @Test func writesBytesAndStringsInOrder() {
        let prefix: [UInt8] = Array("prefix".utf8)
        let string = UTF8Writer.string { output in
            prefix.withUnsafeBufferPointer { output.append(contentsOf: $0) }
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
        // A string that fits the stack buffer is written in one pass.
        #expect(counts == [2, 3])
    }

    /// Strings around the stack buffer's size, written in chunks of `chunk` bytes (with a
    /// two-byte character in each) and single bytes, so that a chunk straddles the buffer's end.
    @Test(arguments: [1, 2, 7, 64, 1023, 1024, 1025, 3000])
    func stringsOfEverySizeAroundTheBufferAreWrittenWhole(chunk: Int) {
        let piece = chunk >= 2 ? String(repeating: "a", count: chunk - 2) + "é" : "a"
        for total in [UTF8Writer.stackCapacity - 1, UTF8Writer.stackCapacity, UTF8Writer.stackCapacity + 1, 5000] {
            var runs = 0
            var expected = ""
            let string = UTF8Writer.string { output in
                runs += 1
                while output.count + piece.utf8.count <= total {
                    output.append(piece)
                }
                while output.count < total { output.append(UInt8(ascii: "z")) }
            }
            while expected.utf8.count + piece.utf8.count <= total { expected += piece }
            expected += String(repeating: "z", count: total - expected.utf8.count)
            #expect(string == expected, "chunk \(chunk), total \(total)")
            #expect(string.utf8.count == total)
            // Longer than the buffer: counted, then written into storage of its size.
            #expect(runs == (total <= UTF8Writer.stackCapacity ? 1 : 2), "chunk \(chunk), total \(total)")
        }
    }

    @Test func anErrorOnTheFirstRunOfALongStringIsThrownWithoutASecondRun() {
        var runs = 0
        #expect(throws: Failure()) {
            _ = try UTF8Writer.string { output in
                runs += 1
                output.append(String(repeating: "x", count: UTF8Writer.stackCapacity + 10))
                throw Failure()
            }
        }
        #expect(runs == 1)
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

    /// A body that writes a different number of bytes on its second run stops at a precondition:
    /// it must never write past the string's storage or return a string it did not count.
    @Test(arguments: [1, -1, 100_000])
    func aSecondRunThatWritesADifferentLengthStops(difference: Int) async {
        await #expect(processExitsWith: .failure) { [difference] in
            var runs = 0
            _ = UTF8Writer.string { output in
                runs += 1
                let count = UTF8Writer.stackCapacity + 100 + (runs == 1 ? 0 : difference)
                output.append(String(repeating: "x", count: count))
            }
        }
    }
}

@Suite("String.withUTF8Bytes")
struct WithUTF8BytesTests {
    /// Small, native, substring-made, bridged and empty strings: each lends exactly its UTF-8.
    @Test(arguments: [
        "", "small", "é and 日本", String(repeating: "a native string longer than fifteen bytes ", count: 3),
        String("a string made from a longer substring, past its start".dropFirst(7)),
        String(NSString(string: "bridged from NSString, é 日本")),
    ])
    func lendsTheStringsUTF8(string: String) {
        #expect(string.withUTF8Bytes { Array($0) } == Array(string.utf8))
    }

    @Test func sameUTF8ComparesBytesNotCanonicalEquivalence() {
        let composed = "https://h.test/caf\u{E9}"
        let decomposed = "https://h.test/cafe\u{301}"
        #expect(composed == decomposed)  // what `==` says
        #expect(!composed.hasSameUTF8(as: decomposed))
        let long = String(repeating: "https://h.test/v1/", count: 3)
        let copy = String(decoding: Array(long.utf8), as: UTF8.self)  // other storage, same bytes
        #expect(long.hasSameUTF8(as: long) && long.hasSameUTF8(as: copy) && "".hasSameUTF8(as: ""))
        #expect(!long.hasSameUTF8(as: long + "x") && !"ab".hasSameUTF8(as: "aB"))
    }

    @Test func passesOnWhatTheBodyThrows() {
        struct Stop: Error {}
        #expect(throws: Stop.self) { try "bytes".withUTF8Bytes { _ in throw Stop() } }
    }
}
