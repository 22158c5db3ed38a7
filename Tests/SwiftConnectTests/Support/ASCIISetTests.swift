import Testing

@testable import SwiftConnect

@Suite("ASCIISet")
struct ASCIISetTests {
    private static let alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    private static let unreserved = alphanumerics + "-._~"
    private static let subDelimiters = "!$&'()*+,;="

    /// Each set, as its mask, against the set spelled out from its RFC, for every byte value.
    @Test(arguments: [
        ("unreserved", ASCIISet.unreserved, unreserved),
        ("pathLiteral", ASCIISet.pathLiteral, unreserved + subDelimiters + ":@/"),
        ("queryLiteral", ASCIISet.queryLiteral, unreserved + subDelimiters + ":@/?"),
        ("token", ASCIISet.token, alphanumerics + "!#$%&'*+-.^_`|~"),
        ("boundary", ASCIISet.boundary, alphanumerics + "'()+_,-./:=? "),
    ])
    func everyByteIsInTheSetExactlyWhenItsDefinitionHasIt(name: String, set: ASCIISet, members: String) {
        let expected = Set(members.utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(set.contains(byte) == expected.contains(byte), "\(name): byte \(byte)")
        }
    }
}
