import Testing

@testable import SwiftConnect

@Suite("TaskTable")
struct TaskTableTests {
    @Test func storesFindsReplacesAndRemovesEntries() {
        var table = TaskTable<String>()
        #expect(table.isEmpty)
        table[1] = "one"
        table[2] = "two"
        #expect(table[1] == "one")
        #expect(table[2] == "two")
        #expect(table[3] == nil)
        #expect(table.count == 2)

        table[1] = "uno"
        #expect(table[1] == "uno")
        #expect(table.count == 2)

        #expect(table.removeValue(forKey: 1) == "uno")
        #expect(table.removeValue(forKey: 1) == nil)
        #expect(table[1] == nil)
        table[2] = nil
        #expect(table[2] == nil)
        #expect(table.isEmpty)
    }

    /// Keys 16 apart share a home slot in the first table (16 slots): removing one in the middle of
    /// their probe run must leave those behind it reachable, and so must removing the head.
    @Test func entriesBehindARemovedOneInTheirRunStayReachable() {
        var table = TaskTable<Int>()
        for key in [3, 19, 35, 4, 51] { table[key] = key * 10 }
        #expect(table.removeValue(forKey: 19) == 190)
        for key in [3, 35, 4, 51] { #expect(table[key] == key * 10, "key \(key)") }
        #expect(table.removeValue(forKey: 3) == 30)
        for key in [35, 4, 51] { #expect(table[key] == key * 10, "key \(key)") }
        #expect(table[19] == nil)
        #expect(table.count == 3)
    }

    /// A run that starts in the last slot continues at slot 0: the backward shift has to follow it
    /// around the end of the table.
    @Test func aRunWrappingAroundTheEndOfTheTableSurvivesRemovals() {
        var table = TaskTable<Int>()
        for key in [15, 31, 47, 0, 63] { table[key] = key + 1 }
        #expect(table.removeValue(forKey: 15) == 16)
        for key in [31, 47, 0, 63] { #expect(table[key] == key + 1, "key \(key)") }
        #expect(table.removeValue(forKey: 47) == 48)
        for key in [31, 0, 63] { #expect(table[key] == key + 1, "key \(key)") }
    }

    /// A run wrapping around the end: removing the entry in the last slot must move back both
    /// entries behind it, across the end, each one slot nearer its home.
    @Test func aRemovalInTheLastSlotKeepsEntriesAtTheirHomeAcrossTheEnd() {
        var table = TaskTable<Int>()
        // 15 in slot 15; 31 (home 15) takes slot 0 from 16, whose home it is, as it is further
        // from its own; 16 moves on to slot 1.
        for key in [15, 16, 31] { table[key] = key + 1 }
        #expect(table.removeValue(forKey: 15) == 16)
        #expect(table[16] == 17)
        #expect(table[31] == 32)
        #expect(table[15] == nil)
        #expect(table.count == 2)
    }

    /// Negative and extreme identifiers land in a slot like any other, and removing a key that is
    /// not there — never stored, or stored and removed — changes nothing.
    @Test func negativeExtremeAndAbsentKeys() {
        var table = TaskTable<Int>()
        let keys = [Int.min, Int.max, -1, 0, -16, Int.min + 15, Int.max - 15]
        for (value, key) in keys.enumerated() { table[key] = value }
        #expect(table.count == keys.count)
        for (value, key) in keys.enumerated() { #expect(table[key] == value, "key \(key)") }
        #expect(table.removeValue(forKey: 1) == nil)
        #expect(table.removeValue(forKey: -17) == nil)
        #expect(table.removeValue(forKey: Int.min) == 0)
        #expect(table.removeValue(forKey: Int.min) == nil)
        #expect(table.count == keys.count - 1)
        for (value, key) in keys.enumerated().dropFirst() { #expect(table[key] == value, "key \(key)") }
    }

    /// Against `Dictionary`, with keys no session would count up to: negative ones, the extremes,
    /// random ones, and many that share a handful of home slots in every table size up to 2^20 —
    /// among them the last slot, so that runs wrap around the end — inserted, replaced and
    /// removed (present or not) at random while the table grows.
    @Test(arguments: [11, 12, 13, 14, 15] as [UInt64])
    func behavesAsADictionaryWhateverTheKeys(seed: UInt64) {
        var generator = SeededGenerator(state: seed)
        let homes = [0, 1, 2, (1 << 20) - 1, (1 << 20) - 2]
        var pool = [Int.min, Int.max, Int.min + 1, Int.max - 1, -1, 0, 1]
        for home in homes { pool += (-25...25).map { home + ($0 << 20) } }
        pool += (0..<40).map { _ in Int.random(in: Int.min...Int.max, using: &generator) }
        var table = TaskTable<Int>()
        var model: [Int: Int] = [:]
        // Checked with plain comparisons, one `#expect` at the end: thousands of expectations a
        // test are slow enough under ThreadSanitizer to hold up the suite's other tests.
        var mismatches: [String] = []
        func check(_ agrees: Bool, _ what: @autoclosure () -> String) {
            if !agrees, mismatches.count < 10 { mismatches.append(what()) }
        }
        for step in 0..<20_000 {
            let key = pool.randomElement(using: &generator)!
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                model[key] = step
                table[key] = step
            case 5..<8:
                check(table.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step): remove \(key)")
            default:
                check(table[key] == model[key], "step \(step): lookup \(key)")
            }
            check(table.count == model.count, "step \(step): count")
            if step.isMultiple(of: 1_000) {
                for key in pool { check(table[key] == model[key], "step \(step): key \(key)") }
                check(table.brokenRule() == nil, "step \(step): \(table.brokenRule() ?? "")")
            }
        }
        for key in pool { check(table[key] == model[key], "at the end: key \(key)") }
        #expect(mismatches.isEmpty, "seed \(seed): \(mismatches)")
    }

    @Test func growsPastItsFirstSizeKeepingEveryEntry() {
        var table = TaskTable<Int>()
        for key in 1...1_000 { table[key] = -key }
        #expect(table.count == 1_000)
        for key in 1...1_000 { #expect(table[key] == -key, "key \(key)") }
        for key in stride(from: 2, through: 1_000, by: 2) { table[key] = nil }
        #expect(table.count == 500)
        for key in 1...1_000 { #expect(table[key] == (key.isMultiple(of: 2) ? nil : -key), "key \(key)") }
    }

    /// A burst of requests in flight grew the table for good: a session that once had 100,000 in
    /// flight kept some 3 MB of slots for its lifetime. The table shrinks as its entries leave,
    /// keeping every entry that stays, and does not resize back and forth around one count.
    @Test func shrinksAsABurstEndsKeepingTheEntriesThatStay() {
        var table = TaskTable<Int>()
        for key in 1...100_000 { table[key] = key }
        let grown = table.capacity
        #expect(grown >= 200_000)
        // Everything ends but every thousandth task.
        for key in 1...100_000 where !key.isMultiple(of: 1_000) { table[key] = nil }
        #expect(table.count == 100)
        #expect(table.capacity <= 1_024, "capacity \(table.capacity) for 100 entries")
        #expect(table.capacity >= 256, "still at most half full")
        var lost: [Int] = []
        for key in 1...100_000 where table[key] != (key.isMultiple(of: 1_000) ? key : nil) { lost.append(key) }
        #expect(lost.isEmpty, "\(lost.prefix(10))")
        #expect(table.brokenRule() == nil)
        for key in stride(from: 1_000, through: 100_000, by: 1_000) { table[key] = nil }
        #expect(table.isEmpty)
        #expect(table.capacity == TaskTable<Int>.minimumCapacity)

        // Around the line: 64 entries take 128 slots; down to 16 of them, the table halves. One
        // entry in and out there leaves it as it is.
        for key in 1...64 { table[key] = key }
        #expect(table.capacity == 128)
        for key in 17...64 { table[key] = nil }
        #expect(table.capacity == 64)
        for round in 0..<100 {
            table[1_000 + round] = round
            table[1_000 + round] = nil
        }
        #expect(table.capacity == 64)
        #expect(table.count == 16)
        for key in 1...16 { #expect(table[key] == key) }
    }

    /// Against `Dictionary`, under what a session does: identifiers counting up, most tasks ending
    /// soon after they start, some living on while thousands of others come and go, with random
    /// lookups of live and finished ones in between.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func behavesAsADictionaryUnderASessionsWorkload(seed: UInt64) {
        var generator = SeededGenerator(state: seed)
        var table = TaskTable<Int>()
        var model: [Int: Int] = [:]
        var live: [Int] = []  // the keys in `model`, oldest first
        var nextIdentifier = 1
        var mismatches: [String] = []
        func check(_ agrees: Bool, _ what: @autoclosure () -> String) {
            if !agrees, mismatches.count < 10 { mismatches.append(what()) }
        }
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                model[nextIdentifier] = step
                table[nextIdentifier] = step
                live.append(nextIdentifier)
                nextIdentifier += 1
            case 4..<8:
                // Mostly one of the oldest few ends; now and then any one does.
                guard !live.isEmpty else { continue }
                let index =
                    Int.random(in: 0..<10, using: &generator) == 0
                    ? Int.random(in: 0..<live.count, using: &generator)
                    : min(live.count - 1, Int.random(in: 0..<3, using: &generator))
                let pick = live.remove(at: index)
                check(
                    table.removeValue(forKey: pick) == model.removeValue(forKey: pick), "step \(step): remove \(pick)")
            default:
                let key = Int.random(in: max(1, nextIdentifier - 100)...nextIdentifier, using: &generator)
                check(table[key] == model[key], "step \(step): lookup \(key)")
            }
            check(table.count == model.count, "step \(step): count")
            if step.isMultiple(of: 500) {
                check(table.brokenRule() == nil, "step \(step): \(table.brokenRule() ?? "")")
            }
        }
        for (key, value) in model { check(table[key] == value, "at the end: key \(key)") }
        #expect(mismatches.isEmpty, "seed \(seed): \(mismatches)")
    }
}
