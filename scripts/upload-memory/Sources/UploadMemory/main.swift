// Uploads one file to the test server's /sink in one of several ways and prints what the server
// received and how long it took. Run under /usr/bin/time -v for the peak RSS:
//
//   UploadMemory <mode> <file> <server URL>
//
// modes:
//   library          Connect.upload, Content-Length framing (the default)
//   library-chunked  Connect.upload, chunked framing
//   library-data     Connect.upload of a File made from Data (the file read into memory first)
//   spooled          the multipart body written to a temporary file, then
//                    URLSession.uploadTask(with:fromFile:) (deleted afterwards)
//   plain-file       URLSession.uploadTask(with:fromFile:) of the raw file: no multipart, the baseline
import Foundation
import SwiftConnect

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Sink: Connector {
    let server: URL
    var baseURL: URL { server }
    var endpoint: String { "/sink" }
    var method: HTTPMethod { .post }
}

/// Collects a URLSession task's response for the baseline modes.
final class Collector: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: `body` and `error` are written on the session's serial delegate queue
    // and read only after `done` is signalled.
    var body = Data()
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        body.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error = error
        done.signal()
    }
}

func uploadFromFile(_ file: URL, to url: URL, contentType: String) throws -> Data {
    let collector = Collector()
    let session = URLSession(configuration: .default, delegate: collector, delegateQueue: nil)
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.setValue(contentType, forHTTPHeaderField: "Content-Type")
    session.uploadTask(with: request, fromFile: file).resume()
    collector.done.wait()
    session.finishTasksAndInvalidate()
    if let error = collector.error { throw error }
    return collector.body
}

/// Writes the body's stream to `destination`, 1 MiB at a time.
func spool(_ body: UploadBody, to destination: URL) throws {
    guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: destination)
    defer { try? handle.close() }
    let stream = body.makeInputStream()
    stream.open()
    defer { stream.close() }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let count = stream.read(&buffer, maxLength: buffer.count)
        if count < 0 { throw stream.streamError ?? CocoaError(.fileReadUnknown) }
        if count == 0 { return }
        try handle.write(contentsOf: buffer[0..<count])
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let server = URL(string: arguments[3]) else {
    print("usage: UploadMemory library|library-chunked|library-data|spooled|plain-file <file> <server URL>")
    exit(2)
}
let mode = arguments[1]
let fileURL = URL(fileURLWithPath: arguments[2])
let sinkURL = server.appendingPathComponent("sink")
var configuration = ConnectConfiguration()
configuration.callbackQueue = DispatchQueue(label: "measure.callbacks")
configuration.timeoutInterval = 600
let connect = Connect(configuration: configuration)

let start = Date()
let response: Data
switch mode {
case "library", "library-chunked":
    let options = UploadOptions(framing: mode == "library" ? .contentLength : .chunked)
    response = try await connect.upload(files: [File(key: "file", fileURL: fileURL)], to: Sink(server: server), options: options).value
case "library-data":
    let data = try Data(contentsOf: fileURL)
    let file = File(name: fileURL.lastPathComponent, key: "file", mimeType: .binary, data: data)
    response = try await connect.upload(files: [file], to: Sink(server: server)).value
case "spooled":
    let (request, body) = try connect.uploadRequest(files: [File(key: "file", fileURL: fileURL)], to: Sink(server: server))
    let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString).multipart")
    defer { try? FileManager.default.removeItem(at: temporary) }
    try spool(body, to: temporary)
    let spooled = Date().timeIntervalSince(start)
    print(String(format: "spooled to a temporary file in %.2f s", spooled))
    response = try uploadFromFile(temporary, to: sinkURL, contentType: body.contentType)
    _ = request
case "plain-file":
    response = try uploadFromFile(fileURL, to: sinkURL, contentType: "application/octet-stream")
default:
    print("unknown mode \(mode)")
    exit(2)
}
let elapsed = Date().timeIntervalSince(start)
let size = (try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.doubleValue ?? 0
print(String(format: "%@: %.2f s, %.0f MB/s of file content", mode, elapsed, size / elapsed / 1e6))
print(String(decoding: response, as: UTF8.self).replacingOccurrences(of: "\n", with: " "))
