import Dispatch
import Testing

@testable import SwiftConnect

@Suite("LockedBox")
struct LockedBoxTests {
    private struct Failure: Error, Equatable {}

    @Test func withLockReturnsTheBodysResult() {
        let box = LockedBox(20)
        #expect(box.withLock { $0 + 1 } == 21)
    }

    @Test func mutationsInsideWithLockPersist() {
        let box = LockedBox([1])
        box.withLock { $0.append(2) }
        #expect(box.withLock { $0 } == [1, 2])
    }

    @Test func withLockRethrowsAndTheLockCanBeTakenAgain() {
        let box = LockedBox(0)
        #expect(throws: Failure()) {
            try box.withLock { value in
                value = 1
                throw Failure()
            }
        }
        #expect(box.withLock { $0 } == 1, "the lock was released after the throw")
    }

    @Test(timeLimit(minutes: 1))
    func concurrentIncrementsAreNeverLost() {
        let box = LockedBox(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { box.withLock { $0 += 1 } }
        }
        #expect(box.withLock { $0 } == 80_000)
    }

    @Test func boxReleasesItsValueWhenReleased() {
        weak var captured: FutureFixtures.Tracked?
        do {
            let object = FutureFixtures.Tracked()
            captured = object
            let box = LockedBox<FutureFixtures.Tracked?>(object)
            #expect(box.withLock { $0 } != nil)
        }
        #expect(captured == nil)
    }
}
