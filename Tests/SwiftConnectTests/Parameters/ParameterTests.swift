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
