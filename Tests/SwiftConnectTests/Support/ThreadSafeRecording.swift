import Foundation

/// A thread-safe counter, shared by the test fixtures.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    /// Adds one and returns the new count.
    @discardableResult
    func increment() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }

    var value: Int { lock.withLock { count } }
}

/// A thread-safe list of values, in the order they were appended, shared by the test fixtures.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `elements` is only touched under `lock`.
    private let lock = NSLock()
    private var elements: [Element] = []

    func append(_ element: Element) {
        lock.withLock { elements.append(element) }
    }

    var values: [Element] { lock.withLock { elements } }
    var count: Int { lock.withLock { elements.count } }
}
