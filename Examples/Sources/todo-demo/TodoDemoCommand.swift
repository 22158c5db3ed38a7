import ArgumentParser
import DemoServer
import Foundation
import TodoDemo

/// `todo-demo`: a guided tour of SwiftConnect against a demo REST API.
@main
struct TodoDemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo-demo",
        abstract: "A tour of SwiftConnect against a demo REST API.",
        subcommands: [Tour.self, Serve.self],
        defaultSubcommand: Tour.self
    )
}

/// Starts the demo API (unless given another server) and runs the scripted session.
struct Tour: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the demo API on a free loopback port and walk through a scripted session (the default)."
    )

    @Option(help: "Use this server instead of starting the demo API, e.g. http://127.0.0.1:8080/v1.")
    var baseURL: String?

    @Flag(name: .shortAndLong, help: "Show every request as a cURL command and every response.")
    var verbose = false

    func run() async throws {
        let terminal = Terminal()
        var server: RunningDemoServer?
        let apiURL: URL
        if let baseURL {
            guard let url = URL(string: baseURL), url.scheme?.hasPrefix("http") == true else {
                throw ValidationError("--base-url must be an http(s) URL, like http://127.0.0.1:8080/v1")
            }
            apiURL = url
            terminal.title("SwiftConnect demo against \(url)")
        } else {
            let started = try await DemoServer.start()
            server = started
            apiURL = started.baseURL
            terminal.title("SwiftConnect demo — demo API started on \(started.baseURL)")
        }

        let session = DemoSession(baseURL: apiURL, verbose: verbose) { event in terminal.show(event) }
        var succeeded = true
        do {
            _ = try await session.run()
            terminal.finish()
        } catch {
            terminal.fail(error)
            succeeded = false
        }
        await server?.stop()
        if !succeeded { throw ExitCode.failure }
    }
}

/// Runs only the demo API, for another client (or `todo-demo --base-url`) to use.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the demo API until interrupted.")

    @Option(help: "The port to listen on; 0 picks a free one.")
    var port = 8080

    @Option(help: "How long access tokens live, in seconds.")
    var tokenLifetime: Double = 300

    func run() async throws {
        let server = try await DemoServer.start(DemoServer.Configuration(port: port, tokenLifetime: tokenLifetime))
        Terminal().title("Demo API listening on \(server.baseURL) (log in as ada / lovelace); Ctrl-C stops it.")
        try await server.wait()
    }
}
