import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads an ``UploadBody``'s segments in order into the buffers it is given: bytes in memory are
/// copied, files are read with `read(2)` straight into the buffer, one file open at a time, and
/// user streams are read through. Memory use is independent of the body's size.
///
/// A file must still have the length it was measured with: one that is shorter, longer, or no
/// longer there stops the reader with ``ConnectError/uploadSourceChanged(_:detail:)``, after
/// which every read returns `-1`. A caller therefore never sees the end of a body whose content
/// was wrong.
///
/// ``close()`` may be called from any thread (the transport closes a reader when its task
/// completes or is cancelled); it releases the open file or stream at once.
// @unchecked Sendable: all mutable state, including the open stream, lives in `state`, a LockedBox,
// and is only touched inside withLock.
final class UploadBodyReader: @unchecked Sendable {
    enum Phase {
        case notOpen, open, atEnd, closed, failed
    }

    private struct State {
        var phase = Phase.notOpen
        /// The segment being read, and how far into it.
        var index = 0
        var offset: Int64 = 0
        /// The open file of the current `.file` segment.
        var descriptor: Int32 = -1
        /// The open stream of the current `.stream` segment.
        var stream: InputStream?
        var failure: ConnectError?
        /// Bytes handed out so far.
        var bytesRead: Int64 = 0
    }

    private let segments: [UploadBody.Segment]
    private let state = LockedBox(State())

    init(segments: [UploadBody.Segment]) {
        self.segments = segments
    }

    deinit {
        close()
    }

    /// Where the reader is: not yet read, reading, done, closed or failed.
    var phase: Phase { state.withLock { $0.phase } }

    /// Why the reader failed, if it did.
    var failure: ConnectError? { state.withLock { $0.failure } }

    /// The number of bytes read so far.
    var bytesRead: Int64 { state.withLock { $0.bytesRead } }

    /// Marks the reader open (reading opens it too).
    func open() {
        state.withLock { state in
            if state.phase == .notOpen { state.phase = .open }
        }
    }

    /// Releases the open file or stream; later reads return `-1` (or `0` if the body was read to
    /// its end).
    func close() {
        state.withLock { state in
            Self.releaseCurrent(&state)
            if state.phase != .atEnd && state.phase != .failed { state.phase = .closed }
        }
    }

