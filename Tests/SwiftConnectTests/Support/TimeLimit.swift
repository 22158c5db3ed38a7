import Testing

/// Swift Testing's `.timeLimit(.minutes(minutes))`, so that a hung test fails instead of holding
/// up CI — where the OS has it. Time limits need macOS 13, iOS 16, tvOS 16 or watchOS 9, and the
/// tests are built for the package's deployment targets (macOS 10.15, iOS 13, …), where writing
/// `.timeLimit` on a suite or test does not compile. There, this trait does nothing.
func timeLimit(minutes: Int) -> any SuiteTrait & TestTrait {
    if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
        return TimeLimitTrait.timeLimit(.minutes(minutes))
    }
    return ConditionTrait.enabled(if: true, "no time limit before macOS 13, iOS 16, tvOS 16, watchOS 9")
}

@Suite("Test support: time limits", timeLimit(minutes: 3))
struct TimeLimitTests {
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test func isSwiftTestingsTimeLimitWhereTheOSHasIt() {
        #expect((timeLimit(minutes: 2) as? TimeLimitTrait)?.timeLimit == .seconds(120))
        // A suite's limit applies to its tests.
        #expect(Test.current?.timeLimit == .seconds(180))
    }

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test(timeLimit(minutes: 1)) func aTestsOwnLimitIsTheShorter() {
        #expect(Test.current?.timeLimit == .seconds(60))
    }
}
