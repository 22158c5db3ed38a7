import Foundation
import Synchronization

/// Where the demo API lives, for every connector's `baseURL`.
///
/// An app would write its server's address into its connectors (or pick it per build
/// configuration); the demo learns it at run time — the server it starts listens on a free port, and
/// `--base-url` points it elsewhere — so `todo-demo` sets it once, before the first request.
public enum DemoAPI {
    private static let storage = Mutex(URL(string: "http://127.0.0.1:8080/v1")!)

    /// The API's base URL, including its `/v1` base path.
    public static var baseURL: URL {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
