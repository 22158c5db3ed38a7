import Foundation

/// Builds a string from bytes, without building it piece by piece (each `+=` may reallocate) or
/// in a `[UInt8]` that is then copied into a `String`.
///
/// ``string(_:)`` runs its body into a buffer on the stack and makes the string from what it
/// wrote: one pass, one allocation (none for a string of up to 15 bytes). A string longer than
/// the buffer (``stackCapacity`` bytes) takes a second pass: the first one counted it, the writer
/// going on counting once the buffer is full, and the second writes it into storage of exactly
/// its size. The body must append the same bytes each time it runs (it works on values that do
/// not change in between); a second run that wrote a different number of bytes stops at a
/// precondition rather than overrun the storage or return a wrong string.
struct UTF8Writer {
    /// The size of the stack buffer, in bytes: the longest string built in one pass.
    static let stackCapacity = 1024

    /// The number of bytes appended so far.
    private(set) var count = 0
    /// Where the bytes go. Bytes past its end are counted, not stored.
    private let storage: UnsafeMutableBufferPointer<UInt8>

    private init(storage: UnsafeMutableBufferPointer<UInt8>) {
        self.storage = storage
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count < storage.count { storage[count] = byte }
        count += 1
    }

    /// Appends bytes.
    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        // Bytes that do not all fit are not stored: the count is then past the end for good,
        // and whoever reads the storage knows it is incomplete.
        if bytes.count <= storage.count &- count, let source = bytes.baseAddress {
            (storage.baseAddress! + count).update(from: source, count: bytes.count)
        }
        count += bytes.count
    }

    /// Appends a string's UTF-8 bytes.
    @inline(__always)
    mutating func append(_ string: String) {
        string.withUTF8Bytes { append(contentsOf: $0) }
    }

    /// Whether every byte appended so far is in the storage.
    private var isComplete: Bool { count <= storage.count }

    /// The string `body` writes (as UTF-8; invalid sequences are repaired, as by
    /// `String(decoding:as:)`).
    ///
    /// - Throws: What `body` throws (on its first run, if at all; else on its second).
    ///
    /// Always inlined, with `body`: called, `body` got the values it captures as copies (building a
    /// URL, a copy of the request's parameters, each of its references retained and released:
    /// about 380 instructions a request built).
    @inline(__always)
    static func string<Failure: Error>(_ body: (inout UTF8Writer) throws(Failure) -> Void) throws(Failure) -> String {
        // The first run's outcome is returned, not stored into variables the closure captures:
        // captured variables would cost an allocation of their own.
        let first = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackCapacity) {
            buffer -> Result<(string: String?, count: Int), Failure> in
            var writer = UTF8Writer(storage: buffer)
            do throws(Failure) {
                try body(&writer)
            } catch {
                return .failure(error)
            }
            guard writer.isComplete else { return .success((nil, writer.count)) }
            let string = String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
            return .success((string, writer.count))
        }
        switch first {
        case .failure(let error): throw error
        case .success((let string?, _)): return string
        case .success((nil, let count)): return try string(count: count, body)
        }
    }

    /// The string `body` writes, `count` bytes long: written into storage of that size.
    private static func string<Failure: Error>(
        count: Int, _ body: (inout UTF8Writer) throws(Failure) -> Void
    ) throws(Failure) -> String {
        var failure: Failure?
        func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
            var writer = UTF8Writer(storage: UnsafeMutableBufferPointer(rebasing: buffer[..<count]))
            do throws(Failure) {
                try body(&writer)
            } catch {
                failure = error
                return 0
            }
            precondition(writer.count == count, "UTF8Writer: the body wrote \(count) bytes, then \(writer.count)")
            return count
        }
        let string: String
        if #available(macOS 11, iOS 14, tvOS 14, watchOS 7, *) {
            string = String(unsafeUninitializedCapacity: count, initializingUTF8With: write(into:))
        } else {
            var bytes = [UInt8](repeating: 0, count: count)
            let written = bytes.withUnsafeMutableBufferPointer { write(into: $0) }
            string = String(decoding: bytes[..<written], as: UTF8.self)
        }
        if let failure { throw failure }
        return string
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes, like `withUTF8`, without copying the string
    /// first: `withUTF8` is mutating, so calling it on a parameter or a property costs a copy (a
    /// retain and a release, about 30 instructions). Native and small strings, nearly all of them,
    /// lend their bytes as they are; any other string is copied and made contiguous.
    @inline(__always)
    func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var contiguous = self
        return try contiguous.withUTF8(body)
    }

    /// Whether the two strings have the same UTF-8 bytes. Unlike `==`, which holds canonically
    /// equivalent strings equal (`"caf\u{E9}"` and `"cafe\u{301}"`), this compares what is written
    /// into a URL; and when both strings share their storage, it compares nothing.
    func hasSameUTF8(as other: String) -> Bool {
        withUTF8Bytes { bytes in
            other.withUTF8Bytes { otherBytes in
                guard bytes.count == otherBytes.count else { return false }
                guard bytes.count > 0, let left = bytes.baseAddress, let right = otherBytes.baseAddress, left != right
                else { return true }
                return memcmp(left, right, bytes.count) == 0
            }
        }
    }
}
