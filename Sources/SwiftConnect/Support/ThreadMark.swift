#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A pointer-sized mark per thread (pthread thread-specific data): what the thread is in the
/// middle of, set for the length of a call so that code further down its stack can ask.
struct ThreadMark: Sendable {
    private let key: pthread_key_t

    /// A mark that no thread has set yet.
    init() {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        self.key = key
    }

    /// This thread's mark, or `nil`.
    var current: UnsafeMutableRawPointer? { pthread_getspecific(key) }

    /// Marks this thread with `mark`. Returns the mark it replaced, for ``restore(_:)``, or
    /// `.none` if the thread was marked so already.
    func set(_ mark: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?? {
        let outer = pthread_getspecific(key)
        guard mark != outer else { return .none }
        pthread_setspecific(key, mark)
        return .some(outer)
    }

    /// Puts back the mark ``set(_:)`` replaced, if it replaced one.
    func restore(_ replaced: UnsafeMutableRawPointer??) {
        if case .some(let outer) = replaced { pthread_setspecific(key, outer) }
    }
}
