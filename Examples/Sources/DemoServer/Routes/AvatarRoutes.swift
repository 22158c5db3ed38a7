import Foundation
import Hummingbird

/// `POST /users/{userId}/avatar`: a `multipart/form-data` upload of a file `avatar` and text fields.
struct AvatarRoutes {
    let store: DemoStore

    func register(on api: RouterGroup<BasicRequestContext>) {
        api.post("users/:userId/avatar") { request, context -> EditedResponse<AvatarReceipt> in
            let user = try await request.authenticatedUser(in: store)
            let userId = try context.parameters.id("userId")
            guard userId == user else { throw APIError(.notFound, "user \(userId) not found") }
            var request = request
            let body = try await request.collectBody(upTo: 8 * 1024 * 1024)
            let form: MultipartForm
            do {
                form = try MultipartForm(body: Data(buffer: body), contentType: request.headers[.contentType])
            } catch let error as MultipartForm.Malformed {
                throw APIError(.badRequest, error.description)
            }
            guard let file = form.file(named: "avatar") else {
                throw APIError(.unprocessableContent, "the form has no file named avatar")
            }
            guard file.contentType?.hasPrefix("image/") == true else {
                throw APIError(
                    .unprocessableContent, "the avatar must be an image, not \(file.contentType ?? "untyped")")
            }
            let receipt = AvatarReceipt(
                userId: user, filename: file.filename ?? "", contentType: file.contentType ?? "",
                bytes: file.body.count,
                fields: form.fields)
            await store.setAvatar(receipt)
            return EditedResponse(status: .created, response: receipt)
        }
    }
}
