import Foundation
import Testing

@testable import SwiftConnect

@Suite("FormFields")
struct FormFieldsTests {
    func fields(_ json: String) throws -> [String] {
        try FormFields.fields(fromJSONObject: Data(json.utf8)).map { "\($0.name)=\($0.value)" }
    }

    @Test func valuesBecomeTheirTextAsWrittenInTheJSON() throws {
        let json =
            #"{"name":"Zoë \"Z\"","count":3,"price":2.50,"tiny":1e-07,"done":true,"off":false,"#
            + #""nested":{"a":[1,"x"]},"list":[true,null],"none":null,"escaped":"a\nb\u00e9"}"#
        #expect(
            try fields(json) == [
                "name=Zoë \"Z\"", "count=3", "price=2.50", "tiny=1e-07", "done=true", "off=false",
                #"nested={"a":[1,"x"]}"#, "list=[true,null]", "escaped=a\nbé",
            ])
    }

    @Test func encodedModelKeepsTheEncodersKeyOrderAndSpelling() throws {
        struct Profile: Encodable {
            let userName: String
            let age: Int
            let verified: Bool
            let ratio: Double
            let tags: [String]
            let address: Address
        }
        struct Address: Encodable { let city: String }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = .sortedKeys  // JSONEncoder's own key order is unspecified
        let data = try encoder.encode(
            Profile(userName: "ann", age: 30, verified: true, ratio: 0.25, tags: ["a"], address: Address(city: "Oslo")))
        let fields = try FormFields.fields(fromJSONObject: data)
        #expect(fields.map(\.name) == ["address", "age", "ratio", "tags", "user_name", "verified"])
        #expect(fields.map(\.value) == [#"{"city":"Oslo"}"#, "30", "0.25", #"["a"]"#, "ann", "true"])
    }

    @Test func whitespaceOfPrettyPrintedJSONIsSkipped() throws {
        #expect(try fields("{ \n \"a\" : 1 ,\n \"b\" : \"x\" \n}") == ["a=1", "b=x"])
        #expect(try fields("{}").isEmpty)
    }

    @Test(arguments: ["[1,2]", "\"text\"", "3", "", "{\"a\":1", "{\"a\" 1}"])
    func anythingButAnObjectIsRejected(json: String) {
        #expect(throws: (any Error).self) { try FormFields.fields(fromJSONObject: Data(json.utf8)) }
    }

    @Test func formParametersPassThroughAndRawDataIsASecondBody() throws {
        let form = try FormFields.fields(
            from: .form([URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "a", value: "2")]))
        #expect(form.map { "\($0.name)=\($0.value)" } == ["a=1", "a=2"])
        #expect(try FormFields.fields(from: nil).isEmpty)
        #expect(throws: ConnectError.self) { try FormFields.fields(from: .data(Data(), contentType: "x/y")) }
        do {
            _ = try FormFields.fields(from: .json(Data("[1]".utf8)))
            Issue.record("a JSON array must be rejected")
        } catch ConnectError.invalidRequest(.encodingFailed(let underlying)) {
            #expect("\(underlying)".contains("JSON object"))
        }
    }
}
