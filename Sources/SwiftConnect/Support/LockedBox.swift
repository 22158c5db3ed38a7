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
/// One allocation holds both the value and the lock: a `ManagedBuffer` whose header is the value
/// and whose single element is the platform lock, so the lock's address is stable. Copies of a
/// box share that storage, as references to a class would.
struct LockedBox<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access to the value goes through `withLock`, which holds the lock.
    private let storage: LockedStorage<Value>

    /// Creates a box holding `value`.
    init(_ value: Value) {
        storage = LockedStorage<Value>.make(value)
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code inside `body`.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        storage.lock()
        defer { storage.unlock() }
        return try storage.withUnsafeMutablePointerToHeader { try body(&$0.pointee) }
    }
}

/// The value and its lock in one allocation.
final class LockedStorage<Value>: ManagedBuffer<Value, PlatformLock> {
    static func make(_ value: Value) -> LockedStorage<Value> {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock_s())
            #else
                lock.initialize(to: pthread_mutex_t())
                pthread_mutex_init(lock, nil)
            #endif
        }
        return storage
    }

    /// Takes the lock, waiting while another thread holds it. Pair it with ``unlock()`` on the
    /// same thread.
    @inline(__always)
    func lock() {
        withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
            #else
                _ = pthread_mutex_lock(lock)
            #endif
        }
    }

    /// Releases the lock this thread took with ``lock()``.
    @inline(__always)
    func unlock() {
        withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                os_unfair_lock_unlock(lock)
            #else
                _ = pthread_mutex_unlock(lock)
            #endif
        }
    }

    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if !canImport(Darwin)
                pthread_mutex_destroy(lock)
            #endif
            _ = lock.deinitialize(count: 1)
        }
    }
}

/// A lock alone, for state kept outside it — a ``Future``'s state, with one lock shared by a chain.
///
/// `lock()` and `unlock()` rather than a `withLock { }`: `Future`'s inlinable code calls them from
/// other modules, and two plain calls keep the platform's lock out of that code. Pair every
/// `lock()` with an `unlock()` on the same thread (a `defer`), and never call out to user code in
/// between.
///
/// The storage's header holds what the chain keeps beside its futures' states: whether it has an
/// observer on its callback queue (``hasObserverOnQueue``), and, for a chain with no callback
/// queue, the observers kept until their future's delivery is over (``keep(_:for:)``).
@usableFromInline
struct StateLock: @unchecked Sendable {
    // @unchecked Sendable: the storage holds the lock, made for sharing, and a header only touched
    // while the lock is held.
    private let storage = LockedStorage<Chain>.make(Chain())

    /// What a chain keeps under its lock besides its futures' states: plain values, so that the
    /// storage has nothing to destroy.
    struct Chain {
        var hasObserverOnQueue = false
        /// Observers bound for no queue, registered on completed futures of the chain while the
        /// thread that completed them still ran their earlier observers (``Future/isDelivering``),
        /// each with its future; allocated only when there are any, and freed when the last is
        /// taken.
        var kept: Unmanaged<KeptObservers>? = nil
    }

    /// The observers ``Chain/kept`` holds.
    final class KeptObservers {
        var items: [(future: ObjectIdentifier, item: WorkList.Item)] = []
    }

    /// Creates an unlocked lock.
    @usableFromInline
    init() {}

    /// Takes the lock, waiting while another thread holds it.
    @usableFromInline
    func lock() {
        storage.lock()
    }

    /// Releases the lock this thread took with ``lock()``.
    @usableFromInline
    func unlock() {
        storage.unlock()
    }

    /// Notes that a future of the chain has an observer, or a step, bound for the chain's callback
    /// queue. Call it with the lock held.
    @usableFromInline
    func noteObserverOnQueue() {
        storage.withUnsafeMutablePointerToHeader { $0.pointee.hasObserverOnQueue = true }
    }

    /// Whether ``noteObserverOnQueue()`` was called: the chain's result is headed for its
    /// callback queue (`observe`, `map`, …), not only awaited. Takes the lock.
    var hasObserverOnQueue: Bool {
        storage.lock()
        defer { storage.unlock() }
        return storage.withUnsafeMutablePointerToHeader { $0.pointee.hasObserverOnQueue }
    }

    /// Keeps `item`, an observer of `future` bound for no queue, until `future`'s delivery is over
    /// (``takeKept(for:)``). Call it with the lock held.
    @usableFromInline
    func keep(_ item: WorkList.Item, for future: ObjectIdentifier) {
        storage.withUnsafeMutablePointerToHeader { chain in
            let kept = chain.pointee.kept ?? Unmanaged.passRetained(KeptObservers())
            chain.pointee.kept = kept
            kept.takeUnretainedValue().items.append((future, item))
        }
    }

    /// Removes and returns the observers kept for `future`, in order. Call it with the lock held.
    func takeKept(for future: ObjectIdentifier) -> [WorkList.Item] {
        storage.withUnsafeMutablePointerToHeader { chain in
            guard let kept = chain.pointee.kept else { return [] }
            let box = kept.takeUnretainedValue()
            let items = box.items.filter { $0.future == future }.map(\.item)
            box.items.removeAll { $0.future == future }
            if box.items.isEmpty {
                chain.pointee.kept = nil
                kept.release()
            }
            return items
        }
    }
}
