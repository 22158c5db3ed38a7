import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Connect {
    // MARK: Uploads

    /// Uploads `files` as a `multipart/form-data` body to the endpoint `request` describes; the
    /// future delivers the response body.
    ///
    /// ```swift
    /// let photo = File(name: "me.png", key: "avatar", mimeType: .png, data: pngData)
    /// connect.upload(files: [photo], to: ProfileConnector.avatar(userId: 1)).observe { result in
    ///     print(result)
    /// }
    /// ```
    ///
    /// The connector is built as for ``request(_:debugResponse:)``, with its parameters put to
    /// work this way:
    /// - path parameters fill the endpoint and query parameters stay in the URL;
    /// - `.form(key:value:)` parameters become text fields, in order;
    /// - a `.jsonObject(value:)` becomes one text field per top-level member: strings as they are,
    ///   numbers as written, `true` / `false` as those words, nested objects and arrays as JSON
    ///   text; `null` members are left out;
    /// - fields come first, then the files, in order; several files may share a key.
    ///
    /// Files on disk are read chunk by chunk while they are sent, so any size uploads in bounded
    /// memory. The body is sent with a `Content-Length` and a random boundary (see
    /// ``UploadOptions``). A missing or unreadable file, an empty key or an invalid media type
    /// fails the future with ``ConnectError/invalidRequest(_:)`` before anything is sent; a file
    /// that changes size while it is sent fails it with ``ConnectError/uploadSourceChanged(_:detail:)``.
    ///
    /// - Parameters:
    ///   - files: The files to send; `nil` or empty sends the fields alone.
    ///   - request: The connector to send them to; its method must allow a body (`POST`, `PUT`, …).
    ///   - debugResponse: Logs the request (the multipart body summarised, never its values) and
    ///     the response, as ``request(_:debugResponse:)`` does.
    /// - Returns: A future of the response body, on the configuration's callback queue.
    public func upload(files: [File]?, to request: Connector, debugResponse: Bool = false) -> Future<Data> {
        startUpload(files: files, to: request, options: UploadOptions(), debugResponse: debugResponse, reporter: nil)
            .data
    }

    /// Uploads `files` with the given options (framing, boundary); see
    /// ``upload(files:to:debugResponse:)``.
    ///
    /// - Parameters:
    ///   - files: The files to send; `nil` or empty sends the fields alone.
    ///   - request: The connector to send them to.
    ///   - options: `Content-Length` or chunked framing, and an optional fixed boundary.
    ///   - debugResponse: Logs the request and response.
    /// - Returns: A future of the response body, on the configuration's callback queue.
    public func upload(files: [File]?, to request: Connector, options: UploadOptions, debugResponse: Bool = false)
        -> Future<Data>
    {
        startUpload(files: files, to: request, options: options, debugResponse: debugResponse, reporter: nil)
            .data
    }

    /// Uploads `files`, reporting progress to `progress` on the configuration's callback queue;
    /// see ``upload(files:to:debugResponse:)``.
    ///
    /// ```swift
    /// connect.upload(files: [video], to: VideoConnector.create) { progress in
    ///     progressView.progress = Float(progress.fractionCompleted)
    /// }
    /// .observe { result in print(result) }
    /// ```
    ///
    /// `bytesSent` only increases and `totalBytes` is the body's exact length from the first call;
    /// a successful upload's last call has `bytesSent == totalBytes` and comes before the future's
    /// observers (on a serial callback queue). Calls are coalesced: a fast upload delivers the
    /// newest value rather than every one.
    ///
    /// - Parameters:
    ///   - files: The files to send; `nil` or empty sends the fields alone.
    ///   - request: The connector to send them to.
    ///   - options: Framing and boundary; the defaults send a `Content-Length` and a random boundary.
    ///   - debugResponse: Logs the request and response.
    ///   - progress: Receives the progress on the configuration's callback queue.
    /// - Returns: A future of the response body, on the configuration's callback queue.
    public func upload(
        files: [File]?, to request: Connector, options: UploadOptions = UploadOptions(), debugResponse: Bool = false,
        progress: @escaping @Sendable (UploadProgress) -> Void
    ) -> Future<Data> {
        let reporter = UploadProgressReporter(queue: configuration.callbackQueue, handler: progress, continuation: nil)
        return startUpload(
            files: files, to: request, options: options, debugResponse: debugResponse, reporter: reporter
        )
        .data
    }

    /// Starts uploading `files` and returns the upload's response and its progress as an
    /// `AsyncSequence`; see ``upload(files:to:debugResponse:)``.
    ///
    /// ```swift
    /// let task = connect.uploadTask(files: [video], to: VideoConnector.create)
    /// for await progress in task.progress {
    ///     print(progress)
    /// }
    /// let body = try await task.response.value
    /// ```
    ///
    /// - Parameters:
    ///   - files: The files to send; `nil` or empty sends the fields alone.
    ///   - request: The connector to send them to.
    ///   - options: Framing and boundary; the defaults send a `Content-Length` and a random boundary.
    ///   - debugResponse: Logs the request and response.
    /// - Returns: The running upload.
    public func uploadTask(
        files: [File]?, to request: Connector, options: UploadOptions = UploadOptions(), debugResponse: Bool = false
    ) -> UploadTask {
        let (stream, continuation) = AsyncStream.makeStream(
            of: UploadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let reporter = UploadProgressReporter(
            queue: configuration.callbackQueue, handler: nil, continuation: continuation)
        let response = startUpload(
            files: files, to: request, options: options, debugResponse: debugResponse, reporter: reporter)
        return UploadTask(response: response.data, progress: stream)
    }

    /// Builds the `URLRequest` and the body an upload of `files` to `connector` sends, without
    /// sending anything: the request carries the multipart `Content-Type` (and `Content-Length`),
    /// the body describes the bytes.
    ///
    /// - Throws: ``ConnectError/invalidRequest(_:)``.
    public func uploadRequest(files: [File]?, to connector: Connector, options: UploadOptions = UploadOptions())
        throws -> (request: URLRequest, body: UploadBody)
    {
        let upload = try buildUpload(files: files, to: connector, options: options)
        return (upload.request, upload.body)
    }

    /// The request, the measured body, and the multipart description it was measured from.
    private func buildUpload(files: [File]?, to connector: Connector, options: UploadOptions)
        throws -> (request: URLRequest, body: UploadBody, multipart: MultipartFormData)
    {
        let parameters = try RequestBuilder.parameters(of: connector, encoder: configuration.jsonEncoder)
        var request = try RequestBuilder.makeRequest(
            for: connector, parameters: parameters, body: nil, defaultHeaders: defaultHeaders,
            timeout: configuration.timeoutInterval, baseURL: configuration.baseURL, cache: RequestBuildCache.shared)
        guard connector.method.allowsBody else {
            throw ConnectError.invalidRequest(.bodyNotAllowed(method: connector.method.sent.rawValue))
        }
        var multipart = MultipartFormData(boundary: options.boundary)
        for field in try FormFields.fields(from: parameters.body) {
            multipart.append(field: field.name, value: field.value)
        }
        for file in files ?? [] {
            multipart.append(file)
        }
        let body = try multipart.makeBody(framing: options.framing)
        request.setValue(body.contentType, forHTTPHeaderField: "Content-Type")
        switch options.framing {
        case .contentLength: request.setValue(String(body.contentLength), forHTTPHeaderField: "Content-Length")
        case .chunked: request.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return (request, body, multipart)
    }

    /// Builds the upload and runs it through the pipeline.
    private func startUpload(
        files: [File]?, to connector: Connector, options: UploadOptions, debugResponse: Bool,
        reporter: UploadProgressReporter?
    ) -> Future<Response> {
        let debugResponse = debugResponse || configuration.debugResponses
        let request: URLRequest
        let body: UploadBody
        let multipart: MultipartFormData
        do {
            (request, body, multipart) = try buildUpload(files: files, to: connector, options: options)
        } catch {
            if debugResponse { configuration.logger.log("SwiftConnect: \(error)") }
            reporter?.finish(succeeded: false)
            return Future(result: .failure(error), callbackQueue: configuration.callbackQueue, context: futureContext)
        }
        reporter?.start(totalBytes: body.contentLength)
        if debugResponse {
            configuration.logger.log(
                "SwiftConnect: multipart/form-data upload, \(body.contentLength) bytes: \(multipart.summary)")
        }
        var pipeline = pipeline(for: connector, debugResponse: debugResponse)
        pipeline.uploadBody = body
        pipeline.uploadProgress = reporter
        return send(request, pipeline: pipeline)
    }
}
