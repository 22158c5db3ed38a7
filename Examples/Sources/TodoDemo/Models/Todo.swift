/// A todo, as the demo API sends it.
public struct Todo: Codable, Sendable, Equatable {
    /// The user it belongs to.
    public let userId: Int
    /// Its number.
    public let id: Int
    /// What to do.
    public let title: String
    /// Whether it is done.
    public let completed: Bool
}

/// The body that creates a todo.
public struct NewTodo: Encodable, Sendable {
    /// What to do; the server refuses an empty one with `422`.
    public let title: String
    /// Whether it is done already.
    public var completed = false
}

/// The changes an update sends; `nil` leaves a field as it is.
public struct TodoChanges: Encodable, Sendable {
    /// A new title.
    public var title: String?
    /// Done or not.
    public var completed: Bool?
}

/// What an update does: apply the changes, or apply them and mark the todo done.
public enum TodoAction: String, Sendable {
    case update
    case complete
}
