import Foundation
import SwiftConnect

/// The todos resource.
enum TodoConnector: Connector {
    case list(page: Int = 1, perPage: Int = 10, completed: Bool? = nil, search: String? = nil)
    case get(id: Int)
    case latest
    case create(NewTodo)
    case update(userId: Int, todoId: Int, action: TodoAction, object: TodoChanges)
    case delete(id: Int)

    var baseURL: URL { DemoAPI.baseURL }

    var endpoint: String {
        switch self {
        case .list, .create: return "/todos"
        case .get, .delete: return "/todos/{id}"
        case .latest: return "/todos/latest"
        case .update: return "/users/{userId}/todos/{todoId}"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .list, .get, .latest: return .get
        case .create: return .post
        case .update: return .put
        case .delete: return .delete
        }
    }

    var headers: [HTTPHeader] {
        [.accept("application/json")]
    }

    var parameters: ParametersRepresentable? {
        switch self {
        case .list(let page, let perPage, let completed, let search):
            var query: [Parameter] = [
                .query(key: "page", value: "\(page)"), .query(key: "perPage", value: "\(perPage)"),
            ]
            if let completed { query.append(.query(key: "completed", value: "\(completed)")) }
            if let search { query.append(.query(key: "q", value: search)) }
            return CompositeParameters(query)
        case .get(let id), .delete(let id):
            return Parameter.path(key: "id", value: "\(id)")
        case .latest:
            return nil
        case .create(let todo):
            return Parameter.jsonObject(value: todo)
        case .update(let userId, let todoId, let action, let object):
            return CompositeParameters(
                .path(key: "userId", value: "\(userId)"),
                .path(key: "todoId", value: "\(todoId)"),
                .query(key: "action", value: action.rawValue),
                .jsonObject(value: object)
            )
        }
    }
}
