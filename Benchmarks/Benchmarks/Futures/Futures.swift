// Suite 3 — futures: a promise, a chain of 10 combinators (5 map, 5 flatMap, alternating) and
// 3 observers on its tail, completed once; against the same chain written with async/await.
//
// The chain is built pending and completed afterwards (the usual case: a request is in flight
// while its chain is built), on the completing thread (a Promise without a callback queue), so the
// figures are the futures' own cost with no queue hop. Per-combinator figures in the README are
// (chain − promise and 3 observers alone) ÷ 10.

import Benchmark
import BenchmarkSupport
import SwiftConnect

// Closures are typed out: ten untyped ones in one expression defeat the type checker.

@inline(never)
func futureChain() {
    let promise = Promise<Int>()
    let tail = promise.future
        .map { (v: Int) -> Int in v &+ 1 }
        .flatMap { (v: Int) -> Future<Int> in Future(value: v &* 3) }
        .map { (v: Int) -> Int in v &- 2 }
        .flatMap { (v: Int) -> Future<Int> in Future(value: v ^ 0x5A) }
        .map { (v: Int) -> Int in v &+ 7 }
        .flatMap { (v: Int) -> Future<Int> in Future(value: v &* 5) }
        .map { (v: Int) -> Int in v &- 11 }
        .flatMap { (v: Int) -> Future<Int> in Future(value: v ^ 0x3C) }
        .map { (v: Int) -> Int in v &+ 13 }
        .flatMap { (v: Int) -> Future<Int> in Future(value: v &* 17) }
    observeThrice(tail)
    promise.succeed(1)
}

/// The three observers every variant registers on its tail.
@inline(__always)
func observeThrice(_ future: Future<Int>) {
    future.observe { (result: Result<Int, any Error>) in blackHole(result) }
    future.whenSuccess { (value: Int) in blackHole(value) }
    future.observe { (result: Result<Int, any Error>) in blackHole(result) }
}

@inline(never)
func promiseAndObservers() {
    let promise = Promise<Int>()
    observeThrice(promise.future)
    promise.succeed(1)
}

@inline(never)
func tenMaps() {
    let promise = Promise<Int>()
    var tail = promise.future
    for offset in 1...10 {
        tail = tail.map { (v: Int) -> Int in v &+ offset }
    }
    observeThrice(tail)
    promise.succeed(1)
}

@inline(never)
func tenFlatMaps() {
    let promise = Promise<Int>()
    var tail = promise.future
    for offset in 1...10 {
        tail = tail.flatMap { (v: Int) -> Future<Int> in Future(value: v &+ offset) }
    }
    observeThrice(tail)
    promise.succeed(1)
}

/// An asynchronous step, as a `flatMap` is: an `async` function the chain awaits.
@inline(never)
func step(_ value: Int, _ factor: Int) async -> Int {
    value &* factor
}

/// The same chain with async/await: the promise is a continuation, `map` a statement, `flatMap`
/// an awaited async function, and the three observers the code that uses the value.
@inline(never)
func asyncChain() async {
    var value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
        continuation.resume(returning: 1)
    }
    value = value &+ 1
    value = await step(value, 3)
    value = value &- 2
    value = await step(value, 0x5A)
    value = value &+ 7
    value = await step(value, 5)
    value = value &- 11
    value = await step(value, 0x3C)
    value = value &+ 13
    value = await step(value, 17)
    blackHole(value)
    blackHole(value)
    blackHole(value)
}

let benchmarks: @Sendable () -> Void = {

    Benchmark("Future-chain10-observers3", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations { futureChain() }
    }

    Benchmark("AsyncAwait-chain10-baseline", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations { await asyncChain() }
    }

    Benchmark("Future-promise-observers3", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations { promiseAndObservers() }
    }

    Benchmark("Future-map10-observers3", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations { tenMaps() }
    }

    Benchmark("Future-flatMap10-observers3", configuration: MicroBenchmark.configuration()) { benchmark in
        for _ in benchmark.scaledIterations { tenFlatMaps() }
    }

    let timeRatio = Ratio.metric("Future/async time x1000", prefersLarger: false)
    let alternation = Alternation()
    // 20 %, not 10: the async/await chain takes about 0.2 µs, and this ratio's median has moved
    // between 18.6× and 21.7× from run to run at the same futures code.
    Benchmark(
        "Ratio-chain-Future-over-async",
        configuration: MicroBenchmark.configuration([timeRatio], ratios: [timeRatio], ratioPercent: 20)
    ) {
        benchmark in
        let (baseline, candidate) = await alternation.run(
            baseline: {
                await Elapsed.measureAsync {
                    for _ in benchmark.scaledIterations { await asyncChain() }
                }
            },
            candidate: {
                Elapsed.measure {
                    for _ in benchmark.scaledIterations { futureChain() }
                }
            })
        benchmark.measurement(timeRatio, Ratio.permille(Double(candidate.cpu), over: Double(baseline.cpu)))
    }
}
