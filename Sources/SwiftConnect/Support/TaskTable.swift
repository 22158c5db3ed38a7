/// A map from a URLSession task's identifier to what the delegate keeps for it, looked up on every
/// delegate callback (four or five a request, with its registration).
///
/// A `Dictionary<Int, Value>` hashes each key with SipHash and looks up its storage's generic
/// metadata: about 800 instructions a request, against about 250 here (callgrind;
/// Benchmarks/HISTORY.md, "Twenty-first round"). A session numbers its tasks 1, 2, 3, …, so the
/// identifier itself, masked, is a good slot: this open-addressing table probes linearly from
/// there.
///
/// Entries are kept in Robin Hood order: along a run of occupied slots, an entry is never more than
/// one slot further from its home than the entry before it is from its own. A removal then shifts back
/// only the entries behind it that sit away from home, and stops at the first that is home (or at
/// an empty slot), with no tombstones. With plain linear probing a removal had to scan the whole
/// run behind it: tasks in flight with consecutive identifiers fill consecutive slots, so ending
/// the oldest of 100,000 scanned the other 99,999 (a test of that took 6½ minutes).
///
/// The table grows when half full, so runs stay short whatever the identifiers, and shrinks when an
/// eighth full, so that a burst of thousands of requests in flight does not keep its slots for the
/// session's lifetime.
struct TaskTable<Value> {
    /// The size a table starts at and never shrinks below.
    static var minimumCapacity: Int { 16 }

    private var keys: [Int]
    private var values: [Value?]
    /// The number of entries.
    private(set) var count = 0

    /// An empty table.
    init() {
        keys = Array(repeating: 0, count: Self.minimumCapacity)
        values = Array(repeating: nil, count: Self.minimumCapacity)
    }

    /// The number of slots: a power of two, at least ``minimumCapacity``.
    var capacity: Int { keys.count }

    /// Whether the table has no entries.
    var isEmpty: Bool { count == 0 }

    private var mask: Int { keys.count - 1 }

    /// How far the entry in the occupied slot `index` sits from its home slot.
    private func distance(at index: Int) -> Int {
        (index &- keys[index]) & mask  // wrapping: identifiers may be anything, Int.min included
    }

    /// The slot holding `key`, or `nil`.
    private func slot(of key: Int) -> Int? {
        var index = key & mask
        var distance = 0
        while values[index] != nil {
            if keys[index] == key { return index }
            // In Robin Hood order, `key` would sit before any entry nearer its own home.
            if self.distance(at: index) < distance { return nil }
            index = (index + 1) & mask
            distance += 1
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
            if (count + 1) * 2 > keys.count { resize(to: keys.count * 2) }
            insertNew(key, newValue)
        }
    }

    /// Removes the entry for `key` and returns its value, or returns `nil` if there is none.
    @discardableResult
    mutating func removeValue(forKey key: Int) -> Value? {
        guard var hole = slot(of: key) else { return nil }
        let removed = values[hole]
        count -= 1
        // Backward shift: each entry behind that is away from home moves one slot nearer it. The
        // first entry at home, or an empty slot, ends the run of entries that probed past `hole`.
        while true {
            let next = (hole + 1) & mask
            guard values[next] != nil, distance(at: next) > 0 else { break }
            keys[hole] = keys[next]
            values[hole] = values[next]
            hole = next
        }
        values[hole] = nil
        // Halving at an eighth full leaves the table a quarter full: far enough from growing
        // again that a count going up and down around the line does not resize on every step.
        if count * 8 <= keys.count, keys.count > Self.minimumCapacity { resize(to: keys.count / 2) }
        return removed
    }

    /// Puts `value` under `key`, which must not be in the table, keeping Robin Hood order: it
    /// takes the first slot whose entry is nearer its home than `key` would be to its own there,
    /// and that entry moves on the same way.
    private mutating func insertNew(_ key: Int, _ value: Value) {
        var key = key
        var value: Value? = value
        var index = key & mask
        var distance = 0
        while values[index] != nil {
            let resident = self.distance(at: index)
            if resident < distance {
                swap(&key, &keys[index])
                swap(&value, &values[index])
                distance = resident
            }
            index = (index + 1) & mask
            distance += 1
        }
        keys[index] = key
        values[index] = value
        count += 1
    }

    /// The first place the table breaks its own rules, for tests: a count that is not the number
    /// of entries, or an entry further from home than the one before it by more than one slot
    /// (out of Robin Hood order), which a removal's early stop would then leave unreachable.
    func brokenRule() -> String? {
        let occupied = values.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        if occupied != count { return "count \(count), \(occupied) entries" }
        for index in values.indices where values[index] != nil {
            let previous = (index - 1) & mask
            let limit = values[previous] == nil ? 0 : distance(at: previous) + 1
            if distance(at: index) > limit {
                return "key \(keys[index]) in slot \(index): \(distance(at: index)) from home, limit \(limit)"
            }
        }
        return nil
    }

    /// Moves every entry into a table of `capacity` slots, a power of two with room for them.
    private mutating func resize(to capacity: Int) {
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        count = 0
        for (key, value) in zip(oldKeys, oldValues) {
            if let value { insertNew(key, value) }
        }
    }
}
