/// A map from a URLSession task's identifier to what the delegate keeps for it, looked up on every
/// delegate callback (four or five a request, with its registration).
///
/// A `Dictionary<Int, Value>` hashes each key with SipHash and looks up its storage's generic
/// metadata: about 800 instructions a request, against about 250 here (callgrind;
/// Benchmarks/HISTORY.md, "Twenty-first round"). A session numbers its tasks 1, 2, 3, …, so the
/// identifier itself, masked, is a good slot: this open-addressing table probes linearly from
/// there and deletes by shifting the entries behind back, which keeps every probe run unbroken
/// with no tombstones. It grows when half full, so probe runs stay short whatever the identifiers.
struct TaskTable<Value> {
    private var keys: [Int]
    private var values: [Value?]
    /// The number of entries.
    private(set) var count = 0

    /// An empty table.
    init() {
        keys = Array(repeating: 0, count: 16)
        values = Array(repeating: nil, count: 16)
    }

    private var mask: Int { keys.count - 1 }

    /// Whether the table has no entries.
    var isEmpty: Bool { count == 0 }

    /// The slot holding `key`, or `nil`.
    private func slot(of key: Int) -> Int? {
        var index = key & mask
        while values[index] != nil {
            if keys[index] == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The value for `key`, or `nil`. Setting `nil` removes the entry.
    subscript(key: Int) -> Value? {
        get { slot(of: key).flatMap { values[$0] } }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            if let index = slot(of: key) {
                values[index] = newValue
                return
            }
            if (count + 1) * 2 > keys.count { grow() }
            insertNew(key, newValue)
        }
    }

    /// Removes the entry for `key` and returns its value, or returns `nil` if there is none.
    @discardableResult
    mutating func removeValue(forKey key: Int) -> Value? {
        guard var hole = slot(of: key) else { return nil }
        let removed = values[hole]
        values[hole] = nil
        count -= 1
        // Backward shift: an entry further along the run moves into the hole unless its home slot
        // lies cyclically in (hole, index], where a probe from its home would still reach it.
        var index = hole
        while true {
            index = (index + 1) & mask
            guard values[index] != nil else { break }
            let home = keys[index] & mask
            let staysReachable = hole <= index ? (hole < home && home <= index) : (hole < home || home <= index)
            if staysReachable { continue }
            keys[hole] = keys[index]
            values[hole] = values[index]
            values[index] = nil
            hole = index
        }
        return removed
    }

    /// Puts `value` in the first free slot of `key`'s run; `key` must not be in the table.
    private mutating func insertNew(_ key: Int, _ value: Value) {
        var index = key & mask
        while values[index] != nil { index = (index + 1) & mask }
        keys[index] = key
        values[index] = value
        count += 1
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: 0, count: oldKeys.count * 2)
        values = Array(repeating: nil, count: oldKeys.count * 2)
        count = 0
        for (key, value) in zip(oldKeys, oldValues) {
            if let value { insertNew(key, value) }
        }
    }
}
