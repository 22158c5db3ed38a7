import Testing

@testable import SwiftConnect

@Suite("UploadProgress")
struct UploadProgressTests {
    @Test func fractionAndDescriptionOfAnUploadUnderWay() {
        let progress = UploadProgress(bytesSent: 1_048_576, totalBytes: 4_194_304)
        #expect(progress.fractionCompleted == 0.25)
        #expect(!progress.isComplete)
        #expect(progress.description == "1048576 of 4194304 bytes (25%)")
    }

    @Test func anEmptyBodyIsComplete() {
        let progress = UploadProgress(bytesSent: 0, totalBytes: 0)
        #expect(progress.fractionCompleted == 1)
        #expect(progress.isComplete)
        #expect(progress.description == "0 of 0 bytes (100%)")
    }

    /// A value made by hand may lie outside `0...totalBytes`; its description must not trap.
    @Test(arguments: [
        (Int64.max, Int64(1), 1.0, "100%"), (Int64(250), Int64(100), 1.0, "100%"),
        (Int64(-5), Int64(100), 0.0, "0%"), (Int64.min, Int64(1), 0.0, "0%"),
    ])
    func valuesOutsideTheBodyStayWithinZeroAndOne(sent: Int64, total: Int64, fraction: Double, percent: String) {
        let progress = UploadProgress(bytesSent: sent, totalBytes: total)
        #expect(progress.fractionCompleted == fraction)
        #expect(progress.description.hasSuffix("(\(percent))"))
    }
}
