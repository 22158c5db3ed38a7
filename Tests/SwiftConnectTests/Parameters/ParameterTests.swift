import Foundation
import Testing

@testable import SwiftConnect

@Suite("Parameter, CompositeParameters, RequestParameters, RequestBody")
struct ParameterTests {
    func applied(_ parameters: ParametersRepresentable, encoder: JSONEncoder = JSONEncoder()) throws
        -> RequestParameters
    {
        var gathered = RequestParameters(jsonEncoder: encoder)
        try parameters.apply(to: &gathered)
        return gathered
    }

    /// The reason applying `parameters` throws, or `nil` (recording an issue) when it does not throw one.
    func rejection(applying parameters: ParametersRepresentable, sourceLocation: SourceLocation = #_sourceLocation)
        -> InvalidRequestReason?
    {
        let error = #expect(throws: ConnectError.self, sourceLocation: sourceLocation) {
            _ = try applied(parameters)
        }
        guard case .invalidRequest(let reason)? = error else { return nil }
        return reason
    }

    // MARK: Parameter

    @Test func queryParameterAppendsAQueryItemValueAsGiven() throws {
        let gathered = try applied(Parameter.query(key: "q", value: "a b&c"))
        #expect(gathered.queryItems == [URLQueryItem(name: "q", value: "a b&c")])
        #expect(gathered.body == nil)
        #expect(gathered.pathValues.isEmpty)
    }

    @Test func pathParameterSetsTheSlotValue() throws {
        let gathered = try applied(Parameter.path(key: "id", value: "a/b"))
        #expect(gathered.pathValues.map(\.key) == ["id"])
        #expect(gathered.pathValues.map(\.value) == ["a/b"])
        #expect(gathered.queryItems.isEmpty)
    }