    /// Fills `buffer` with up to `maxLength` bytes. Returns the count, `0` at the end of the body,
    /// or `-1` when the reader failed or was closed before the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        state.withLock { state in
            switch state.phase {
            case .notOpen: state.phase = .open
            case .open: break
            case .atEnd: return 0
            case .closed, .failed: return -1
            }
            var filled = 0
            while filled < maxLength, state.index < segments.count {
                do throws(ConnectError) {
                    filled += try fill(buffer + filled, maxLength - filled, &state)
                } catch {
                    Self.releaseCurrent(&state)
                    state.failure = error
                    state.phase = .failed
                    return -1
                }
            }
            state.bytesRead += Int64(filled)
            if state.index == segments.count && filled == 0 {
                state.phase = .atEnd
            }
            return filled
        }
    }

    /// Copies from the current segment; moves to the next one when it is exhausted.
    private func fill(_ buffer: UnsafeMutablePointer<UInt8>, _ capacity: Int, _ state: inout State) throws(ConnectError)
        -> Int
    {
        switch segments[state.index] {
        case .bytes(let data):
            let start = Int(state.offset)
            let count = min(capacity, data.count - start)
            data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                UnsafeMutableRawPointer(buffer).copyMemory(from: base + start, byteCount: count)
            }
            state.offset += Int64(count)
            if state.offset == Int64(data.count) { Self.advance(&state) }
            return count

        case .file(let path, let length, let source):
            if state.descriptor < 0 {
                state.descriptor = try Self.openFile(path, expecting: length, source: source)
            }
            let remaining = length - state.offset
            if remaining > 0 {
                let count = try Self.readFile(
                    state.descriptor, into: buffer, maxLength: Int(min(Int64(capacity), remaining)), source: source)
                if count == 0 {
                    throw .uploadSourceChanged(
                        source, detail: "it ended after \(state.offset) of its \(length) bytes")
                }
                state.offset += Int64(count)
                if state.offset < length { return count }
                try Self.checkUnchanged(state.descriptor, length: length, source: source)
                Self.advance(&state)
                return count
            }
            try Self.checkUnchanged(state.descriptor, length: length, source: source)
            Self.advance(&state)
            return 0

        case .stream(let length, let make, let source):
            let stream: InputStream
            if let open = state.stream {
                stream = open
            } else {
                do {
                    stream = try make()
                } catch {
                    throw .uploadSourceChanged(source, detail: "its stream could not be made: \(error)")
                }
                stream.open()
                state.stream = stream
            }
            let remaining = length - state.offset
            guard remaining > 0 else {
                Self.advance(&state)
                return 0
            }
            let count = stream.read(buffer, maxLength: Int(min(Int64(capacity), remaining)))
            if count < 0 {
                let reason = stream.streamError.map { "\($0)" } ?? "unknown error"
                throw .uploadSourceChanged(source, detail: "reading its stream failed: \(reason)")
            }
            if count == 0 {
                throw .uploadSourceChanged(
                    source, detail: "its stream ended after \(state.offset) of its \(length) bytes")
            }
            state.offset += Int64(count)
            if state.offset == length { Self.advance(&state) }
            return count
        }
    }

    /// Closes the current file or stream and moves to the next segment.
    private static func advance(_ state: inout State) {
        releaseCurrent(&state)
        state.index += 1
        state.offset = 0
    }

    private static func releaseCurrent(_ state: inout State) {
        if state.descriptor >= 0 {
            _ = systemClose(state.descriptor)
            state.descriptor = -1
        }
        if let stream = state.stream {
            stream.close()
            state.stream = nil
        }
    }

    private static func openFile(_ path: String, expecting length: Int64, source: File) throws(ConnectError) -> Int32 {
        let descriptor = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .uploadSourceChanged(source, detail: "it could not be opened: \(errorText(errno))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int64(info.st_size) == length else {
            let size = Int64(info.st_size)
            _ = systemClose(descriptor)
            throw .uploadSourceChanged(source, detail: "it was measured at \(length) bytes and now has \(size)")
        }
        return descriptor
    }

    /// After the measured length was read: the file must not have grown, nor been deleted (an
    /// open file can still be read whole once its name is gone), nor hold bytes past that length.
    /// The last catches a file whose size the system does not report: one under `/proc` says it
    /// has none, and would go out as an empty part.
    private static func checkUnchanged(_ descriptor: Int32, length: Int64, source: File) throws(ConnectError) {
        var extra: UInt8 = 0
        // A read that fails (`EIO`, as `/proc/self/mem` gives) is not the end of the file: it throws.
        if try readFile(descriptor, into: &extra, maxLength: 1, source: source) > 0 {
            throw .uploadSourceChanged(
                source,
                detail: "it holds more than the \(length) bytes it was measured at (a file whose size the system "
                    + "does not report, as under /proc, cannot be streamed: read it into Data)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .uploadSourceChanged(source, detail: "it could not be checked: \(errorText(errno))")
        }
        if info.st_nlink == 0 {
            throw .uploadSourceChanged(source, detail: "it was deleted while it was sent")
        }
        if Int64(info.st_size) != length {
            throw .uploadSourceChanged(
                source, detail: "it was measured at \(length) bytes and had \(info.st_size) when read")
        }
    }

    /// Reads up to `maxLength` bytes of `source`'s file; 0 at its end.
    ///
    /// - Throws: ``ConnectError/uploadSourceChanged(_:detail:)`` when the read fails.
    private static func readFile(
        _ descriptor: Int32, into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int, source: File
    ) throws(ConnectError) -> Int {
        while true {
            let count = systemRead(descriptor, buffer, maxLength)
            if count >= 0 { return count }
            if errno != EINTR {
                throw .uploadSourceChanged(source, detail: "reading it failed: \(errorText(errno))")
            }
        }
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

// The POSIX calls under names of their own: `open`, `close` and `read` are also methods here.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
