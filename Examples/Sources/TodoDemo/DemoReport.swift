import Foundation

/// What each step of the scripted session got back.
public struct DemoReport: Sendable {
    // Log in

    /// The error a wrong password got: `401` and the server's message.
    public var rejectedLogin: ServerError?
    /// The tokens the real login got.
    public var tokens: Tokens?

    // List

    /// The first page of open todos.
    public var openTodos: [Todo] = []
    /// How many open todos there are on all pages, from the `X-Total-Count` header.
    public var openTodoTotal: Int?

    // Create, follow the redirect, complete and delete one todo

    /// The todo created.
    public var created: Todo?
    /// The status of its creation, `201`.
    public var createdStatus: Int?
    /// Where `GET /todos/latest` was redirected to.
    public var latestURL: URL?
    /// The todo found there.
    public var latest: Todo?
    /// The todo after `PUT …?action=complete`.
    public var completed: Todo?
    /// The status of its deletion, `204`.
    public var deleteStatus: Int?

    // Errors

    /// The error responses the session provoked: `404`, `422`, `400`.
    public var serverErrors: [ServerError] = []

    // Avatar

    /// What the server says it received from the avatar upload.
    public var avatar: AvatarReceipt?

    // Token expiry

    /// How many requests went at once with the expired token.
    public var concurrentRequests = 0
    /// How many responses were `401` (the interceptor counts them).
    public var unauthorizedResponses = 0
    /// How many refreshes the `TokenAuthenticator` ran for them.
    public var refreshes: Int?
    /// How many of the requests succeeded in the end.
    public var succeededAfterRefresh = 0
}
