import Hummingbird

/// `POST /debug/expire-tokens`: makes every access token expire now, so a client can show its
/// token refresh without waiting for the tokens' lifetime.
struct DebugRoutes {
    let store: DemoStore

    func register(on group: RouterGroup<BasicRequestContext>) {
        group.post("expire-tokens") { _, _ -> HTTPResponse.Status in
            await store.expireAccessTokens()
            return .noContent
        }
    }
}
