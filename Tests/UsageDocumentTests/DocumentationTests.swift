import Foundation
import SwiftConnect
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps README.md and Usage.md honest: every Swift sample in them is compiled here, and the output
/// they show is the output the library gives.
struct DocumentationTests {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let repositoryRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced blocks of `language` in a Markdown document.
    static func blocks(_ language: String, in document: String) throws -> [String] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(document), encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }

    /// Lines trimmed, blank ones dropped, so indentation changes don't matter.
    static func normalized(_ code: String) -> String {
        code.components(separatedBy: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "\n")
    }

    /// UsageDocumentSwift6Tests compiles these same files in Swift 6 mode through links to them: a
    /// copy would drift. (A checkout without symbolic links — `core.symlinks=false` — leaves text
    /// files that do not compile: clone with links.)
    @Test(arguments: ["UsageSamples.swift", "ReadmeSamples.swift"])
    func theSwift6TargetCompilesTheseVerySamples(file: String) throws {
        let original = Self.testsDirectory.appendingPathComponent(file)
        let linked = Self.repositoryRoot.appendingPathComponent("Tests/UsageDocumentSwift6Tests/\(file)")
        let destination = try FileManager.default.destinationOfSymbolicLink(atPath: linked.path)
        #expect(destination == "../UsageDocumentTests/\(file)", "\(linked.path) must be a link to \(original.path)")
        #expect(try Data(contentsOf: linked) == Data(contentsOf: original))
    }

    @Test(arguments: ["README.md", "Usage.md", "Sources/SwiftConnect/SwiftConnect.docc/SwiftConnect.md"])
    func everySwiftSampleIsCompiledByThisTarget(document: String) throws {
        let sources = try FileManager.default.contentsOfDirectory(atPath: Self.testsDirectory.path)
            .filter { $0.hasSuffix("Samples.swift") }
            .map { try String(contentsOf: Self.testsDirectory.appendingPathComponent($0), encoding: .utf8) }
            .map(Self.normalized)
            .joined(separator: "\n")
        let samples = try Self.blocks("swift", in: document)
        #expect(!samples.isEmpty, "\(document) should have Swift samples")
        for sample in samples {
            #expect(sources.contains(Self.normalized(sample)), "sample not compiled by a test:\n\(sample)")
        }
    }

    /// Usage.md's table of `Connector` requirements declares each with the protocol's own type: a
    /// property written with another type (`TimeInterval` for `TimeInterval?`) would be a property
    /// of the user's type, and the default would silently stay. Each key path below compiles only
    /// while the protocol (or an extension of it) has a member of that type; a requirement added to
    /// the protocol has to be added here and to the table by hand.
    @Test func usageDeclaresEveryConnectorRequirementWithItsType() throws {
        let baseURL: KeyPath<Connector, URL> = \.baseURL
        let endpoint: KeyPath<Connector, String> = \.endpoint
        let method: KeyPath<Connector, HTTPMethod> = \.method
        let headers: KeyPath<Connector, [HTTPHeader]> = \.headers
        let parameters: KeyPath<Connector, ParametersRepresentable?> = \.parameters
        let timeoutInterval: KeyPath<Connector, TimeInterval?> = \.timeoutInterval
        let acceptableStatusCodes: KeyPath<Connector, Range<Int>> = \.acceptableStatusCodes
        let jsonEncoder: KeyPath<Connector, JSONEncoder?> = \.jsonEncoder
        let jsonDecoder: KeyPath<Connector, JSONDecoder?> = \.jsonDecoder
        let validators: KeyPath<Connector, [ResponseValidator]?> = \.validators
        let redirectPolicy: KeyPath<Connector, RedirectPolicy?> = \.redirectPolicy
        let isIdempotent: KeyPath<Connector, Bool> = \.isIdempotent
        let middleware: KeyPath<Connector, ConnectorMiddleware> = \.middleware
        let declared: [(String, AnyKeyPath)] = [
            ("var baseURL: URL", baseURL), ("var endpoint: String", endpoint), ("var method: HTTPMethod", method),
            ("var headers: [HTTPHeader]", headers), ("var parameters: ParametersRepresentable?", parameters),
            ("var timeoutInterval: TimeInterval?", timeoutInterval),
            ("var acceptableStatusCodes: Range<Int>", acceptableStatusCodes),
            ("var jsonEncoder: JSONEncoder?", jsonEncoder),
            ("var jsonDecoder: JSONDecoder?", jsonDecoder), ("var validators: [ResponseValidator]?", validators),
            ("var redirectPolicy: RedirectPolicy?", redirectPolicy), ("var isIdempotent: Bool", isIdempotent),
            ("var middleware: ConnectorMiddleware", middleware),
        ]

        let text = try String(contentsOf: Self.repositoryRoot.appendingPathComponent("Usage.md"), encoding: .utf8)
        let table = text.components(separatedBy: "\n").filter { $0.hasPrefix("| `var ") }.map { row in
            String(row.dropFirst(3).prefix { $0 != "`" })
        }
        #expect(table == declared.map(\.0))
    }

    @Test func usageShowsTheCURLOutputTheLibraryPrints() async throws {
        let logger = LinesLogger()
        var configuration = ConnectConfiguration()
        configuration.logger = logger
        configuration.jsonEncoder.outputFormatting = [.sortedKeys]
        let transport = StubTransport { _ in StubTransport.Reply(statusCode: 200, body: Data("{}".utf8)) }
        let connect = Connect(configuration: configuration, transport: transport)
        let todo = Todo(userId: 2, id: 1, title: "Test Todo", completed: false)

        _ = try await connect.request(
            AdvancedTodoConnector.update(userId: 1, todoId: 2, action: .update, object: todo), debugResponse: true
        ).value

        let shown = try #require(try Self.blocks("text", in: "Usage.md").first { $0.contains("$ curl") })
        #expect(logger.lines.first == shown)
    }
}

/// Keeps logged messages.
final class LinesLogger: ConnectLogger, @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: [String] = []

    var lines: [String] { lock.withLock { storage } }

    func log(_ message: String) {
        lock.withLock { storage.append(message) }
    }
}
