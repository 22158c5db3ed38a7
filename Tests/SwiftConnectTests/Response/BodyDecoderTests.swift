import Foundation
import Testing

@testable import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Fixtures = PipelineFixtures
private typealias Todo = PipelineFixtures.Todo

private struct Profile: Decodable, Sendable, Equatable {
    let firstName: String
    let lastName: String
}

private struct Event: Decodable, Sendable, Equatable {
    let name: String
    let startsAt: Date
}

/// A `Connect` whose every request answers `status` with `body`.
private func connect(
    body: String, status: Int = 200, configure: (inout ConnectConfiguration) -> Void = { _ in }
) -> Connect {
    Fixtures.connect(transport: StubTransport { _ in Fixtures.json(body, status: status) }, configure: configure)
}

@Suite("BodyDecoder: decoded(toType:keyPath:)")
struct DecodedTests {
    @Test func wholeBodyDecodesIntoTheModel() async throws {
        let todo = try await connect(body: #"{"id":1,"title":"Buy milk"}"#)
            .request(TestConnector()).decoded(toType: Todo.self).value
        #expect(todo == Todo(id: 1, title: "Buy milk"))
    }

    @Test func wholeBodyMissingAKeyFailsNamingTheKeyAtTheTopLevel() async throws {
        let result = await connect(body: #"  {"id":1}"#)
            .request(TestConnector()).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.keyPath == nil)
        #expect(failure.reason == "key 'title' not found at the top level", "reason: \(failure.reason)")
        #expect(failure.underlyingError is DecodingError)
    }

    /// The body of `request(_:)` came from a response: a failure to decode it says which.
    @Test func aRequestsBodyThatFailsToDecodeCarriesTheResponse() async throws {
        let body = #"{"id":"x","title":"t"}"#
        let connect = connect(body: body, status: 203)
        let results = [
            await connect.request(TestConnector()).decoded(toType: Todo.self).asyncResult.map { _ in () },
            await connect.request(TestConnector()).decoded(toType: Todo.self, keyPath: "id").asyncResult.map { _ in ()
            },
            await connect.request(TestConnector()).decodedIfPresent(toType: Todo.self).asyncResult.map { _ in () },
            await connect.response(TestConnector()).data.decoded(toType: Todo.self).asyncResult.map { _ in () },
            await connect.request(TestConnector()).mapError { $0 }.decoded(toType: Todo.self).asyncResult.map { _ in ()
            },
        ]
        for result in results {
            let failure = try #require(decodingFailure(Fixtures.error(of: result)))
            #expect(failure.response?.statusCode == 203)
            let error = try #require(Fixtures.error(of: result) as? ConnectError)
            #expect(error.statusCode == 203)
            #expect(error.responseBody == Data(body.utf8))
        }
    }

    /// The usage document's `chained()`: the second request's body, decoded after `flatMap`, still
    /// says which response it was — also after `flatRecover`, `recover` and `mapError`.
    @Test func aBodyFromAFlatMapThatFailsToDecodeCarriesTheSecondResponse() async throws {
        let body = #"{"data":{"item":{"id":"x"}}}"#
        let first = connect(body: #"{"id":1,"title":"t"}"#)
        let second = connect(body: body, status: 202)
        let chained = first.request(TestConnector()).decoded(toType: Todo.self)
            .flatMap { _ in second.request(TestConnector()) }
        let recovered = first.request(TestConnector(endpoint: "/missing"))
            .map { _ -> Data in throw Fixtures.TestError(code: "first failed") }
            .flatRecover { _ in second.request(TestConnector()) }
        let results = [
            await chained.decoded(toType: Todo.self, keyPath: "data.item").asyncResult.map { _ in () },
            await first.request(TestConnector()).flatMap { _ in second.request(TestConnector()) }.mapError { $0 }
                .decodedIfPresent(toType: Todo.self, keyPath: "data.item").asyncResult.map { _ in () },
            await recovered.decoded(toType: Todo.self).asyncResult.map { _ in () },
            // A success passes through `recover` and `flatRecover` unchanged.
            await second.request(TestConnector()).recover { throw $0 }.decoded(toType: Todo.self).asyncResult
                .map { _ in () },
            await second.request(TestConnector()).flatRecover { _ in SwiftConnect.Future(value: Data()) }
                .decoded(toType: Todo.self).asyncResult.map { _ in () },
        ]
        for result in results {
            let error = try #require(Fixtures.error(of: result) as? ConnectError)
            #expect(error.statusCode == 202)
            #expect(error.responseBody == Data(body.utf8))
        }
    }

    @Test func bodyThatIsNotFromAResponseFailsWithoutOne() async throws {
        let result = await Future(value: Data("[]".utf8)).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.response == nil)
        // A body mapped from the response's is a body of its own: no response is claimed for it.
        let mapped = await connect(body: "[]").request(TestConnector()).map { $0 + Data(" ".utf8) }
            .decoded(toType: Todo.self).asyncResult
        #expect(try #require(decodingFailure(Fixtures.error(of: mapped))).response == nil)
    }

    @Test func wholeBodyNullFailsSayingNull() async throws {
        let result = await connect(body: " null")
            .request(TestConnector()).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason == "the body is null", "no key path was given; reason: \(failure.reason)")
        let atKeyPath = await connect(body: #"{"data":null}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data").asyncResult
        let nullAtKeyPath = try #require(decodingFailure(Fixtures.error(of: atKeyPath)))
        #expect(nullAtKeyPath.reason == "the value at the key path is null")
    }

    @Test func nullDecodesAsNilForAnOptionalType() async throws {
        let whole = try await connect(body: " null").request(TestConnector()).decoded(toType: Int?.self).value
        #expect(whole == nil)
        let body = #"{"data":{"count":null,"todo":null,"n":3}}"#
        let count = try await connect(body: body)
            .request(TestConnector()).decoded(toType: Int?.self, keyPath: "data.count").value
        #expect(count == nil)
        let todo = try await connect(body: body)
            .request(TestConnector()).decoded(toType: Todo?.self, keyPath: "data.todo").value
        #expect(todo == nil)
        let n = try await connect(body: body).request(TestConnector()).decoded(toType: Int?.self, keyPath: "data.n")
            .value
        #expect(n == 3)
        // Optional or not, a key path that leads nowhere is still an error (decodedIfPresent gives nil).
        let missing = await connect(body: body)
            .request(TestConnector()).decoded(toType: Int?.self, keyPath: "data.absent").asyncResult
        #expect(decodingFailure(Fixtures.error(of: missing)) != nil)
    }

    @Test func nestedKeyPathDecodesTheValueThere() async throws {
        let body = #"{"data":{"item":{"id":2,"title":"Nested"},"other":{"id":"not a todo"}},"meta":{}}"#
        let todo = try await connect(body: body)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item").value
        #expect(todo == Todo(id: 2, title: "Nested"))
    }

    /// As `requiredJSONKeys` does: a top-level key with dots in its name is found as it is, and
    /// comes first; without it, the path is walked.
    @Test func aTopLevelKeyWithDotsInItsNameIsFoundAsItIs() async throws {
        let literal = try await connect(body: #"{"user.name":"dot","user":{"name":"nested"}}"#)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "user.name").value
        #expect(literal == "dot")
        let walked = try await connect(body: #"{"user":{"name":"nested"}}"#)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "user.name").value
        #expect(walked == "nested")
        let present = try await connect(body: #"{"user.name":"dot"}"#)
            .request(TestConnector()).decodedIfPresent(toType: String.self, keyPath: "user.name").value
        #expect(present == "dot")
    }

    @Test func arrayIndexInKeyPathSelectsThatElement() async throws {
        let body = #"{"items":[{"name":"zero"},{"name":"one"},{"name":"two"}]}"#
        let name = try await connect(body: body)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "items.1.name").value
        #expect(name == "one")
    }

    @Test func arrayIndexSkipsOverElementsOfAnyKind() async throws {
        let body = #"{"values":["a",2,null,[1,2],{"k":"v"},"target"]}"#
        let value = try await connect(body: body)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "values.5").value
        #expect(value == "target")
    }

    @Test func keyPathCanSelectAnArray() async throws {
        let body = #"{"data":{"items":[{"id":1,"title":"a"},{"id":2,"title":"b"}]}}"#
        let todos = try await connect(body: body)
            .request(TestConnector()).decoded(toType: [Todo].self, keyPath: "data.items").value
        #expect(todos.map(\.id) == [1, 2])
    }

    @Test func missingKeyPathFailsWithDecodingNamingTypeKeyPathAndReason() async throws {
        let result = await connect(body: #"{"data":{"other":1}}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.type.contains("Todo"))
        #expect(failure.keyPath == "data.item")
        #expect(!failure.reason.isEmpty)
        #expect(failure.description.contains("Todo"))
        #expect(failure.description.contains("data.item"))
        #expect(failure.description.contains(failure.reason))
    }

    /// The reason must say what is wrong: the key is absent, not `null`.
    @Test func missingKeyPathReasonSaysTheValueIsMissingNotNull() async throws {
        let result = await connect(body: #"{"data":{"other":1}}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        let reason = failure.reason.lowercased()
        #expect(
            reason.contains("missing") || reason.contains("not found") || reason.contains("no value"),
            "reason: \(failure.reason)")
        #expect(!reason.contains("null"), "reason: \(failure.reason)")
    }

    @Test func missingKeyPathReasonNamesTheMissingKeyAndWhereTheWalkStopped() async throws {
        let result = await connect(body: #"{"data":{"other":1}}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item.title").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("'item'"), "reason: \(failure.reason)")
        #expect(failure.reason.contains("'data'"), "reason: \(failure.reason)")
    }

    @Test func nullAtKeyPathFailsWithReasonSayingNull() async throws {
        let result = await connect(body: #"{"data":{"item":null}}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("null"))
    }

    @Test func arrayIndexOutOfRangeFailsWithDecoding() async throws {
        let result = await connect(body: #"{"items":[{"name":"only"}]}"#)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "items.3.name").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.keyPath == "items.3.name")
    }

    @Test func arrayIndexOutOfRangeReasonNamesTheIndex() async throws {
        let result = await connect(body: #"{"items":[{"name":"only"}]}"#)
            .request(TestConnector()).decoded(toType: String.self, keyPath: "items.3.name").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("3"), "reason: \(failure.reason)")
        #expect(failure.reason.contains("'items'"), "reason: \(failure.reason)")
    }

    @Test func missingKeyInModelReasonNamesTheKey() async throws {
        let result = await connect(body: #"{"id":1}"#)
            .request(TestConnector()).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("title"))
        #expect(failure.underlyingError is DecodingError)
    }

    @Test func typeMismatchReasonNamesTheCodingPath() async throws {
        let body = #"{"data":{"item":{"id":"seven","title":"x"}}}"#
        let result = await connect(body: body)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data.item").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("id"), "reason: \(failure.reason)")
        #expect(failure.reason.contains("Int"), "reason: \(failure.reason)")
    }

    @Test func typeMismatchInsideAnArrayNamesTheIndex() async throws {
        let body = #"[{"id":1,"title":"a"},{"id":2,"title":false}]"#
        let result = await connect(body: body).request(TestConnector()).decoded(toType: [Todo].self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("1.title") || failure.reason.contains("1"), "reason: \(failure.reason)")
        #expect(failure.codingPath == "1.title")
        #expect(failure.reason.contains("title"), "reason: \(failure.reason)")
    }

    /// `codingPath` says where decoding failed, from the body's top, whatever the key path asked.
    @Test(
        arguments: [
            (#"{"id":1}"#, nil, "title"),  // a missing key, at the top level
            (#"{"data":{"item":{"id":"seven","title":"x"}}}"#, "data.item", "data.item.id"),  // a mismatch
            (#"{"list":[{"id":1,"title":"a"},{"id":2,"title":false}]}"#, "list.1", "list.1.title"),  // in an array
            (#"{"data":{"item":{"id":null,"title":"x"}}}"#, "data.item", "data.item.id"),  // a null
            (#"{"data":{}}"#, "data.item", "data.item"),  // the key path runs out
            (#"{"items":[]}"#, "items.2", "items.2"),  // an index past the end
            (#"{"data":{"item":null}}"#, "data.item", "data.item"),  // null at the key path
            (#"{"data":null}"#, "data.item", "data"),  // null on the way
            (#"{"id":1,"title":"#, nil, nil),  // not JSON
            (#"[1,2]"#, nil, nil),  // the wrong kind of value, at the top
            ("", nil, nil),  // no body
        ] as [(String, String?, String?)])
    func aFailureSaysWhereInTheBodyItHappened(body: String, keyPath: String?, codingPath: String?) async throws {
        let result = await connect(body: body)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: keyPath).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.codingPath == codingPath, "reason: \(failure.reason)")
        #expect(failure.keyPath == keyPath, "the key path stays the one asked for")
    }

    @Test func malformedJSONFailsWithDecoding() async throws {
        let result = await connect(body: #"{"id":1,"title":"#)
            .request(TestConnector()).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("JSON"), "reason: \(failure.reason)")
    }

    /// JSONDecoder reports a body that does not parse and a value its type refuses (an unknown
    /// enum case, a date in another format) as the same `dataCorrupted`: the reason says which,
    /// rather than "invalid JSON" for a body that is valid JSON.
    @Test func aValueTheTypeRefusesIsNotReportedAsInvalidJSON() async throws {
        struct Ticket: Decodable, Sendable {
            enum Status: String, Decodable, Sendable { case open, closed }
            let status: Status
        }
        let unknownCase = await connect(body: #"{"data":{"status":"pending"}}"#)
            .request(TestConnector()).decoded(toType: Ticket.self, keyPath: "data").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: unknownCase)))
        #expect(failure.reason.hasPrefix("invalid value at 'data.status': "), "reason: \(failure.reason)")
        #expect(failure.reason.contains("pending"), "reason: \(failure.reason)")

        let otherDateFormat = await connect(body: #""yesterday""#) { $0.jsonDecoder.dateDecodingStrategy = .iso8601 }
            .request(TestConnector()).decoded(toType: Date.self).asyncResult
        let dateFailure = try #require(decodingFailure(Fixtures.error(of: otherDateFormat)))
        #expect(dateFailure.reason.hasPrefix("invalid value at the top level: "), "reason: \(dateFailure.reason)")

        let html = await connect(body: "<html><body>Bad gateway</body></html>")
            .request(TestConnector()).decoded(toType: Ticket.self).asyncResult
        let htmlFailure = try #require(decodingFailure(Fixtures.error(of: html)))
        #expect(htmlFailure.reason.hasPrefix("the body is not valid JSON"), "reason: \(htmlFailure.reason)")
    }

    /// Foundation on Linux gives a date in another format no coding path, or the path of the
    /// object holding it: the reason does not call that the top level, or the object, the place.
    @Test func aRefusedValueInsideAnObjectIsNotPlacedAtTheTopLevel() async throws {
        struct Stamp: Decodable, Sendable { let at: Date }
        struct Log: Decodable, Sendable { let stamps: [Stamp] }
        let iso8601: (inout ConnectConfiguration) -> Void = { $0.jsonDecoder.dateDecodingStrategy = .iso8601 }
        let result = await connect(body: #"{"at":"2024-01-01 10:00"}"#, configure: iso8601)
            .request(TestConnector()).decoded(toType: Stamp.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(!failure.reason.contains("top level"), "reason: \(failure.reason)")
        #if os(Linux)
            #expect(failure.reason.hasPrefix("invalid value in the body: "), "reason: \(failure.reason)")
        #endif

        let nested = await connect(body: #"{"stamps":[{"at":"2024-01-01 10:00"}]}"#, configure: iso8601)
            .request(TestConnector()).decoded(toType: Log.self).asyncResult
        let nestedFailure = try #require(decodingFailure(Fixtures.error(of: nested)))
        #expect(!nestedFailure.reason.contains("at 'stamps.0'"), "reason: \(nestedFailure.reason)")
        #if os(Linux)
            #expect(nestedFailure.reason.hasPrefix("invalid value at or inside 'stamps.0': "))
        #endif

        // Under snake_case conversion the path names `logStamps`, the JSON `log_stamps`: found all
        // the same, so the object is not claimed as the place either.
        struct SnakeLog: Decodable, Sendable { let logStamps: [Stamp] }
        let snake = await connect(body: #"{"log_stamps":[{"at":"2024-01-01 10:00"}]}"#) {
            $0.jsonDecoder.dateDecodingStrategy = .iso8601
            $0.jsonDecoder.keyDecodingStrategy = .convertFromSnakeCase
        }.request(TestConnector()).decoded(toType: SnakeLog.self).asyncResult
        let snakeFailure = try #require(decodingFailure(Fixtures.error(of: snake)))
        #expect(!snakeFailure.reason.contains("at 'logStamps.0':"), "reason: \(snakeFailure.reason)")
        #if os(Linux)
            #expect(snakeFailure.reason.hasPrefix("invalid value at or inside 'logStamps.0': "))
        #endif
    }

    /// A type's own `init(from:)` that refuses a value throws with the path of the object it
    /// decodes: the reason names that object, on every platform, and does not say it is unknown.
    @Test func aValueAnObjectRefusesIsPlacedAtThatObject() async throws {
        struct Range: Decodable, Sendable {
            enum CodingKeys: String, CodingKey { case lo, hi }
            let lo: Int
            let hi: Int
            init(from decoder: any Decoder) throws {
                let values = try decoder.container(keyedBy: CodingKeys.self)
                lo = try values.decode(Int.self, forKey: .lo)
                hi = try values.decode(Int.self, forKey: .hi)
                guard lo <= hi else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "lo > hi"))
                }
            }
        }
        struct Query: Decodable, Sendable { let range: Range }
        let nested = await connect(body: #"{"range":{"lo":3,"hi":1}}"#)
            .request(TestConnector()).decoded(toType: Query.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: nested)))
        #expect(failure.reason == "invalid value at or inside 'range': lo > hi")
        #expect(failure.codingPath == "range")

        let whole = await connect(body: #"{"lo":3,"hi":1}"#).request(TestConnector()).decoded(toType: Range.self)
            .asyncResult
        let wholeFailure = try #require(decodingFailure(Fixtures.error(of: whole)))
        #expect(wholeFailure.reason == "invalid value in the body: lo > hi")
    }

    /// With the default `.deferredToDate`, a `Date` is read as a `Double`: the reason says why a
    /// date string was "expected Double", and names the type once.
    @Test func aDateStringReadAsSecondsSaysWhichStrategyToSet() async throws {
        struct Stamp: Decodable, Sendable { let at: Date }
        let body = #"{"at":"2024-01-01T10:00:00Z"}"#
        let result = await connect(body: body).request(TestConnector()).decoded(toType: Stamp.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.hasPrefix("expected Double at 'at' but found a string"), "reason: \(failure.reason)")
        #expect(failure.reason.components(separatedBy: "Double").count == 2, "once: \(failure.reason)")
        #expect(failure.reason.contains(".deferredToDate"), "reason: \(failure.reason)")
        #expect(failure.reason.contains("dateDecodingStrategy, e.g. .iso8601"), "reason: \(failure.reason)")

        // A decoder with another date strategy did not read the date as seconds: no such hint.
        let other = JSONDecoder()
        other.dateDecodingStrategy = .secondsSince1970
        let explicit = await connect(body: #"{"at":"soon"}"#).request(TestConnector())
            .decoded(toType: Stamp.self, decoder: other).asyncResult
        let explicitFailure = try #require(decodingFailure(Fixtures.error(of: explicit)))
        #expect(!explicitFailure.reason.contains("deferredToDate"), "reason: \(explicitFailure.reason)")

        // A Double sent as a string that is no date (a price as "12.5"): no word about dates.
        struct Price: Decodable, Sendable { let amount: Double }
        let price = await connect(body: #"{"amount":"12.5"}"#).request(TestConnector())
            .decoded(toType: Price.self).asyncResult
        let priceFailure = try #require(decodingFailure(Fixtures.error(of: price)))
        #expect(priceFailure.reason.hasPrefix("expected Double at 'amount' but found a string"))
        #expect(!priceFailure.reason.contains("Date"), "reason: \(priceFailure.reason)")
    }

    /// A key the server chose is quoted in the reason; the failure's description keeps it on one
    /// line, whatever line breaks it holds.
    @Test func aServersKeyWithALineBreakStaysOnOneLine() async throws {
        let result = await connect(body: #"{"a\nFORGED LINE":"x"}"#).request(TestConnector())
            .decoded(toType: [String: Int].self).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        let failure = try #require(decodingFailure(error))
        #expect(failure.reason.contains("a\nFORGED LINE"), "the reason keeps the key as it is")
        #expect(!error.description.contains("\n"), "\(error.description.debugDescription)")
        #expect(error.description.contains(#"a\nFORGED LINE"#), "\(error.description.debugDescription)")
    }

    /// A body of the wrong kind for the type is a failure at the top level, and says so.
    @Test func aMismatchOfTheWholeBodyIsAtTheTopLevel() async throws {
        let result = await connect(body: "[1]").request(TestConnector()).decoded(toType: Todo.self).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains(" at the top level"), "reason: \(failure.reason)")
        #expect(failure.codingPath == nil)
    }

    @Test func emptyKeyPathComponentFailsClearly() async throws {
        let result = await connect(body: #"{"data":{"item":{"id":1,"title":"x"}}}"#)
            .request(TestConnector()).decoded(toType: Todo.self, keyPath: "data..item").asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("empty"))
    }

    @Test func decodingFromFutureOfResponseCarriesTheResponseInTheFailure() async throws {
        let body = #"{"unexpected":true}"#
        let result = await connect(body: body, status: 201)
            .response(TestConnector()).decoded(toType: Todo.self).asyncResult
        let error = try #require(Fixtures.error(of: result) as? ConnectError)
        let failure = try #require(decodingFailure(error))
        let response = try #require(failure.response)
        #expect(response.statusCode == 201)
        #expect(response.data == Data(body.utf8))
        #expect(error.statusCode == 201)
        #expect(error.responseBody == Data(body.utf8))
        #expect(failure.description.contains("201"))
    }

    @Test func decodingFromFutureOfResponseSucceedsAtKeyPath() async throws {
        let todo = try await connect(body: #"{"data":{"id":3,"title":"r"}}"#)
            .response(TestConnector()).decoded(toType: Todo.self, keyPath: "data").value
        #expect(todo == Todo(id: 3, title: "r"))
    }

    @Test func standaloneFutureOfDataDecodesWithADefaultDecoder() async throws {
        let future = Future(value: Data(#"{"id":4,"title":"plain"}"#.utf8))
        let todo = try await future.decoded(toType: Todo.self).value
        #expect(todo == Todo(id: 4, title: "plain"))
    }
}

@Suite("BodyDecoder: decodedIfPresent")
struct DecodedIfPresentTests {
    @Test func emptyBodyGivesNil() async throws {
        let todo = try await connect(body: "", status: 204)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self).value
        #expect(todo == nil)
    }

    @Test func whitespaceOnlyBodyGivesNil() async throws {
        let todo = try await connect(body: " \n\t ")
            .request(TestConnector()).decodedIfPresent(toType: Todo.self).value
        #expect(todo == nil)
    }

    @Test func missingKeyPathGivesNil() async throws {
        let todo = try await connect(body: #"{"data":{}}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").value
        #expect(todo == nil)
    }

    @Test func missingIntermediateKeyGivesNil() async throws {
        let todo = try await connect(body: #"{"meta":{}}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").value
        #expect(todo == nil)
    }

    @Test func nullAtKeyPathGivesNil() async throws {
        let todo = try await connect(body: #"{"data":{"item":null}}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").value
        #expect(todo == nil)
    }

    @Test func nullBodyGivesNil() async throws {
        let todo = try await connect(body: "null")
            .request(TestConnector()).decodedIfPresent(toType: Todo.self).value
        #expect(todo == nil)
    }

    @Test func presentValueIsDecoded() async throws {
        let todo = try await connect(body: #"{"data":{"item":{"id":5,"title":"here"}}}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").value
        #expect(todo == Todo(id: 5, title: "here"))
    }

    @Test func malformedJSONStillFails() async throws {
        let result = await connect(body: #"{"data": {"item": "#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").asyncResult
        #expect(decodingFailure(Fixtures.error(of: result)) != nil)
    }

    @Test func presentButWrongTypeStillFails() async throws {
        let result = await connect(body: #"{"data":{"item":[1,2,3]}}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").asyncResult
        #expect(decodingFailure(Fixtures.error(of: result)) != nil)
    }

    @Test(arguments: [#"{"data":5}"#, #"{"data":"text"}"#, #"{"data":[{"item":1}]}"#])
    func keyPathThroughAValueThatIsNotAnObjectStillFails(body: String) async throws {
        // `data` is there, but is no object with keys: the body is not shaped as the path says.
        let result = await connect(body: body)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "data.item").asyncResult
        #expect(decodingFailure(Fixtures.error(of: result)) != nil)
    }

    /// A `null` on the way is `nil` wherever it is: under a key, the body itself, an element.
    @Test(arguments: [(#"{"a":null}"#, "a.b"), (#"[null]"#, "0.b"), ("null", "a"), (#"{"a":[null]}"#, "a.0.b")])
    func aNullOnTheWayGivesNil(body: String, keyPath: String) async throws {
        let present = try await connect(body: body).request(TestConnector())
            .decodedIfPresent(toType: Int.self, keyPath: keyPath).value
        #expect(present == nil)
        let optional = try await connect(body: body).request(TestConnector())
            .decoded(toType: Int?.self, keyPath: keyPath).value
        #expect(optional == nil)
        let required = await connect(body: body).request(TestConnector())
            .decoded(toType: Int.self, keyPath: keyPath).asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: required)))
        #expect(failure.reason.contains("null"), "reason: \(failure.reason)")
    }

    @Test func indexPastTheEndOfAnArrayIsMissing() async throws {
        let todo = try await connect(body: #"{"list":[{"id":1,"title":"one"}]}"#)
            .request(TestConnector()).decodedIfPresent(toType: Todo.self, keyPath: "list.5").value
        #expect(todo == nil)
    }

    @Test func futureOfResponseGivesNilForAnEmptyBody() async throws {
        let todo = try await connect(body: "", status: 204)
            .response(TestConnector()).decodedIfPresent(toType: Todo.self).value
        #expect(todo == nil)
    }
}

@Suite("BodyDecoder: Empty and empty bodies")
struct EmptyBodyTests {
    @Test func noContentDecodesToEmpty() async throws {
        let empty = try await connect(body: "", status: 204).request(TestConnector()).decoded(toType: Empty.self).value
        #expect(empty == Empty())
    }

    @Test func emptyAcceptsAnyJSONBody() async throws {
        let empty = try await connect(body: #"{"ignored":[1,2,3]}"#)
            .request(TestConnector()).decoded(toType: Empty.self).value
        #expect(empty == Empty())
    }

    @Test func emptyIgnoresABodyThatIsNotJSON() async throws {
        let empty = try await connect(body: "<html>not JSON</html>")
            .request(TestConnector()).decoded(toType: Empty.self).value
        #expect(empty == Empty())
    }

    @Test func emptyBodyFailsClearlyForAModel() async throws {
        let result = await connect(body: "", status: 204).request(TestConnector()).decoded(toType: Todo.self)
            .asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("empty"))
        #expect(failure.type.contains("Todo"))
        #expect(failure.description.contains("empty"))
    }

    /// As `null` does: a `204` decoded as an optional type is `nil`, not a failure.
    @Test(arguments: ["", " \r\n"])
    func emptyBodyGivesNilForAnOptionalType(body: String) async throws {
        let todo = try await connect(body: body, status: 204).request(TestConnector())
            .decoded(toType: Todo?.self).value
        #expect(todo == nil)
        let todos = try await connect(body: body, status: 204).response(TestConnector())
            .decoded(toType: [Todo]?.self).value
        #expect(todos == nil)
        let atKeyPath = await connect(body: body, status: 204).request(TestConnector())
            .decoded(toType: Todo?.self, keyPath: "data").asyncResult
        #expect(decodingFailure(Fixtures.error(of: atKeyPath)) != nil, "a key path with no body to find it in fails")
    }

    @Test func emptyBodyFailsForAModelFromFutureOfResponseWithTheResponse() async throws {
        let result = await connect(body: "", status: 204).response(TestConnector()).decoded(toType: Todo.self)
            .asyncResult
        let failure = try #require(decodingFailure(Fixtures.error(of: result)))
        #expect(failure.reason.contains("empty"))
        #expect(failure.response?.statusCode == 204)
    }
}

@Suite("BodyDecoder: which JSONDecoder")
struct DecoderChoiceTests {
    private static func snakeCase(_ configuration: inout ConnectConfiguration) {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        configuration.jsonDecoder = decoder
    }

    private static func iso8601(_ configuration: inout ConnectConfiguration) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        configuration.jsonDecoder = decoder
    }

    @Test func configurationsKeyStrategyIsUsedByDefault() async throws {
        let profile = try await connect(
            body: #"{"first_name":"Ada","last_name":"Lovelace"}"#, configure: Self.snakeCase
        )
        .request(TestConnector()).decoded(toType: Profile.self).value
        #expect(profile == Profile(firstName: "Ada", lastName: "Lovelace"))
    }

    @Test func configurationsDecoderIsUsedThroughMapAndFutureOfResponse() async throws {
        let profile = try await connect(
            body: #"{"first_name":"Ada","last_name":"Lovelace"}"#, configure: Self.snakeCase
        )
        .response(TestConnector()).decoded(toType: Profile.self).value
        #expect(profile.firstName == "Ada")
    }

    @Test func configurationsDateStrategyIsUsedByDefault() async throws {
        let event = try await connect(
            body: #"{"name":"launch","startsAt":"2024-01-02T03:04:05Z"}"#, configure: Self.iso8601
        )
        .request(TestConnector()).decoded(toType: Event.self).value
        #expect(event.startsAt == Date(timeIntervalSince1970: 1_704_164_645))
    }

    @Test func configurationsDecoderAppliesAtAKeyPath() async throws {
        let body = #"{"data":{"event":{"name":"launch","startsAt":"2024-01-02T03:04:05Z"}}}"#
        let event = try await connect(body: body, configure: Self.iso8601)
            .request(TestConnector()).decoded(toType: Event.self, keyPath: "data.event").value
        #expect(event.startsAt == Date(timeIntervalSince1970: 1_704_164_645))
    }

    @Test func explicitDecoderOverridesTheConfigurations() async throws {
        let explicit = JSONDecoder()
        explicit.dateDecodingStrategy = .secondsSince1970
        let event = try await connect(body: #"{"name":"launch","startsAt":1704164645}"#, configure: Self.iso8601)
            .request(TestConnector()).decoded(toType: Event.self, decoder: explicit).value
        #expect(event.startsAt == Date(timeIntervalSince1970: 1_704_164_645))
    }

    @Test func explicitPlainDecoderDoesNotConvertSnakeCase() async throws {
        let result = await connect(body: #"{"first_name":"Ada","last_name":"Lovelace"}"#, configure: Self.snakeCase)
            .request(TestConnector()).decoded(toType: Profile.self, decoder: JSONDecoder()).asyncResult
        #expect(decodingFailure(Fixtures.error(of: result)) != nil)
    }

    @Test func explicitDecoderOverridesForDecodedIfPresent() async throws {
        let explicit = JSONDecoder()
        explicit.keyDecodingStrategy = .convertFromSnakeCase
        let profile = try await connect(body: #"{"first_name":"Ada","last_name":"L"}"#)
            .request(TestConnector()).decodedIfPresent(toType: Profile.self, decoder: explicit).value
        #expect(profile == Profile(firstName: "Ada", lastName: "L"))
    }

    /// Key path components are documented as "object keys as they appear in the JSON"; a key
    /// strategy on the decoder must not hide `user_profile` from the key path.
    @Test func keyPathUsesJSONKeysEvenWithSnakeCaseStrategy() async throws {
        let body = #"{"user_profile":{"first_name":"Ada","last_name":"Lovelace"}}"#
        let result = await connect(body: body, configure: Self.snakeCase)
            .request(TestConnector()).decoded(toType: Profile.self, keyPath: "user_profile").asyncResult
        #expect(Fixtures.value(of: result) == Profile(firstName: "Ada", lastName: "Lovelace"), "\(result)")
    }
}

@Suite("BodyDecoder: Response.decoded")
struct ResponseDecodingTests {
    @Test func responseDecodesItsBodyAtAKeyPath() throws {
        let response = Fixtures.response(status: 200, body: #"{"data":{"id":9,"title":"sync"}}"#)
        #expect(try response.decoded(toType: Todo.self, keyPath: "data") == Todo(id: 9, title: "sync"))
    }

    @Test func responseDecodingFailureCarriesTheResponse() throws {
        let response = Fixtures.response(status: 200, body: "[]")
        let error = #expect(throws: ConnectError.self) { try response.decoded(toType: Todo.self) }
        #expect(error?.statusCode == 200)
        #expect(error?.responseBody == Data("[]".utf8))
    }
}

/// Found by mutation testing (third round): no other test noticed a change here.
extension DecodedTests {
    /// A snake_case key path is found under a decoder that converts keys, leading underscores and
    /// all, as `convertFromSnakeCase` converts them (`_owner_todo` → `_ownerTodo`).
    @Test func snakeCaseKeyPathWithALeadingUnderscoreIsFoundUnderAConvertingDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let response = PipelineFixtures.response(status: 200, body: #"{"_owner_todo":{"id":3,"title":"hidden"}}"#)
        let todo = try response.decoded(toType: PipelineFixtures.Todo.self, keyPath: "_owner_todo", decoder: decoder)
        #expect(todo == PipelineFixtures.Todo(id: 3, title: "hidden"))
    }
}
