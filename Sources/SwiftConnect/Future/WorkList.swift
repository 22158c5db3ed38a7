import Dispatch

/// Work made runnable by completing futures: observers to call, each on its queue.
///
/// Completing a future never calls its observers from inside the completion; it hands back a
/// `WorkList`, and `drain` runs the list in a loop. A chain of a thousand `map`s therefore runs
/// iteratively, never a thousand frames deep, and consecutive items bound for the same queue hop
/// to it once.
struct WorkList: Sendable {
    /// One observer call: where it must run, and the call, which may produce more work.
    struct Item: Sendable {
        /// The queue to run on, or `nil` to run on whichever thread drains the list.
        let queue: DispatchQueue?
        /// The call; returns the work its completion of other futures produced.
        let run: @Sendable () -> WorkList
    }

    var items: [Item] = []

    /// A list with no work.
    static var empty: WorkList { WorkList() }

    var isEmpty: Bool { items.isEmpty }

    mutating func append(_ other: WorkList) {
        if items.isEmpty {
            items = other.items
        } else {
            items.append(contentsOf: other.items)
        }
    }

    /// Runs every item, and the items they produce, in order.
    ///
    /// - Parameter current: the queue the caller is running on, or `nil` when unknown. Items
    ///   bound for another queue are sent there (consecutive ones together) and drained there.
    func drain(on current: DispatchQueue? = nil) {
        var pending = items[...]
        while let item = pending.first {
            if item.queue == nil || item.queue === current {
                pending.removeFirst()
                let produced = item.run()
                if !produced.isEmpty {
                    pending = ArraySlice(produced.items + pending)
                }
            } else {
                let target = item.queue
                let batch = pending.prefix { $0.queue === target }
                pending.removeFirst(batch.count)
                let hop = WorkList(items: Array(batch))
                target?.async { hop.drain(on: target) }
            }
        }
    }
}
