import Dispatch
import Testing

@testable import SwiftConnect

private typealias Fixtures = FutureFixtures
private typealias Log = FutureFixtures.Log
private typealias MarkedQueue = FutureFixtures.MarkedQueue

@Suite("WorkList: runs observers in a loop")
struct WorkListTests {
    private func item(_ queue: DispatchQueue? = nil, _ run: @escaping @Sendable () -> WorkList) -> WorkList.Item {
        WorkList.Item(queue: queue, run: run)
    }

    /// On Linux, `DispatchQueue.main` is a new wrapper object at every call: identity cannot tell it.
    @Test func theMainQueueIsToldFromOthersThroughAnyWrapperOfIt() {
        #expect(MainQueue.isMain(DispatchQueue.main))
        #expect(MainQueue.isMain(DispatchQueue.main))
        #expect(!MainQueue.isMain(DispatchQueue(label: "test.worklist.not-main")))
        #expect(!MainQueue.isMain(DispatchQueue.global()))
    }

    @Test func theFirstItemsQueueIsGivenUnlessItIsNoneOrTheMainQueue() {
        let queue = DispatchQueue(label: "test.worklist.first-queue")
        #expect(WorkList().firstQueueOtherThanMain == nil)
        #expect(WorkList(WorkList.Item(queue: nil) { .empty }).firstQueueOtherThanMain == nil)
        #expect(WorkList(WorkList.Item(queue: DispatchQueue.main) { .empty }).firstQueueOtherThanMain == nil)
        var two = WorkList(WorkList.Item(queue: queue) { .empty })
        two.append(WorkList.Item(queue: nil) { .empty })
        #expect(two.firstQueueOtherThanMain === queue)
    }

    @Test func emptyListHasNoWork() {
        #expect(WorkList.empty.isEmpty)
        #expect(!WorkList(items: [item { .empty }]).isEmpty)
    }

    @Test func appendKeepsTheOrderOfBothLists() {
        let log = Log<Int>()
        var list = WorkList(items: [
            item {
                log.append(1)
                return .empty
            }
        ])
        list.append(
            WorkList(items: [
                item {
                    log.append(2)
                    return .empty
                },
                item {
                    log.append(3)
                    return .empty
                },
            ]))
        var fromEmpty = WorkList.empty
        fromEmpty.append(list)
        fromEmpty.drain()
        #expect(log.values == [1, 2, 3])
    }

    @Test func drainRunsEveryItemOnceInOrder() {
        let log = Log<Int>()
        WorkList(
            items: (0..<50).map { index in
                item {
                    log.append(index)
                    return .empty
                }
            }
        ).drain()
        #expect(log.values == Array(0..<50))
    }

    @Test func drainRunsTheWorkThatItemsProduce() {
        let log = Log<String>()
        let produced = WorkList(items: [
            item {
                log.append("produced")
                return .empty
            }
        ])
        WorkList(items: [
            item {
                log.append("first")
                return produced
            },
            item {
                log.append("second")
                return .empty
            },
        ]).drain()
        #expect(log.values == ["first", "produced", "second"])
    }

    @Test func workProducedInTheMiddleOfAListRunsBeforeTheRestAndNested() {
        let log = Log<String>()
        let inner = WorkList(items: [
            item {
                log.append("inner")
                return .empty
            }
        ])
        let produced = WorkList(items: [
            item {
                log.append("produced 1")
                return inner
            },
            item {
                log.append("produced 2")
                return .empty
            },
        ])
        WorkList(items: [
            item {
                log.append("first")
                return .empty
            },
            item {
                log.append("second")
                return produced
            },
            item {
                log.append("third")
                return .empty
            },
        ]).drain()
        #expect(log.values == ["first", "second", "produced 1", "inner", "produced 2", "third"])
    }

    @Test func drainOfDeeplyProducedWorkRunsAtTheSameStackDepth() throws {
        let depths = Log<Int>()
        @Sendable func link(_ remaining: Int) -> WorkList {
            WorkList(items: [
                WorkList.Item(queue: nil) {
                    depths.append(Fixtures.stackAddress())
                    return remaining == 0 ? .empty : link(remaining - 1)
                }
            ])
        }
        link(100_000).drain()
        #expect(depths.count == 100_001)
        let first = try #require(depths.values.first)
        let last = try #require(depths.values.last)
        #expect(abs(first - last) < Fixtures.iterativeStackBound)
    }

    @Test func itemsForAnotherQueueRunOnThatQueueInOrder() async {
        let target = MarkedQueue("worklist.target")
        let log = Log<Bool>()
        let inTime = await Fixtures.signalled { done in
            WorkList(
                items: (0..<10).map { index in
                    item(target.queue) {
                        log.append(target.isCurrent)
                        if index == 9 { done() }
                        return .empty
                    }
                }
            ).drain()
        }
        #expect(inTime)
        #expect(log.values == Array(repeating: true, count: 10))
    }

    @Test func itemsForTheCurrentQueueRunAtOnce() {
        let target = MarkedQueue("worklist.current")
        let log = Log<String>()
        target.queue.sync {
            WorkList(items: [
                item(target.queue) {
                    log.append("item")
                    return .empty
                }
            ]).drain(on: target.queue)
            log.append("drain returned")
        }
        #expect(log.values == ["item", "drain returned"])
    }

    @Test func workProducedOnAQueueForThatQueueRunsThereInOrder() async {
        let target = MarkedQueue("worklist.produced")
        let log = Log<Int>()
        let inTime = await Fixtures.signalled { done in
            let second = WorkList(items: [
                item(target.queue) {
                    log.append(target.isCurrent ? 2 : -2)
                    done()
                    return .empty
                }
            ])
            WorkList(items: [
                item(target.queue) {
                    log.append(target.isCurrent ? 1 : -1)
                    return second
                }
            ]).drain()
        }
        #expect(inTime)
        #expect(log.values == [1, 2])
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension WorkListTests {
    private static func record(_ name: String, in order: Recorder<String>) -> WorkList.Item {
        WorkList.Item(queue: nil) {
            order.append(name)
            return .empty
        }
    }

    /// A drain nested deeper than `WorkList.maximumNesting` is left to the drain below it, and
    /// runs there before the work the item that started it returned: nested, it would have run
    /// inside that item.
    @Test func workLeftByADrainNestedTooDeepRunsBeforeWhatItsItemReturned() {
        let order = Recorder<String>()
        @Sendable func nested(_ level: Int) -> WorkList.Item {
            WorkList.Item(queue: nil) {
                guard level < WorkList.maximumNesting else {
                    WorkList(Self.record("left", in: order)).drain()
                    order.append("item")
                    return WorkList(Self.record("produced", in: order))
                }
                WorkList(nested(level + 1)).drain()
                return .empty
            }
        }
        WorkList(nested(1)).drain()
        #expect(order.values == ["item", "left", "produced"])
    }
}
