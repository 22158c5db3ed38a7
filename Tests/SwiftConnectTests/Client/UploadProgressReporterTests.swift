import Dispatch
import Testing

@testable import SwiftConnect

@Suite("UploadProgressReporter")
struct UploadProgressReporterTests {
    @Test func reporterKeepsValuesIncreasingAndClampedToTheTotal() async {
        let (stream, continuation) = AsyncStream.makeStream(of: UploadProgress.self)
        let reporter = UploadProgressReporter(
            queue: DispatchQueue(label: "test.progress"), handler: nil, continuation: continuation)
        reporter.start(totalBytes: 100)
        for sent in [10, 5, 10, 60, 40, 250, 100] as [Int64] { reporter.report(bytesSent: sent) }
        reporter.finish(succeeded: true)
        reporter.report(bytesSent: 100)
        var values: [Int64] = []
        for await progress in stream { values.append(progress.bytesSent) }
        #expect(values == [10, 60, 100])
    }

    /// After `cancel()`, nothing is delivered: not a report that comes later, nor a delivery
    /// queued before it; the stream ends.
    @Test func nothingIsDeliveredAfterCancel() async {
        let queue = DispatchQueue(label: "test.progress")
        let values = PipelineFixtures.Recorder<Int64>()
        let (stream, continuation) = AsyncStream.makeStream(of: UploadProgress.self)
        let reporter = UploadProgressReporter(
            queue: queue, handler: { values.append($0.bytesSent) }, continuation: continuation)
        reporter.start(totalBytes: 100)
        queue.sync {
            reporter.report(bytesSent: 10)  // its delivery waits behind this block
            reporter.cancel()
            reporter.report(bytesSent: 50)
        }
        reporter.finish(succeeded: false)
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(values.values.isEmpty)
        var streamed: [Int64] = []
        for await progress in stream { streamed.append(progress.bytesSent) }
        #expect(streamed == [10])
    }

    @Test func reporterCoalescesCallbacksAndDeliversTheNewest() async {
        let queue = DispatchQueue(label: "test.progress")
        let values = PipelineFixtures.Recorder<Int64>()
        let reporter = UploadProgressReporter(queue: queue, handler: { values.append($0.bytesSent) }, continuation: nil)
        reporter.start(totalBytes: 1000)
        queue.sync {
            // The queue is busy: every report lands while no delivery can run.
            for sent in stride(from: 1, through: 1000, by: 1) { reporter.report(bytesSent: Int64(sent)) }
        }
        reporter.finish(succeeded: true)
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(values.values == [1000])
    }
}
