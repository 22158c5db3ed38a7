import Foundation

/// Where the demo API lives, for every connector's `baseURL`.
///
/// Connectors carry the address an app would ship with. The demo learns the real one at run time —
/// the server it starts listens on a free port, and `--base-url` points it elsewhere — and hands it
/// to `ConnectConfiguration.baseURL`, which sends every request there instead.
public enum DemoAPI {
    /// The address the connectors are written for, including the `/v1` base path.
    public static let baseURL = URL(string: "http://127.0.0.1:8080/v1")!
}
