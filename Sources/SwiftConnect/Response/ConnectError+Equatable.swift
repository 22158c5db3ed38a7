import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ConnectError: Equatable {
    /// Errors are equal when they have the same case and the same values, so that a test or a
    /// caller can compare with the error it expects:
    ///
    /// ```swift
    /// if (error as? ConnectError) == .cancelled { return }
    /// ```
    ///
    /// - Reasons compare as ``InvalidRequestReason`` does.
    /// - Responses compare by status code, URL and body.
    /// - Wrapped errors (`transport`, `validationFailed`) compare as the same error: Foundation's
    ///   (`URLError`, `POSIXError`, `CocoaError`, `NSError`) by domain and code, whatever URL or
    ///   detail they add, so `.transport(underlying: URLError(.timedOut))` matches every timeout;
    ///   others by type, then by `==` when their type is `Equatable` and by their description when
    ///   it is not.
    /// - Decoding failures compare by type, key path, coding path, reason and response.
    /// - Files compare by name, key, media type and source: the same bytes, the same file URL, or
    ///   streams of the same length.
    public static func == (lhs: ConnectError, rhs: ConnectError) -> Bool {
        switch (lhs, rhs) {
        case (.invalidRequest(let left), .invalidRequest(let right)):
            return left == right
        case (.transport(let left), .transport(let right)):
            return sameError(left, right)
        case (.unacceptableStatus(let left, let leftMessage), .unacceptableStatus(let right, let rightMessage)):
            return left.isSame(as: right) && leftMessage == rightMessage
        case (.decoding(let left), .decoding(let right)):
            return left.isSame(as: right)
        case (.validationFailed(let left, let leftError), .validationFailed(let right, let rightError)):
            return left.isSame(as: right) && sameError(leftError, rightError)
        case (.tooManyRedirects(let left), .tooManyRedirects(let right)):
            return left.isSame(as: right)
        case (.uploadSourceChanged(let left, let leftDetail), .uploadSourceChanged(let right, let rightDetail)):
            return left.isSame(as: right) && leftDetail == rightDetail
        case (.cancelled, .cancelled), (.invalidResponse, .invalidResponse), (.abandoned, .abandoned):
            return true
        case (.invalidRequest, _), (.transport, _), (.unacceptableStatus, _), (.decoding, _), (.validationFailed, _),
            (.tooManyRedirects, _), (.uploadSourceChanged, _), (.cancelled, _), (.invalidResponse, _), (.abandoned, _):
            return false
        }
    }

    /// Whether two wrapped errors are the same error, as ``==(_:_:)`` describes.
    static func sameError(_ left: any Error, _ right: any Error) -> Bool {
        // Before the types: FoundationNetworking reports a failure as an `NSError` of
        // `NSURLErrorDomain`, which is the `URLError` of that code all the same.
        let (leftIsFoundation, rightIsFoundation) = (isFoundationError(left), isFoundationError(right))
        if leftIsFoundation || rightIsFoundation {
            guard leftIsFoundation, rightIsFoundation else { return false }
            let (left, right) = (left as NSError, right as NSError)
            return left.domain == right.domain && left.code == right.code
        }
        guard ObjectIdentifier(type(of: left)) == ObjectIdentifier(type(of: right)) else { return false }
        // Through `Any`: from `any Error`, the compiler takes the cast to succeed always (by NSError).
        if let left = (left as Any) as? any Equatable { return left.isEqual(to: right) }
        return String(describing: left) == String(describing: right)
    }

    /// Whether `error` is one of Foundation's errors, whose `userInfo` (a failing URL, a
    /// description) says where it happened rather than what it is.
    private static func isFoundationError(_ error: any Error) -> Bool {
        // Through `Any`: from `any Error`, the compiler takes a cast to NSError to succeed always.
        let value = error as Any
        return value is URLError || value is POSIXError || value is CocoaError || type(of: error) is NSError.Type
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

extension Response {
    /// The same status code, URL and body.
    func isSame(as other: Response) -> Bool {
        statusCode == other.statusCode && url == other.url && data == other.data
    }
}

extension DecodingFailure {
    /// The same type, key path, coding path, reason and response.
    func isSame(as other: DecodingFailure) -> Bool {
        guard type == other.type, keyPath == other.keyPath, codingPath == other.codingPath, reason == other.reason
        else { return false }
        switch (response, other.response) {
        case (nil, nil): return true
        case (let left?, let right?): return left.isSame(as: right)
        default: return false
        }
    }
}

extension File {
    /// The same name, key, media type and source.
    func isSame(as other: File) -> Bool {
        guard name == other.name, key == other.key, mimeType == other.mimeType else { return false }
        switch (content, other.content) {
        case (.data(let left), .data(let right)): return left == right
        case (.fileURL(let left), .fileURL(let right)): return left == right
        case (.stream(let left, _), .stream(let right, _)): return left == right
        default: return false
        }
    }
}
