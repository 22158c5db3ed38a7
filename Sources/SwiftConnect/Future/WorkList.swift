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
    /// An item may drain a list of its own — an observer registered on a completed future, a
    /// promise completed, from inside an observer or a `flatMap` step — and that one runs inside
    /// it, on the same stack. Recursion through completed futures (a `flatMap` whose step returns a
    /// `flatMap` on `Future(value:)`, a page cached for each of a thousand pages) would then grow
    /// the stack by a drain per step, past its end. So from ``maximumNesting`` drains deep on, a
    /// drain runs nothing: it sends its items bound for a queue there, as it would, and leaves the
    /// others to the drain it is nested in, which runs them as soon as the item running returns,
    /// before that item's own work. The recursion then runs in that drain's loop.
    ///
    /// - Parameter current: the queue the caller is running on, or `nil` when unknown. Items
    ///   bound for another queue are sent there (consecutive ones together) and drained there.
    @usableFromInline
    func drain(on current: DispatchQueue? = nil) {
        // Most drains have nothing to run: registering on a pending future drains an empty list.
        guard !isEmpty else { return }
        let outer = DrainingQueue.frame
        if let outer, outer.pointee.depth >= Self.maximumNesting {
            outer.pointee.left.append(sendingQueuedItems())
            return
        }
        var frame = DrainFrame(
            queue: current.map { Unmanaged.passUnretained($0).toOpaque() }, depth: (outer?.pointee.depth ?? 0) + 1)
        withUnsafeMutablePointer(to: &frame) { frame in
            let replaced = DrainingQueue.mark.set(UnsafeMutableRawPointer(frame))
            defer { DrainingQueue.mark.restore(replaced) }
            run(on: current, leftBy: frame)
        }
    }

    /// How many drains deep a drain still runs its items itself (see ``drain(on:)``): deep enough
    /// that observers registering observers never notice, shallow enough for a thread's stack
    /// (512 KiB for a secondary thread on Apple platforms).
    static let maximumNesting = 16

    /// ``drain(on:)``'s loop; `frame` is this drain's, where drains nested too deep leave their
    /// items.
    private func run(on current: DispatchQueue?, leftBy frame: UnsafeMutablePointer<DrainFrame>) {
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
                var produced = item.run()
                if !frame.pointee.left.isEmpty {
                    // Left by drains nested in the item: they would have run inside it, so before
                    // what it returned.
                    var left = frame.pointee.left
                    frame.pointee.left = WorkList()
                    left.append(produced)
                    produced = left
                }
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

/// A drain running on this thread (``DrainingQueue/mark``).
struct DrainFrame {
    /// The queue whose block it runs in, unretained (the block holds it), or `nil`.
    let queue: UnsafeMutableRawPointer?
    /// 1 for a drain nested in none, 2 for one nested in that, …
    let depth: Int
    /// Items that drains nested too deep in the item running left to this one.
    var left = WorkList()
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

/// The queue whose block the current thread is draining a ``WorkList`` in, if any, and the drain
/// itself: a thread-specific value that ``WorkList/drain(on:)`` sets for the length of the drain.
///
/// A future completed during such a drain keeps its observers bound for that queue in the work
/// it returns, to run in the same block, and sends those bound for other queues at once (see
/// ``Future/takeWork(completingWith:)``).
enum DrainingQueue {
    /// The innermost drain's ``DrainFrame``, on its stack: set only while that drain runs on this
    /// thread.
    static let mark = ThreadMark()

    /// The innermost drain running on this thread, or `nil`.
    static var frame: UnsafeMutablePointer<DrainFrame>? {
        mark.current?.assumingMemoryBound(to: DrainFrame.self)
    }

    /// The queue being drained on this thread, or `nil`.
    static var current: DispatchQueue? {
        guard let queue = frame?.pointee.queue else { return nil }
        return Unmanaged<DispatchQueue>.fromOpaque(queue).takeUnretainedValue()
    }
}
