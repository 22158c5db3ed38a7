import Foundation

/// An `InputStream` over an ``UploadBodyReader``: what URLSession reads an upload body from.
///
/// Synchronous and pull-based, as FoundationNetworking's body source expects: `read` fills the
/// buffer it is given from memory, from the current file (`read(2)`), or from a user stream.
/// `hasBytesAvailable` stays `true` after a failure or an early close so that the next `read`
/// reports `-1` and the transfer is aborted — never ended early as if the body were complete.
///
/// It keeps its own `delegate`: on Apple platforms `NSStream`'s is abstract, as Foundation's
/// subclassing notes say, and a body stream without one has raised an exception in URLSession's
/// upload tasks. Nothing here is event-driven, so the delegate is only kept, never called.
///
/// Not `Sendable` (no `InputStream` is): create it on the thread that hands it to URLSession.
final class UploadBodyStream: InputStream {
    let reader: UploadBodyReader
    private weak var streamDelegate: (any StreamDelegate)?

    init(reader: UploadBodyReader) {
        self.reader = reader
        super.init(data: Data())
    }

    override func open() {
        reader.open()
    }

    override func close() {
        reader.close()
    }

    override var streamStatus: Stream.Status {
        switch reader.phase {
        case .notOpen: return .notOpen
        case .open: return .open
        case .atEnd: return .atEnd
        case .closed: return .closed
        case .failed: return .error
        }
    }

    override var streamError: (any Error)? {
        reader.failure
    }

    override var hasBytesAvailable: Bool {
        switch reader.phase {
        // A reader closed or failed before its end must be read once more, to report -1.
        case .notOpen, .open, .failed, .closed: return true
        case .atEnd: return false
        }
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        reader.read(into: buffer, maxLength: len)
    }

    override var delegate: (any StreamDelegate)? {
        get { streamDelegate }
        set { streamDelegate = newValue }
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }
}
