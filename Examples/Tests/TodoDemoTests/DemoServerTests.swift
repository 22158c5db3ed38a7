import Foundation
import Testing

@testable import DemoServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The demo API's routes that the scripted session does not reach (yet), spoken to with plain
/// URLSession so that they are checked independently of SwiftConnect.
struct DemoServerTests {
    @Test func avatarUploadReadsTheFileAndTheFields() async throws {
        try await withServer { server, token in
            let body = multipartBody(parts: [
                (name: "caption", filename: nil, contentType: nil, data: Data("At the Analytical Engine".utf8)),
                (
                    name: "avatar", filename: "ada.png", contentType: "image/png",
                    data: Data(repeating: 0x89, count: 4096)
                ),
            ])
            let (status, json) = try await send(
                "POST", server.baseURL.appendingPathComponent("users/1/avatar"), token: token, body: body,
                contentType: "multipart/form-data; boundary=\"\(boundary)\"")

            #expect(status == 201)
            #expect(json["filename"] as? String == "ada.png")
            #expect(json["contentType"] as? String == "image/png")
            #expect(json["bytes"] as? Int == 4096)
            #expect(json["fields"] as? [String: String] == ["caption": "At the Analytical Engine"])
        }
    }

    @Test func avatarUploadRefusesWhatIsNotAnImageForm() async throws {
        try await withServer { server, token in
            let url = server.baseURL.appendingPathComponent("users/1/avatar")
            let noFile = multipartBody(parts: [
                (name: "caption", filename: nil, contentType: nil, data: Data("hi".utf8))
            ])
            let (noFileStatus, noFileJSON) = try await send(
                "POST", url, token: token, body: noFile, contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(noFileStatus == 422)
            #expect(noFileJSON["message"] as? String == "the form has no file named avatar")

            let (jsonStatus, jsonError) = try await send(
                "POST", url, token: token, body: Data("{}".utf8), contentType: "application/json")
            #expect(jsonStatus == 400)
            #expect((jsonError["message"] as? String)?.hasPrefix("expected a multipart/form-data body") == true)

            let (otherUserStatus, _) = try await send(
                "POST", server.baseURL.appendingPathComponent("users/2/avatar"), token: token, body: noFile,
                contentType: "multipart/form-data; boundary=\(boundary)")
            #expect(otherUserStatus == 404)
        }
    }

    @Test func accessTokensExpireAfterTheirLifetime() async throws {
        try await withServer(DemoServer.Configuration(tokenLifetime: 0.2)) { server, token in
            let todos = server.baseURL.appendingPathComponent("todos")
            #expect(try await send("GET", todos, token: token).status == 200)
            try await Task.sleep(for: .milliseconds(400))
            let (status, json) = try await send("GET", todos, token: token)
            #expect(status == 401)
            #expect(json["message"] as? String == "access token expired")
        }
    }

    @Test func unknownRoutesAnswerWithAMessageToo() async throws {
        try await withServer { server, token in
            let (status, json) = try await send("GET", server.baseURL.appendingPathComponent("nowhere"), token: token)
            #expect(status == 404)
            #expect(json["message"] as? String == "not found")
        }
    }

    @Test func multipartParserHandlesQuotedParametersAndCRLFInsideFiles() throws {
        let file = Data("line one\r\nline two\r\n".utf8)
        let body = multipartBody(parts: [(name: "avatar", filename: "a b.png", contentType: "image/png", data: file)])
        let form = try MultipartForm(body: body, contentType: "multipart/form-data; boundary=\"\(boundary)\"")
        #expect(form.file(named: "avatar")?.filename == "a b.png")
        #expect(form.file(named: "avatar")?.body == file)
        #expect(throws: MultipartForm.Malformed.self) {
            try MultipartForm(body: body.dropLast(8), contentType: "multipart/form-data; boundary=\(boundary)")
        }
    }

    // MARK: Helpers

    private let boundary = "demo-boundary-42"

    private func multipartBody(parts: [(name: String, filename: String?, contentType: String?, data: Data)]) -> Data {
        var body = Data()
        for part in parts {
            var disposition = "form-data; name=\"\(part.name)\""
            if let filename = part.filename { disposition += "; filename=\"\(filename)\"" }
            body += Data("--\(boundary)\r\nContent-Disposition: \(disposition)\r\n".utf8)
            if let contentType = part.contentType { body += Data("Content-Type: \(contentType)\r\n".utf8) }
            body += Data("\r\n".utf8) + part.data + Data("\r\n".utf8)
        }
        return body + Data("--\(boundary)--\r\n".utf8)
    }

    /// Starts a server, logs in, runs `body`, stops the server.
    private func withServer(
        _ configuration: DemoServer.Configuration = DemoServer.Configuration(),
        _ body: (RunningDemoServer, String) async throws -> Void
    ) async throws {
        let server = try await DemoServer.start(configuration)
        do {
            let login = Data(#"{"username":"ada","password":"lovelace"}"#.utf8)
            let (status, json) = try await send(
                "POST", server.baseURL.appendingPathComponent("auth/login"), body: login,
                contentType: "application/json")
            #expect(status == 200)
            try await body(server, try #require(json["accessToken"] as? String))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func send(
        _ method: String, _ url: URL, token: String? = nil, body: Data? = nil, contentType: String? = nil
    ) async throws -> (status: Int, json: [String: Any]) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }
}
