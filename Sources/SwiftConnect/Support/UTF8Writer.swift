/// Builds a string from bytes in one allocation of exactly the right size.
///
/// ``string(_:)`` runs its body twice: first with a writer that only counts, then with one that
/// writes into the new string's storage. The body must append the same bytes both times (it
/// works on values that do not change in between); a body that wrote more the second time
/// stops at a precondition rather than overrun the storage.
///
/// This replaces building a string piece by piece (each `+=` may reallocate) or in a `[UInt8]`
/// that is then copied into a `String`.
struct UTF8Writer {
    /// The number of bytes appended so far.
    private(set) var count = 0
    /// Where the bytes go; `nil` while counting.
    private let storage: UnsafeMutableBufferPointer<UInt8>?

    private init(storage: UnsafeMutableBufferPointer<UInt8>?) {
        self.storage = storage
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if let storage {
            precondition(count < storage.count, "UTF8Writer: the body wrote more than it counted")
            storage[count] = byte
        }
        count += 1
    }

    /// Appends bytes.
    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        if let storage, let source = bytes.baseAddress {
            precondition(bytes.count <= storage.count - count, "UTF8Writer: the body wrote more than it counted")
            (storage.baseAddress! + count).update(from: source, count: bytes.count)
        }
        count += bytes.count
    }

    /// Appends a string's UTF-8 bytes.
    @inline(__always)
    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append(contentsOf: $0) }
    }

    /// Appends a substring's UTF-8 bytes.
    @inline(__always)
    mutating func append(_ substring: Substring) {
        var substring = substring
        substring.withUTF8 { append(contentsOf: $0) }
    }

    /// The string `body` writes (as UTF-8; invalid sequences are repaired, as by
    /// `String(decoding:as:)`).
    ///
    /// - Throws: What `body` throws (it is expected to throw while counting, if at all).
    static func string<Failure: Error>(_ body: (inout UTF8Writer) throws(Failure) -> Void) throws(Failure) -> String {
        var counter = UTF8Writer(storage: nil)
        try body(&counter)
        let count = counter.count
        if count == 0 { return "" }
        var failure: Failure?
        func write(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
            var writer = UTF8Writer(storage: UnsafeMutableBufferPointer(rebasing: buffer[..<count]))
            do {
                try body(&writer)
            } catch {
                failure = error
                return 0
            }
            precondition(writer.count == count, "UTF8Writer: the body wrote fewer bytes than it counted")
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
