import Foundation
import Synchronization
import TodoDemo

/// Prints the session's events as numbered steps, coloured when standard output is a terminal
/// (and `NO_COLOR` is not set).
final class Terminal: Sendable {
    private let isInteractive = isatty(STDOUT_FILENO) == 1
    private let usesColor = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    private let state = Mutex(State())

    private struct State {
        var steps = 0
        var showsProgress = false
    }

    func title(_ text: String) {
        write(paint(text, .bold))
    }

    func show(_ event: DemoEvent) {
        switch event {
        case .step(let title):
            let number = state.withLock { state in
                state.steps += 1
                return state.steps
            }
            write("\n" + paint("\(number). \(title)", .bold, .cyan))
        case .success(let text):
            write("   " + paint("✓", .green) + " " + text)
        case .note(let text):
            write("     " + paint(text, .dim))
        case .serverError(let error, let request):
            write(
                "   " + paint("!", .yellow) + " \(request): " + paint("\(error.status) \"\(error.message)\"", .yellow))
        case .progress(let fraction):
            showProgress(fraction)
        case .debug(let text):
            write(
                text.split(separator: "\n", omittingEmptySubsequences: false).map { "     " + paint(String($0), .dim) }
                    .joined(separator: "\n"))
        }
    }

    func finish() {
        let steps = state.withLock { $0.steps }
        write("\n" + paint("Done: \(steps) steps, every one as expected.", .bold, .green))
    }

    func fail(_ error: any Error) {
        write("\n" + paint("✗ The demo stopped: \(error)", .bold, .red))
    }

    /// A progress bar, redrawn in place on a terminal; elsewhere only its end is printed.
    private func showProgress(_ fraction: Double) {
        let fraction = min(max(fraction, 0), 1)
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar =
            "   [" + paint(String(repeating: "█", count: filled), .green)
            + String(repeating: "░", count: width - filled)
            + "] \(Int(fraction * 100))%"
        if isInteractive {
            state.withLock { state in
                state.showsProgress = fraction < 1
                Self.output("\r" + bar + (fraction < 1 ? "" : "\n"))
            }
        } else if fraction == 1 {
            write(bar)
        }
    }

    private func write(_ line: String) {
        state.withLock { state in
            Self.output((state.showsProgress ? "\n" : "") + line + "\n")
            state.showsProgress = false
        }
    }

    /// Writes to standard output unbuffered, so that lines and the progress bar appear at once.
    /// A closed output (`todo-demo | head`) is not an error worth stopping the tour for.
    private static func output(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }

    private enum Style: String {
        case bold = "1"
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case cyan = "36"
    }

    private func paint(_ text: String, _ styles: Style...) -> String {
        guard usesColor else { return text }
        return "\u{1B}[" + styles.map(\.rawValue).joined(separator: ";") + "m" + text + "\u{1B}[0m"
    }
}
