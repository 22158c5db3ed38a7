import Dispatch

/// Work made runnable by completing futures: observers to call, each on its queue.
///
/// Completing a future never calls its observers from inside the completion; it hands back a
/// `WorkList`, and `drain` runs the list in a loop. A chain of a thousand `map`s therefore runs
/// iteratively, never a thousand frames deep, and consecutive items bound for the same queue hop
/// to it once.
///
/// A pending future keeps its observers as a `WorkList` too, so completing it hands them over
/// as they are. One item is stored inline: a future with a single observer — every link of a
/// chain — allocates nothing for its list, and handing it over allocates nothing either.
@usableFromInline
struct WorkList: Sendable {
    /// One observer call: where it must run, and the call, which may produce more work.
    @usableFromInline
    struct Item: Sendable {
        /// The queue to run on, or `nil` to run on whichever thread drains the list.
        let queue: DispatchQueue?
        /// The call; returns the work its completion of other futures produced.
        let run: @Sendable () -> WorkList

        /// An item that runs `run` on `queue`.
        @usableFromInline
        init(queue: DispatchQueue?, run: @escaping @Sendable () -> WorkList) {
            self.queue = queue
            self.run = run
        }
    }

    private enum Items: Sendable {
        case none
        case one(Item)
        /// Two or more.
        case many([Item])
    }

    private var items = Items.none

    /// A list with no work.
    @usableFromInline
    static var empty: WorkList { WorkList() }

    @usableFromInline
    init() {}

    /// A list of one item.
    @usableFromInline
    init(_ item: Item) {
        items = .one(item)
    }

    /// A list of `items`, in order.
    init(items: [Item]) {
        switch items.count {
        case 0: self.items = .none
        case 1: self.items = .one(items[0])
        default: self.items = .many(items)
        }
    }

    @usableFromInline
    var isEmpty: Bool {
        if case .none = items { return true }
        return false
    }

    var count: Int {
        switch items {
        case .none: 0
        case .one: 1
        case .many(let all): all.count
        }
    }

    /// The queue of the first item, unless it has none or it is the main queue.
    @usableFromInline
    var firstQueueOtherThanMain: DispatchQueue? {
        let first: Item
        switch items {
        case .none: return nil
        case .one(let item): first = item
        case .many(let all): first = all[0]
        }
        guard let queue = first.queue, !MainQueue.isMain(queue) else { return nil }
        return queue
    }

    subscript(index: Int) -> Item {
        switch items {
        case .one(let item): item
        case .many(let all): all[index]
        case .none: preconditionFailure("index \(index) of an empty WorkList")
        }
    }

    @usableFromInline
    mutating func append(_ item: Item) {
        switch items {
        case .none:
            items = .one(item)
        case .one(let first):
            items = .many([first, item])
        case .many(var all):
            items = .none  // keep `all` uniquely referenced, so appending does not copy it
            all.append(item)
            items = .many(all)
        }
    }

    mutating func append(_ other: WorkList) {
        if isEmpty {
            self = other
            return
        }
        for index in 0..<other.count { append(other[index]) }
    }

    /// Sends the items bound for a queue to their queues, in order (consecutive ones together),
    /// and returns the items bound for no queue, for the caller to run.
    ///
    /// Items bound for `kept` stay in the returned list: the caller is draining a list in a block
    /// of that queue, and runs them there.
    @usableFromInline
    func sendingQueuedItems(keeping kept: DispatchQueue? = nil) -> WorkList {
        // The common case, a list with no queued item, is returned as it is (no new array).
        guard hasQueuedItem else { return self }
        var unqueued = WorkList()
        var batch = WorkList()
        var batchQueue: DispatchQueue? = nil
        for index in 0..<count {
            let item = self[index]
            guard let queue = item.queue, queue !== kept else {
                unqueued.append(item)
                continue
            }
            if queue !== batchQueue {
                batch.send(to: batchQueue)
                batch = WorkList()
                batchQueue = queue
            }
            batch.append(item)
        }
        batch.send(to: batchQueue)
        return unqueued
    }

