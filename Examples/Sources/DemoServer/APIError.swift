import Foundation
import Hummingbird

/// An error answered as `{"message": "…"}` with its status.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(["message": message], from: request, context: context)
        response.status = status
        response.headers.append(contentsOf: headers)
        return response
    }
}

/// Gives every error the API's shape, `{"message": "…"}`: Hummingbird's own (unknown route,
/// undecodable body) and unexpected ones (`500`).
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(error.status, error.body ?? error.status.reasonPhrase.lowercased(), headers: error.headers)
        } catch let error as any HTTPResponseError {
            throw APIError(error.status, error.status.reasonPhrase.lowercased())
        } catch {
            context.logger.error("\(error)")
            throw APIError(.internalServerError, "internal server error")
        }
    }
}
