import Dispatch

/// A serial queue marked so that a callback can tell whether it runs there.
struct QueueMarker: @unchecked Sendable {
    // @unchecked Sendable: DispatchSpecificKey is immutable after creation and only used as an
    // identity by libdispatch; it is not marked Sendable in corelibs-libdispatch.
    let key = DispatchSpecificKey<String>()
    let queue: DispatchQueue
    let label: String

    init(label: String) {
        self.label = label
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: label)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == label }
}