    @Test func integerValuesAreWrittenInDecimal() throws {
        let id = 42
        let gathered = try applied(
            CompositeParameters(
                .path(key: "id", value: id), .query(key: "page", value: 2), .query(key: "offset", value: -15),
                .query(key: "max", value: Int.max), .form(key: "count", value: 0), .form(key: "min", value: Int.min)))
        #expect(gathered.pathValues.map(\.value) == ["42"])
        #expect(
            gathered.queryItems == [
                URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "offset", value: "-15"),
                URLQueryItem(name: "max", value: "9223372036854775807"),
            ])
        #expect(
            gathered.body
                == .form([
                    URLQueryItem(name: "count", value: "0"), URLQueryItem(name: "min", value: "-9223372036854775808"),
                ]))
        // They make the string cases themselves: a `switch` over a parameter sees `.path`, `.query`, `.form`.
        guard case .path(let key, let value) = Parameter.path(key: "id", value: 7) else {
            Issue.record("expected .path")
            return
        }
        #expect(key == "id" && value == "7")
    }

    @Test func jsonObjectParameterSetsAnEncodedJSONBody() throws {
        let gathered = try applied(Parameter.jsonObject(value: ["title": "Write tests"]))
        #expect(gathered.body == .json(Data(#"{"title":"Write tests"}"#.utf8)))
    }

    @Test func jsonObjectIsEncodedWithTheGivenEncoder() throws {
        struct Draft: Encodable { let dueDate: String }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let gathered = try applied(Parameter.jsonObject(value: Draft(dueDate: "today")), encoder: encoder)
        #expect(gathered.body == .json(Data(#"{"due_date":"today"}"#.utf8)))
    }

    @Test func formParametersAccumulateInOrder() throws {
        let gathered = try applied(
            CompositeParameters(.form(key: "b", value: "2"), .form(key: "a", value: "1"), .form(key: "b", value: "3")))
        #expect(
            gathered.body
                == .form([
                    URLQueryItem(name: "b", value: "2"), URLQueryItem(name: "a", value: "1"),
                    URLQueryItem(name: "b", value: "3"),
                ]))
    }

    @Test func dataParameterSetsARawBodyWithItsContentType() throws {
        let bytes = Data([0x00, 0xFF, 0x10])
        let gathered = try applied(Parameter.data(bytes, contentType: "application/octet-stream"))
        #expect(gathered.body == .data(bytes, contentType: "application/octet-stream"))
    }

    @Test func samePathKeyTwiceIsRejected() {
        let reason = rejection(
            applying: CompositeParameters(.path(key: "id", value: "1"), .path(key: "id", value: "1")))
        #expect(reason == .duplicatePathParameter(key: "id"))
    }

    enum TwoBodies: String, CaseIterable, Sendable {
        case jsonThenData, formThenJSON, dataThenForm, jsonThenJSON, dataThenData, jsonThenForm

        var parameters: CompositeParameters {
            let data = Parameter.data(Data("x".utf8), contentType: "text/plain")
            let json = Parameter.jsonObject(value: ["a": 1])
            let form = Parameter.form(key: "a", value: "1")
            switch self {
            case .jsonThenData: return CompositeParameters(json, data)
            case .formThenJSON: return CompositeParameters(form, json)
            case .dataThenForm: return CompositeParameters(data, form)
            case .jsonThenJSON: return CompositeParameters(json, json)
            case .dataThenData: return CompositeParameters(data, data)
            case .jsonThenForm: return CompositeParameters(json, form)
            }
        }
    }

    @Test(arguments: TwoBodies.allCases)
    func twoBodiesAreRejected(_ combination: TwoBodies) {
        #expect(rejection(applying: combination.parameters) == .multipleBodies)
    }

    @Test func rejectedSecondBodyLeavesTheFirstInPlace() throws {
        var gathered = RequestParameters()
        try gathered.appendFormField(name: "a", value: "1")
        #expect(throws: ConnectError.self) { try gathered.setJSONBody(["b": 2]) }
        #expect(gathered.body == .form([URLQueryItem(name: "a", value: "1")]))
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonConformingDoubleInJSONFailsEncoding(value: Double) {
        let reason = rejection(applying: Parameter.jsonObject(value: ["score": value]))
        #expect(reason == .encodingFailed(underlying: CancellationError()))  // `==` compares the case only
        if case .encodingFailed(let underlying)? = reason {
            #expect(underlying is EncodingError)
        }
    }

    // MARK: CompositeParameters

    @Test func compositeAppliesItsParametersInOrder() throws {
        let gathered = try applied(
            CompositeParameters(
                .query(key: "z", value: "1"), .path(key: "b", value: "x"), .query(key: "a", value: "2"),
                .path(key: "a", value: "y")))
        #expect(gathered.queryItems.map(\.name) == ["z", "a"])
        #expect(gathered.pathValues.map(\.key) == ["b", "a"])
    }

    @Test func compositeOfCompositesAndCustomParametersAppliesEverything() throws {
        let inner = CompositeParameters(.query(key: "inner", value: "1"))
        let gathered = try applied(
            CompositeParameters([Parameter.query(key: "first", value: "0"), inner, AcceptLanguage(value: "fr")]))
        #expect(gathered.queryItems.map(\.name) == ["first", "inner"])
        #expect(gathered.headers == [HTTPHeader(name: "Accept-Language", value: "fr")])
    }

    @Test func compositeStopsAtTheFirstError() {
        var gathered = RequestParameters()
        #expect(throws: ConnectError.self) {
            try CompositeParameters(
                .query(key: "before", value: "1"), .path(key: "id", value: "1"), .path(key: "id", value: "2"),
                .query(key: "after", value: "1")
            ).apply(to: &gathered)
        }
        #expect(gathered.queryItems.map(\.name) == ["before"])
    }

    /// A composite of `Parameter`s that is the first to give path values or query items keeps its
    /// list whole (`RequestParameters.adopt`) instead of applying each parameter. Over random lists
    /// and random parameters given before and after it — repeated path keys, several bodies, a
    /// value JSON cannot encode — it must throw what applying each parameter in turn throws, and
    /// leave the same path values, query items and body.
    @Test func compositeLeavesWhatApplyingEachParameterInTurnLeaves() {
        var generator = SeededGenerator(state: 0xADD_0B7)
        func random<T>(_ list: [T]) -> T { list.randomElement(using: &generator)! }
        func randomParameter() -> Parameter {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4: return .path(key: random(["a", "b", "c"]), value: random(["1", "x y"]))
            case 4..<7: return .query(key: random(["q", "r", ""]), value: random(["", "1", "&"]))
            case 7: return .jsonObject(value: random([1, 2.5, Double.nan]))
            case 8: return .form(key: random(["f", "g"]), value: "1")
            default: return .data(Data("d".utf8), contentType: "text/plain")
            }
        }
        /// Up to 5, and now and then longer than the longest list kept whole.
        func randomLength() -> Int {
            if Int.random(in: 0..<20, using: &generator) == 0 {
                return RequestParameters.longestAdoptedList + Int.random(in: 1...3, using: &generator)
            }
            return Int.random(in: 0...5, using: &generator)
        }
        /// What applying the steps leaves: each step's list whole (if `whole`) or one by one.
        func outcome(_ steps: [(list: [Parameter], whole: Bool)]) -> String {
            var parameters = RequestParameters()
            var thrown = "nothing thrown"
            do {
                for step in steps {
                    if step.whole {
                        try parameters.adopt(step.list)
                    } else {
                        for parameter in step.list { try parameter.apply(to: &parameters) }
                    }
                }
            } catch let error as ConnectError {
                guard case .invalidRequest(let reason) = error else { return "unexpected \(error)" }
                thrown = "\(reason)"
            } catch {
                return "unexpected \(error)"
            }
            let body = parameters.body.map { "\($0.contentType): \(String(decoding: $0.encoded, as: UTF8.self))" }
            return "\(thrown); path \(parameters.pathValues.map { "\($0.key)=\($0.value)" }); "
                + "query \(parameters.queryItems); body \(body ?? "none")"
        }

        var outcomes = Set<String>()
        for round in 0..<3_000 {
            let steps = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                (
                    list: (0..<randomLength()).map { _ in randomParameter() },
                    whole: Bool.random(using: &generator)
                )
            }
            let oneByOne = outcome(steps.map { ($0.list, false) })
            #expect(outcome(steps) == oneByOne, "round \(round): \(steps)")
            outcomes.insert(String(oneByOne.prefix { $0 != ";" }))
        }
        // The rounds reached every kind of error, and lists that throw nothing.
        #expect(outcomes.contains("nothing thrown"))
        #expect(outcomes.contains { $0.contains("is given more than once") })
        #expect(outcomes.contains { $0.contains("more than one body") })
        #expect(outcomes.contains { $0.contains("could not be encoded") })
    }

    /// `print` and `dump` show what was given, as when each parameter is applied in turn: not the
    /// kept list, whose JSON body value would show unencoded.
    @Test func parametersPrintTheSameWhetherTheListWasKeptWholeOrNot() throws {
        struct Credentials: Encodable {
            let password: String
        }
        let list: [Parameter] = [
            .path(key: "id", value: "7"), .query(key: "q", value: "a b"),
            .jsonObject(value: Credentials(password: "hunter2")),
        ]
        let encoder = JSONEncoder()
        var kept = RequestParameters(jsonEncoder: encoder)
        try kept.adopt(list)
        var oneByOne = RequestParameters(jsonEncoder: encoder)
        for parameter in list { try parameter.apply(to: &oneByOne) }

        let printed = String(describing: kept)
        #expect(printed == String(describing: oneByOne))
        #expect(printed.contains("pathValues: [(key: \"id\", value: \"7\")]"))
        #expect(!printed.contains("hunter2"))
        var dumped = ""
        dump(kept, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(dumped.contains("pathValues"))
    }

    @Test func compositeGivenFirstKeepsItsItemsBeforeThoseGivenAfter() throws {
        var gathered = RequestParameters()
        try CompositeParameters(.query(key: "a", value: "1"), .path(key: "id", value: "7")).apply(to: &gathered)
        gathered.appendQueryItem(name: "b", value: nil)
        try CompositeParameters(.query(key: "c", value: "3")).apply(to: &gathered)
        #expect(gathered.queryItems.map(\.name) == ["a", "b", "c"])
        #expect(gathered.hasQuery)
        #expect(gathered.value(forSlot: "id") == "7")
        let error = #expect(throws: ConnectError.self) { try gathered.setPathValue("8", forKey: "id") }
        guard case .invalidRequest(let reason)? = error else { return }
        #expect(reason == .duplicatePathParameter(key: "id"))
        #expect(gathered.pathValues.map(\.value) == ["7"])
    }

    @Test func compositeListsItsParametersInOrderWhicheverInitializerMadeIt() {
        let variadic = CompositeParameters(.query(key: "a", value: "1"), .path(key: "b", value: "2"))
        #expect(variadic.parameters.count == 2)
        #expect(
            variadic.parameters.map { ($0 as? Parameter).map { "\($0)" } } == [
                "\(Parameter.query(key: "a", value: "1"))", "\(Parameter.path(key: "b", value: "2"))",
            ])
        let mixed = CompositeParameters([Parameter.query(key: "a", value: "1"), AcceptLanguage(value: "fr")])
        #expect(mixed.parameters.count == 2)
        #expect(mixed.parameters[0] is Parameter)
        #expect((mixed.parameters[1] as? AcceptLanguage)?.value == "fr")
    }

    /// An array of `Parameter` values, written with implicit members as the variadic form is.
    @Test func anArrayOfParametersCombinesLikeTheVariadicForm() throws {
        let list: [Parameter] = [.path(key: "id", value: "7"), .query(key: "q", value: "a b")]
        let request = try TestConnector(
            baseURL: URL(string: "https://api.example.com")!, endpoint: "/items/{id}",
            parameters: CompositeParameters([.path(key: "id", value: "7"), .query(key: "q", value: "a b")])
        ).asURLRequest()
        #expect(request.url?.absoluteString == "https://api.example.com/items/7?q=a%20b")
        #expect(CompositeParameters(list).parameters.count == 2)
        #expect(HTTPHeader.acceptCharset("utf-8") == HTTPHeader(name: "Accept-Charset", value: "utf-8"))
    }

    @Test func emptyCompositeAddsNothing() throws {
        let gathered = try applied(CompositeParameters([]))
        #expect(gathered.queryItems.isEmpty)
        #expect(gathered.pathValues.isEmpty)
        #expect(gathered.body == nil)
        #expect(gathered.headers.isEmpty)
    }

    // MARK: Custom ParametersRepresentable

    struct AcceptLanguage: ParametersRepresentable {
        let value: String
        func apply(to parameters: inout RequestParameters) throws {
            parameters.appendHeader(.acceptLanguage(value))
        }
    }

    struct Paging: ParametersRepresentable {
        let page: Int
        let size: Int
        func apply(to parameters: inout RequestParameters) throws {
            parameters.appendQueryItem(name: "page", value: "\(page)")
            parameters.appendQueryItem(name: "size", value: "\(size)")
            parameters.appendHeader(HTTPHeader(name: "X-Paging", value: "on"))
        }
    }

    @Test func customParametersReachTheBuiltRequest() throws {
        let connector = TestConnector(
            baseURL: URL(string: "https://h.test")!, endpoint: "/todos", parameters: Paging(page: 2, size: 50))
        let request = try connector.asURLRequest()
        #expect(request.url?.absoluteString == "https://h.test/todos?page=2&size=50")
        #expect(request.value(forHTTPHeaderField: "X-Paging") == "on")
    }

    // MARK: RequestBody

    @Test func bodyContentTypes() {
        #expect(RequestBody.json(Data()).contentType == "application/json")
        #expect(RequestBody.form([]).contentType == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(RequestBody.data(Data(), contentType: "image/png").contentType == "image/png")
    }

    @Test func formBodyIsEncodedOnTheWire() {
        let body = RequestBody.form([
            URLQueryItem(name: "q", value: "a+b c&d=é"), URLQueryItem(name: "flag", value: nil),
        ])
        #expect(String(decoding: body.encoded, as: UTF8.self) == "q=a%2Bb%20c%26d%3D%C3%A9&flag")
    }

    @Test func jsonAndDataBodiesAreSentAsGiven() {
        let bytes = Data([1, 2, 3])
        #expect(RequestBody.json(bytes).encoded == bytes)
        #expect(RequestBody.data(bytes, contentType: "x/y").encoded == bytes)
    }
}
