#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(Darwin)
    typealias PlatformLock = os_unfair_lock_s
#else
    typealias PlatformLock = pthread_mutex_t
#endif

/// A value guarded by a lock, with `withLock { }` as its only door.
///
/// One allocation holds both the value and the lock (a `ManagedBuffer` whose header is the value
/// and whose single element is the platform lock), so the lock's address is stable.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access to `value` goes through `withLock`, which holds the lock.
    private let buffer: ManagedBuffer<Value, PlatformLock>

    /// Creates a box holding `value`.
    init(_ value: Value) {
        buffer = ManagedBuffer<Value, PlatformLock>.create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock_s())
            #else
                lock.initialize(to: pthread_mutex_t())
                pthread_mutex_init(lock, nil)
            #endif
        }
    }

    deinit {
        buffer.withUnsafeMutablePointerToElements { lock in
            #if !canImport(Darwin)
                pthread_mutex_destroy(lock)
            #endif
            _ = lock.deinitialize(count: 1)
        }
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code inside `body`.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeMutablePointers { value, lock in
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
                defer { os_unfair_lock_unlock(lock) }
            #else
                pthread_mutex_lock(lock)
                defer { pthread_mutex_unlock(lock) }
            #endif
            return try body(&value.pointee)
        }
    }
}