    /// ``sendingQueuedItems(keeping:)``, keeping the items bound for the queue this thread is
    /// draining a list in (see ``drain(on:)``), if any.
    @usableFromInline
    func sendingQueuedItemsNotForThisDrain() -> WorkList {
        guard hasQueuedItem else { return self }
        return sendingQueuedItems(keeping: DrainingQueue.current)
    }

    /// Whether an item is bound for a queue.
    private var hasQueuedItem: Bool {
        switch items {
        case .none: false
        case .one(let item): item.queue != nil
        case .many(let all): all.contains { $0.queue != nil }
        }
    }

    /// Drains the list on `queue`, asynchronously; does nothing if the list is empty or `queue` nil.
    private func send(to queue: DispatchQueue?) {
        guard let queue, !isEmpty else { return }
        queue.async { [self] in drain(on: queue) }
    }

    /// Runs every item, and the items they produce, in order: what an item produces runs before
    /// the items after it.
    ///
    /// - Parameter current: the queue the caller is running on, or `nil` when unknown. Items
    ///   bound for another queue are sent there (consecutive ones together) and drained there.
    @usableFromInline
    func drain(on current: DispatchQueue? = nil) {
        // Most drains have nothing to run: registering on a pending future drains an empty list.
        guard !isEmpty else { return }
        let replaced = DrainingQueue.mark.set(current.map { Unmanaged.passUnretained($0).toOpaque() })
        defer { DrainingQueue.mark.restore(replaced) }
        var list = self
        var index = 0
        // Lists interrupted by the work one of their items produced; empty for a plain chain.
        var interrupted: [(list: WorkList, index: Int)] = []
        while true {
            guard index < list.count else {
                guard let resumed = interrupted.popLast() else { return }
                (list, index) = resumed
                continue
            }
            let item = list[index]
            if item.queue == nil || item.queue === current {
                index += 1
                let produced = item.run()
                if !produced.isEmpty {
                    if index < list.count { interrupted.append((list, index)) }
                    list = produced
                    index = 0
                }
            } else {
                let target = item.queue
                var hop = WorkList()
                while index < list.count, list[index].queue === target {
                    hop.append(list[index])
                    index += 1
                }
                hop.send(to: target)
            }
        }
    }
}

/// Tells the main queue from others. Not by identity: on Linux, `DispatchQueue.main` makes a new
/// wrapper object on every call, so `queue === DispatchQueue.main` is always `false` there; a key
/// set on the main queue itself is found through any wrapper of it.
enum MainQueue {
    /// `DispatchSpecificKey` is not marked `Sendable`; the key is immutable, and libdispatch only
    /// uses it as an identity.
    private struct Key: @unchecked Sendable {
        let key = DispatchSpecificKey<Bool>()
    }

    /// Set on the main queue the first time it is asked for.
    private static let key: Key = {
        let key = Key()
        DispatchQueue.main.setSpecific(key: key.key, value: true)
        return key
    }()

    /// Whether `queue` is the main queue.
    static func isMain(_ queue: DispatchQueue) -> Bool {
        queue.getSpecific(key: key.key) == true
    }
}

/// The queue whose block the current thread is draining a ``WorkList`` in, if any: a thread-specific
/// value that ``WorkList/drain(on:)`` sets for the length of the drain.
///
/// A future completed during such a drain keeps its observers bound for that queue in the work
/// it returns, to run in the same block, and sends those bound for other queues at once (see
/// ``Future/takeWork(completingWith:)``).
enum DrainingQueue {
    /// The queue, unretained: set only while a drain of that queue runs on this thread, and that
    /// drain's block holds the queue.
    static let mark = ThreadMark()

    /// The queue being drained on this thread, or `nil`.
    static var current: DispatchQueue? {
        mark.current.map { Unmanaged<DispatchQueue>.fromOpaque($0).takeUnretainedValue() }
    }
}
