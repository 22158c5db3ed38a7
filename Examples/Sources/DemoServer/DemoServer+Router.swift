import Hummingbird

extension DemoServer {
    /// All routes under `/v1`, every error answered as `{"message": "…"}`.
    static func makeRouter(store: DemoStore) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorBodyMiddleware())
        let api = router.group("v1")
        AuthRoutes(store: store).register(on: api.group("auth"))
        TodoRoutes(store: store).register(on: api)
        AvatarRoutes(store: store).register(on: api)
        DebugRoutes(store: store).register(on: api.group("debug"))
        return router
    }
}

extension Request {
    /// The user whose bearer token the request carries.
    ///
    /// - Throws: `401` with a `WWW-Authenticate: Bearer` challenge when the token is missing,
    ///   unknown or expired.
    func authenticatedUser(in store: DemoStore) async throws -> Int {
        try await store.user(authorizedBy: headers[.authorization])
    }
}

extension Parameters {
    /// The integer path parameter `name`; `404` when it is not a number.
    func id(_ name: String) throws -> Int {
        guard let value = get(name, as: Int.self) else {
            throw APIError(.notFound, "no such \(name): \(get(name) ?? "")")
        }
        return value
    }
}
