import Hummingbird
import NIOCore

/// `POST /auth/login` (JSON) and `POST /auth/refresh` (form): bearer tokens that expire.
struct AuthRoutes {
    let store: DemoStore

    func register(on group: RouterGroup<BasicRequestContext>) {
        group.post("login") { request, context -> TokenReply in
            let body = try await request.decode(as: LoginBody.self, context: context)
            return try await store.logIn(username: body.username, password: body.password)
        }

        group.post("refresh") { request, context -> TokenReply in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            let form: RefreshForm
            do {
                form = try URLEncodedFormDecoder().decode(RefreshForm.self, from: String(buffer: body))
            } catch {
                throw APIError(.badRequest, "expected a form with grant_type and refresh_token")
            }
            guard form.grantType == "refresh_token" else {
                throw APIError(.badRequest, "grant_type must be refresh_token")
            }
            return try await store.refresh(refreshToken: form.refreshToken)
        }
    }
}
