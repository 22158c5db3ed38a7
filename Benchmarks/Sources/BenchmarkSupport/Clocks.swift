#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Wall-clock and process-CPU readings, in nanoseconds.
public struct Reading: Sendable {
    /// Monotonic wall-clock time.
    public let wall: UInt64
    /// CPU time of the whole process: every thread, user and system.
    public let cpu: UInt64

    /// Reads both clocks now.
    public static func now() -> Reading {
        Reading(wall: read(CLOCK_MONOTONIC), cpu: read(CLOCK_PROCESS_CPUTIME_ID))
    }

    /// What elapsed between `start` and this reading.
    public func since(_ start: Reading) -> Elapsed {
        Elapsed(wall: wall &- start.wall, cpu: cpu &- start.cpu)
    }

    private static func read(_ clock: clockid_t) -> UInt64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// Wall-clock and process-CPU time spent on some work, in nanoseconds.
public struct Elapsed: Sendable {
    /// Wall-clock nanoseconds.
    public var wall: UInt64
    /// Process-CPU nanoseconds (all threads).
    public var cpu: UInt64

    /// Times synchronous work.
    public static func measure(_ work: () throws -> Void) rethrows -> Elapsed {
        let start = Reading.now()
        try work()
        return Reading.now().since(start)
    }

    /// Times asynchronous work.
    public static func measureAsync(_ work: () async throws -> Void) async rethrows -> Elapsed {
        let start = Reading.now()
        try await work()
        return Reading.now().since(start)
    }
}
