import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures

/// `URLSessionTransport`'s delegate, driven by hand: the session's tasks are created but never
/// resumed, and the delegate callbacks URLSession would make are made by the test. No sockets.
@Suite("URLSessionTransport: SessionDelegate")
struct SessionDelegateTests {
    private static let url = URL(string: "http://127.0.0.1:9/protected")!

    /// A session (no delegate of its own: the test calls the delegate) and one unstarted task.
    private final class Harness: @unchecked Sendable {
        // @unchecked Sendable: every member is set once in init and only read afterwards; the
        // URLSession types are thread-safe but not marked Sendable in FoundationNetworking.
        let session = URLSession(configuration: .ephemeral)
        let delegate = SessionDelegate()
        let task: URLSessionDataTask

        init() {
            task = session.dataTask(with: URLRequest(url: SessionDelegateTests.url))
        }

        deinit {
            session.invalidateAndCancel()
        }

        func respond(status: Int, headers: [String: String] = [:]) {
            let response = HTTPURLResponse(
                url: SessionDelegateTests.url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            delegate.urlSession(session, dataTask: task, didReceive: response) { _ in }
        }

        func receive(_ text: String) {
            delegate.urlSession(session, dataTask: task, didReceive: Data(text.utf8))
        }

        /// The delegate's answer to a challenge (given on another thread on Linux; a checked
        /// continuation traps if it is given twice).
        func challenge(_ method: String) async -> URLSession.AuthChallengeDisposition {
            await withCheckedContinuation { continuation in
                delegate.urlSession(session, task: task, didReceive: ChallengeFactory.challenge(method: method)) {
                    answer, _ in
                    continuation.resume(returning: answer)
                }
            }
        }

        /// Presents a challenge without waiting for the answer.
        func present(challenge method: String) {
            delegate.urlSession(session, task: task, didReceive: ChallengeFactory.challenge(method: method)) { _, _ in }
        }

        func complete(error: (any Error)?) {
            delegate.urlSession(session, task: task, didCompleteWithError: error)
        }

        /// Registers the task, lets `drive` make the delegate calls, and returns what `send` would.
        func run(_ drive: @escaping @Sendable (Harness) -> Void) async throws -> (Data, Int) {
            let (data, response) = try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, completion: .continuation(SessionDelegate.Waiter(continuation)))
                drive(self)
            }
            return (data, response.statusCode)
        }
    }

    @Test func redirectsAreNeverFollowedByURLSession() async {
        let harness = Harness()
        let redirect = HTTPURLResponse(
            url: Self.url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": "http://other.test/"])!
        let proposal = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            harness.delegate.urlSession(
                harness.session, task: harness.task, willPerformHTTPRedirection: redirect,
                newRequest: URLRequest(url: URL(string: "http://other.test/")!)
            ) { request in
                continuation.resume(returning: request?.url?.absoluteString ?? "nil")
            }
        }
        #expect(proposal == "nil")
    }

    @Test func responseAndBodyChunksAreBufferedAndReturnedOnCompletion() async throws {
        let (data, status) = try await Harness().run { harness in
            harness.respond(status: 200, headers: ["Content-Type": "application/json"])
            harness.receive(#"{"a":"#)
            harness.receive(#"1}"#)
            harness.complete(error: nil)
        }
        #expect(status == 200)
        #expect(data == Data(#"{"a":1}"#.utf8))
    }

    @Test func responseWithoutBodyGivesEmptyData() async throws {
        let (data, status) = try await Harness().run { harness in
            harness.respond(status: 204)
            harness.complete(error: nil)
        }
        #expect(status == 204)
        #expect(data.isEmpty)
    }

    @Test func basicChallengeIsNotAnsweredWithCredentials() async {
        let disposition = await Harness().challenge(NSURLAuthenticationMethodHTTPBasic)
        #if canImport(FoundationNetworking)
            #expect(disposition == .cancelAuthenticationChallenge)
        #else
            #expect(disposition == .rejectProtectionSpace)
        #endif
    }

    @Test func digestChallengeIsNotAnsweredWithCredentials() async {
        let disposition = await Harness().challenge(NSURLAuthenticationMethodHTTPDigest)
        #expect(disposition != .useCredential)
        #expect(disposition != .performDefaultHandling)
    }

    @Test func serverTrustChallengeGetsDefaultHandling() async {
        #expect(await Harness().challenge("NSURLAuthenticationMethodServerTrust") == .performDefaultHandling)
    }

    #if canImport(FoundationNetworking)
        @Test func immediateOperationQueueRunsEachBlockBeforeReturningOnTheCallingThread() {
            let queue = ImmediateOperationQueue()
            let log = Fixtures.Recorder<String>()
            let caller = pthread_self()
            queue.addOperation {
                log.append(pthread_equal(pthread_self(), caller) != 0 ? "ran on caller" : "ran elsewhere")
            }
            log.append("returned")
            #expect(log.values == ["ran on caller", "returned"])
        }

        /// An IPv6 literal is a valid host (RFC 3986 §3.2.2) and the build takes it, but
        /// FoundationNetworking refuses it before connecting: Usage.md says so, and this notices the
        /// day it does not.
        @Test func anIPv6LiteralHostFailsWithBadURLOnLinux() async throws {
            let connector = TestConnector(baseURL: try #require(URL(string: "http://[::1]:9/api")), endpoint: "/x")
            let connect = Connect()
            #expect(try connect.urlRequest(for: connector).url?.absoluteString == "http://[::1]:9/api/x")
            let result = await connect.request(connector).asyncResult
            guard case .failure(ConnectError.transport(let underlying)) = result else {
                Issue.record("expected a transport error, got \(result)")
                return
            }
            #expect(URLError.code(of: underlying) == .badURL)
        }

        @Test func cancelledBasicChallengeStillReturnsThe401WithItsBody() async throws {
            let (data, status) = try await Harness().run { harness in
                harness.respond(status: 401, headers: ["WWW-Authenticate": #"Basic realm="api""#])
                harness.receive(#"{"message":"log in first"}"#)
                harness.present(challenge: NSURLAuthenticationMethodHTTPBasic)
                harness.complete(error: URLError(.userCancelledAuthentication))
            }
            #expect(status == 401)
            #expect(data == Data(#"{"message":"log in first"}"#.utf8))
        }

        @Test func cancelledChallengeWithoutAResponseFailsWithAuthenticationRequired() async throws {
            let error = await #expect(throws: URLError.self) {
                _ = try await Harness().run { harness in
                    harness.present(challenge: NSURLAuthenticationMethodHTTPBasic)
                    harness.complete(error: URLError(.userCancelledAuthentication))
                }
            }
            #expect(error?.code == .userAuthenticationRequired)
        }
    #endif

    @Test func taskErrorIsThrownUnchanged() async throws {
        let error = await #expect(throws: URLError.self) {
            _ = try await Harness().run { harness in
                harness.complete(error: URLError(.networkConnectionLost))
            }
        }
        #expect(error?.code == .networkConnectionLost)
    }

    @Test func completionWithoutAResponseIsAnInvalidResponse() async throws {
        let error = await #expect(throws: ConnectError.self) {
            _ = try await Harness().run { harness in harness.complete(error: nil) }
        }
        guard case .invalidResponse? = error else {
            Issue.record("expected .invalidResponse, got \(String(describing: error))")
            return
        }
    }

    @Test func onlyTheFirstCompletionOfATaskCounts() async throws {
        // A second completion must not resume the continuation again (that would trap).
        let (data, status) = try await Harness().run { harness in
            harness.respond(status: 200)
            harness.receive("first")
            harness.complete(error: nil)
            harness.receive("late")
            harness.complete(error: URLError(.timedOut))
        }
        #expect(status == 200)
        #expect(data == Data("first".utf8))
    }
}

/// Builds authentication challenges by hand.
private enum ChallengeFactory {
    /// A sender that is never called: the delegate answers through its completion handler.
    final class Sender: NSObject, URLAuthenticationChallengeSender {
        func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
        func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
        func cancel(_ challenge: URLAuthenticationChallenge) {}
        func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
        func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
    }

    static func challenge(method: String) -> URLAuthenticationChallenge {
        let space = URLProtectionSpace(
            host: "127.0.0.1", port: 9, protocol: "http", realm: "api", authenticationMethod: method)
        return URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil,
            sender: Sender())
    }
}

/// A data task that URLSession never runs: it counts cancellations, and its `cancel()` waits for
/// `release` as FoundationNetworking's waits for the session's queue.
private final class BlockingCancelTask: URLSessionDataTask, @unchecked Sendable {
    // @unchecked Sendable: `count` and `calls` are only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    private var calls = 0
    let release = DispatchSemaphore(value: 0)

    /// `cancel()` calls that returned.
    var cancellations: Int { lock.withLock { count } }
    /// `cancel()` calls made, returned or still waiting for `release`.
    var cancelCalls: Int { lock.withLock { calls } }

    override func resume() {}

    override func cancel() {
        lock.withLock { calls += 1 }
        _ = release.wait(timeout: .now() + 5)
        lock.withLock { count += 1 }
    }
}

@Suite("SessionTaskSlot: cancelling")
struct SessionTaskSlotTests {
    /// Waits up to two seconds for `condition`.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }

    /// A Swift task's cancellation handler calls `cancel()` holding the task's lock; URLSession's
    /// queue, delivering that task's response, needs the lock. Waiting there for URLSession's
    /// `cancel()`, which waits for that queue, deadlocked: the slot must never wait for it.
    @Test func cancelReturnsWithoutWaitingForURLSessionsCancel() async {
        let slot = SessionTaskSlot()
        let task = BlockingCancelTask()
        slot.start(task)
        let start = DispatchTime.now()
        slot.cancel()
        let waited = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(waited < 1, "cancel() waited \(waited) s")
        #expect(slot.isCancelled)
        task.release.signal()
        #expect(await eventually { task.cancellations == 1 })
    }

    /// A task whose `cancel()` returns at once.
    private func releasedTask() -> BlockingCancelTask {
        let task = BlockingCancelTask()
        task.release.signal()
        return task
    }

    /// A slot whose first transfer URLSession has completed: where a request stands when a
    /// redirect's next hop is decided.
    private func slotAfterACompletedTransfer() -> (slot: SessionTaskSlot, first: BlockingCancelTask) {
        let slot = SessionTaskSlot()
        let first = releasedTask()
        slot.start(first)
        slot.finish(first)
        return (slot, first)
    }

    /// A transfer URLSession has completed is not cancelled any more: FoundationNetworking traps
    /// when a completed task is cancelled as it leaves its registry.
    @Test func aTransferURLSessionCompletedIsLeftAlone() async {
        let (slot, task) = slotAfterACompletedTransfer()
        slot.cancel()
        try? await Task.sleep(nanoseconds: 200_000_000)
        #expect(task.cancellations == 0)

        // A later transfer of the same request (a redirect's next hop) is still cancelled.
        let next = releasedTask()
        let (redirected, _) = slotAfterACompletedTransfer()
        redirected.hold(Task {})
        redirected.start(next)
        redirected.cancel()
        #expect(await eventually { next.cancellations == 1 })
    }

    /// A `.decide` policy's task may follow the redirect — start the next transfer — before the
    /// exchange holds it: holding it then must not hide that transfer from `cancel()`, which left
    /// it running to the end.
    @Test func holdingATaskThatAlreadyStartedTheNextTransferKeepsThatTransferCancellable() async {
        let (slot, first) = slotAfterACompletedTransfer()
        let next = releasedTask()
        slot.start(next)  // what the asking task did before `hold` ran
        slot.hold(Task {})
        slot.cancel()
        #expect(await eventually { next.cancellations == 1 })
        #expect(first.cancellations == 0)
    }

    /// The same, a hop further: the next transfer's own redirect was asked about, and that task
    /// held, before the earlier task was.
    @Test func holdingAnOlderTaskKeepsTheNewerOneCancellable() async {
        let (slot, _) = slotAfterACompletedTransfer()
        let newer = Task<Void, Never> { try? await Task.sleep(nanoseconds: 5_000_000_000) }
        slot.hold(newer)
        slot.hold(Task {})
        slot.cancel()
        #expect(await eventually { newer.isCancelled })
    }

    @Test func aTransferStartedAfterCancellingIsCancelledToo() async {
        let slot = SessionTaskSlot()
        slot.cancel()
        let task = releasedTask()
        slot.start(task)
        #expect(await eventually { task.cancellations == 1 })
    }

    // FoundationNetworking asks the session's URLCache about a request on a background queue
    // before it sends it. A cancel() meanwhile queues its failure of the task behind that reply;
    // preempted, the reply can queue it after the whole transfer has completed and left the
    // session's registry, and FoundationNetworking traps. So a transfer is cancelled once
    // URLSession has answered for it, or after the slot's `beginWait`. Waits are long where a test
    // must tell the two apart, so that a loaded machine (ThreadSanitizer) cannot blur them.

    /// Waits up to 30 seconds for `condition`: long enough for a loaded machine, far shorter than
    /// a minute's `beginWait`.
    private func soon(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<3_000 {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }

    @Test(.enabled(if: SessionTaskSlot.waitsForTransferToBegin))
    func aTransferIsCancelledOnceItHasBegun() async {
        let slot = SessionTaskSlot(beginWait: .seconds(60))
        let task = releasedTask()
        slot.start(task)
        slot.cancel()
        #expect(slot.isCancelled)
        try? await Task.sleep(nanoseconds: 100_000_000)
        #expect(task.cancellations == 0, "cancelled before URLSession answered for the transfer")
        slot.began(task)
        #expect(await soon { task.cancellations == 1 })
    }

    // FoundationNetworking traps when a task is cancelled while it waits for the delegate's
    // answer to a redirect, whichever of the two reaches its queue first. The transport answers
    // that the 3xx is the response, so an answered transfer ends by itself; a transfer whose
    // cancellation is committed gets no answer.

    /// A redirect answered: a cancellation waiting for the transfer to begin, or one that comes
    /// later, leaves the transfer alone.
    @Test func aTransferWhoseRedirectIsAnsweredIsNotCancelled() async {
        let slot = SessionTaskSlot(beginWait: .milliseconds(50))
        let waiting = releasedTask()
        slot.start(waiting)
        slot.cancel()
        #expect(slot.redirecting(waiting))
        let later = SessionTaskSlot()
        let answered = releasedTask()
        later.start(answered)
        #expect(later.redirecting(answered))
        later.cancel()
        try? await Task.sleep(nanoseconds: 300_000_000)
        #expect(waiting.cancellations == 0)
        #expect(answered.cancellations == 0)
    }

    /// A cancellation committed first: the redirect must not be answered, and the cancellation
    /// goes on.
    @Test func aRedirectAfterACommittedCancellationIsNotAnswered() async {
        let slot = SessionTaskSlot()
        let task = BlockingCancelTask()
        slot.start(task)
        slot.began(task)
        slot.cancel()
        #expect(await soon { task.cancelCalls == 1 })  // committed: inside URLSession's cancel()
        #expect(!slot.redirecting(task))
        task.release.signal()
        #expect(await soon { task.cancellations == 1 })
    }

    @Test func aTransferThatHasBegunIsCancelledWithoutWaiting() async {
        let slot = SessionTaskSlot(beginWait: .seconds(60))
        let task = releasedTask()
        slot.start(task)
        slot.began(task)
        slot.cancel()
        #expect(await soon { task.cancellations == 1 })
    }

    @Test(.enabled(if: SessionTaskSlot.waitsForTransferToBegin))
    func aTransferThatNeverBeginsIsCancelledAfterTheWait() async {
        let slot = SessionTaskSlot(beginWait: .milliseconds(100))
        let task = releasedTask()
        slot.start(task)
        slot.cancel()
        #expect(await soon { task.cancellations == 1 })
    }

    @Test(.enabled(if: SessionTaskSlot.waitsForTransferToBegin))
    func aTransferCompletedWhileItsCancellationWaitedIsLeftAlone() async {
        let slot = SessionTaskSlot(beginWait: .milliseconds(100))
        let task = releasedTask()
        slot.start(task)
        slot.cancel()
        slot.finish(task)
        try? await Task.sleep(nanoseconds: 500_000_000)
        #expect(task.cancellations == 0)
        slot.began(task)  // a late answer changes nothing
        try? await Task.sleep(nanoseconds: 100_000_000)
        #expect(task.cancellations == 0)
    }

    /// A transfer registered with `delegate`, started, and cancelled before URLSession answered
    /// for it: the cancellation waits for it to begin, or for `beginWait`.
    private func cancelledAfterStarting(
        through delegate: SessionDelegate, beginWait: DispatchTimeInterval
    ) -> BlockingCancelTask {
        let slot = SessionTaskSlot(beginWait: beginWait)
        let task = releasedTask()
        delegate.register(task, completion: .callback { _, _ in }, slot: slot)
        slot.start(task)
        slot.cancel()
        return task
    }

    /// The delegate's first answer for a transfer — its response or upload progress — is what lets
    /// a waiting cancellation through. (A redirect ends the transfer instead: below.)
    @Test(.enabled(if: SessionTaskSlot.waitsForTransferToBegin), arguments: ["response", "upload progress"])
    func theDelegatesFirstAnswerLetsAWaitingCancellationThrough(answer: String) async {
        let delegate = SessionDelegate()
        let task = cancelledAfterStarting(through: delegate, beginWait: .seconds(60))
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(task.cancellations == 0, "cancelled before URLSession answered for the transfer")
        let url = URL(string: "http://127.0.0.1:9/todos/1")!
        switch answer {
        case "response":
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
            delegate.urlSession(URLSession.shared, dataTask: task, didReceive: response) { _ in }
        default:
            delegate.urlSession(
                URLSession.shared, task: task, didSendBodyData: 10, totalBytesSent: 10, totalBytesExpectedToSend: 100)
        }
        #expect(await soon { task.cancellations == 1 }, "the \(answer) did not let the cancellation through")
    }

    /// The delegate answers a redirect at once, with `nil` (the 3xx is the response), and a
    /// cancellation waiting for the transfer to begin is dropped: the transfer ends by itself.
    /// With a cancellation committed, it does not answer (on Linux), as the cancellation ends it.
    @Test func theDelegateAnswersARedirectUnlessACancellationIsCommitted() async {
        let url = URL(string: "http://127.0.0.1:9/todos/1")!
        let response = HTTPURLResponse(
            url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: ["Location": "/other"])!
        let answers = Fixtures.Recorder<URLRequest?>()
        func redirect(_ delegate: SessionDelegate, _ task: URLSessionTask) {
            delegate.urlSession(
                URLSession.shared, task: task, willPerformHTTPRedirection: response, newRequest: URLRequest(url: url)
            ) { answers.append($0) }
        }

        let delegate = SessionDelegate()
        let task = cancelledAfterStarting(through: delegate, beginWait: .milliseconds(50))
        redirect(delegate, task)
        #expect(answers.values.count == 1 && answers.values.first! == nil)
        try? await Task.sleep(nanoseconds: 300_000_000)
        #expect(task.cancellations == 0)

        let committed = SessionTaskSlot()
        let cancelling = BlockingCancelTask()
        delegate.register(cancelling, completion: .callback { _, _ in }, slot: committed)
        committed.start(cancelling)
        committed.began(cancelling)
        committed.cancel()
        #expect(await soon { cancelling.cancelCalls == 1 })
        redirect(delegate, cancelling)
        #if canImport(FoundationNetworking)
            #expect(answers.values.count == 1)
        #else
            #expect(answers.values.count == 2)
        #endif
        cancelling.release.signal()
    }
}

#if canImport(FoundationNetworking)
    /// FoundationNetworking calls a connection lost in the middle of a body `.unknown`, with only
    /// libcurl's text to tell it apart; Apple's URLSession calls it `.networkConnectionLost`.
    @Suite("URLSessionTransport: a body cut short")
    struct BodyCutShortTests {
        private static let url = URL(string: "http://127.0.0.1:9/items")!

        private static func unknown(_ text: String) -> URLError {
            URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: text])
        }

        private static func response(_ headers: [String: String]) -> HTTPURLResponse? {
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)
        }

        private static func code(_ error: any Error) -> URLError.Code? { (error as? URLError)?.code }

        /// libcurl 7's words (a `Content-Length` not reached, a chunked body without its last
        /// chunk) and libcurl 8's, with or without a response to compare with.
        @Test(arguments: [
            "transfer closed with 93 bytes remaining to read", "transfer closed with outstanding read data remaining",
            "end of response with 93 bytes missing",
        ])
        func libcurlsWordsForACutBodyAreALostConnection(text: String) {
            let classified = SessionDelegate.classified(Self.unknown(text), response: nil, received: 0)
            #expect(Self.code(classified) == .networkConnectionLost)
            #expect(classified.localizedDescription == text)
        }

        /// Whatever libcurl says, fewer bytes than the `Content-Length` is a body cut short.
        @Test func fewerBytesThanTheContentLengthIsALostConnectionWhateverTheText() {
            let response = Self.response(["Content-Length": "100"])
            let classified = SessionDelegate.classified(
                Self.unknown("some future wording"), response: response, received: 7)
            #expect(Self.code(classified) == .networkConnectionLost)
        }

        /// Other failures keep their code: an unknown error with the whole body (or a compressed
        /// body, whose length is not what was received), and every error of another code.
        @Test func otherFailuresAreLeftAsTheyAre() {
            let whole = Self.response(["Content-Length": "7"])
            #expect(
                Self.code(SessionDelegate.classified(Self.unknown("other"), response: whole, received: 7)) == .unknown)
            let compressed = Self.response(["Content-Length": "100", "Content-Encoding": "gzip"])
            let inflating = Self.unknown("Error while processing content unencoding: invalid stored block lengths")
            #expect(Self.code(SessionDelegate.classified(inflating, response: compressed, received: 7)) == .unknown)
            #expect(
                Self.code(SessionDelegate.classified(Self.unknown("other"), response: nil, received: 0)) == .unknown)
            let timeout = URLError(.timedOut, userInfo: [NSLocalizedDescriptionKey: "transfer closed with 3 bytes"])
            #expect(Self.code(SessionDelegate.classified(timeout, response: nil, received: 0)) == .timedOut)
        }
    }
#endif
