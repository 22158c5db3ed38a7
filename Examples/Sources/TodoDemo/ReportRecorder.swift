import Synchronization

/// Collects a ``DemoReport`` from the steps' callbacks, on whatever thread they run.
final class ReportRecorder: Sendable {
    private let state = Mutex(DemoReport())

    /// Writes into the report.
    func record(_ change: (inout DemoReport) -> Void) {
        state.withLock { change(&$0) }
    }

    /// The report so far.
    var report: DemoReport {
        state.withLock { $0 }
    }
}
