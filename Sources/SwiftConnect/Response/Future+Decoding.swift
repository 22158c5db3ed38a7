import Foundation

extension Future {
    /// The decoder to use, read once this future has completed: the one passed, else that of the
    /// request the value came from (its endpoint's, else its client's — also through a `flatMap`
    /// or `flatRecover` that continued with another request), else the `Connect` configuration's
    /// this chain started from, else a default one.
    @inlinable
    func resolvedDecoder(_ decoder: JSONDecoder?, origin: Future<Response>?) -> JSONDecoder {
        decoder ?? origin?.context.decoder ?? context.decoder ?? JSONDecoder()
    }
}

extension Future where Value == Data {
    /// Decodes the body as JSON into `type`, optionally at a dot-separated key path.
    ///
    /// ```swift
    /// connect.request(TodoConnector.get(id: 1)).decoded(toType: Todo.self)
    /// connect.request(SearchConnector.find("swift")).decoded(toType: [Item].self, keyPath: "data.items")
    /// ```
    ///
    /// Key path components are object keys as they appear in the JSON, or array indexes
    /// (`items.0`). An empty body (a `204`) decodes into ``Empty``, and into `nil` for an optional
    /// type without a key path (`decoded(toType: Todo?.self)`); into anything else it fails with
    /// ``ConnectError/decoding(_:)``.
    ///
    /// Decoding runs where this future completes (on the calling thread if it has completed
    /// already), before the hop to the callback queue: for the
    /// body of a request (or of the request a `flatMap` continued with), where the body arrives,
    /// never on the main queue; after a `map`, `mapError` or `recover`, which run on the callback
    /// queue, on that queue — so decode before those steps. One exception: a body that arrives on
    /// URLSession's own queue (a lone small response on Linux) and is observed on a callback queue
    /// other than the main queue is decoded on the callback queue, just before the observers, so
    /// that URLSession's queue is free sooner. Observers of the returned future run on the callback
    /// queue.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: Where in the JSON the value sits, e.g. `data.item`; `nil` for the whole body.
    ///   - decoder: The decoder; `nil` (the default) uses the `Connect` configuration's.
    /// - Returns: A future of the decoded value, failing with ``ConnectError/decoding(_:)``. For
    ///   the body of a response (``Connect/request(_:debugResponse:)``, ``Future/data``), the
    ///   failure carries the response: its status code and body — also when the body passes
    ///   through `mapError`, `recover` or `flatRecover`, or comes from the request a `flatMap` or
    ///   `flatRecover` continued with.
    @inlinable
    public func decoded<T: Decodable & Sendable>(
        toType type: T.Type, keyPath: String? = nil, decoder: JSONDecoder? = nil
    )
        -> Future<T>
    {
        // Boxed for the closure: Apple's Foundation makes `JSONDecoder` `Sendable` only from
        // macOS 13 and iOS 16.
        let decoder = decoder.map(SendableCoder.init)
        return mapBeforeObservers { [self] data in
            // Read now, not when the chain was made: a `flatMap` learns its request only when the
            // future it continued with completes it.
            let decoder = resolvedDecoder(decoder?.coder, origin: responseSource?.requestOrigin)
            do {
                return try BodyDecoder.decode(type, from: data, keyPath: keyPath, decoder: decoder, response: nil)
            } catch {
                // Read now: a `flatMap` learns its response only when the future it continued with
                // completes it.
                throw BodyDecoder.failure(error, withResponseOf: responseSource)
            }
        }
    }

    /// Decodes the body as JSON into `type` if there is a value: an empty body, or a key path that
    /// is missing or `null`, gives `nil`; malformed JSON still fails.
    ///
    /// Missing means a key the object does not have, or an index past the end of the array. A key
    /// path that runs into a number, a string, a boolean, or (by name) into an array still fails:
    /// the body is not shaped as the path says.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: Where in the JSON the value sits; `nil` for the whole body.
    ///   - decoder: The decoder; `nil` (the default) uses the `Connect` configuration's.
    /// - Returns: A future of the decoded value or `nil`.
    @inlinable
    public func decodedIfPresent<T: Decodable & Sendable>(
        toType type: T.Type, keyPath: String? = nil, decoder: JSONDecoder? = nil
    ) -> Future<T?> {
        let decoder = decoder.map(SendableCoder.init)
        return mapBeforeObservers { [self] data in
            let decoder = resolvedDecoder(decoder?.coder, origin: responseSource?.requestOrigin)
            do {
                return try BodyDecoder.decodeIfPresent(
                    type, from: data, keyPath: keyPath, decoder: decoder, response: nil)
            } catch {
                throw BodyDecoder.failure(error, withResponseOf: responseSource)
            }
        }
    }
}

extension Future where Value == Response {
    /// Decodes the response body as JSON into `type`, optionally at a dot-separated key path.
    /// Decoding failures carry the response.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: Where in the JSON the value sits; `nil` for the whole body.
    ///   - decoder: The decoder; `nil` (the default) uses the `Connect` configuration's.
    /// - Returns: A future of the decoded value, failing with ``ConnectError/decoding(_:)``.
    @inlinable
    public func decoded<T: Decodable & Sendable>(
        toType type: T.Type, keyPath: String? = nil, decoder: JSONDecoder? = nil
    )
        -> Future<T>
    {
        let decoder = decoder.map(SendableCoder.init)
        return mapBeforeObservers { [self] response in
            try BodyDecoder.decode(
                type, from: response.data, keyPath: keyPath,
                decoder: resolvedDecoder(decoder?.coder, origin: requestOrigin), response: response)
        }
    }

    /// Decodes the body if there is a value, as `decodedIfPresent(toType:keyPath:decoder:)` of a
    /// `Future<Data>` does.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: Where in the JSON the value sits; `nil` for the whole body.
    ///   - decoder: The decoder; `nil` (the default) uses the `Connect` configuration's.
    /// - Returns: A future of the decoded value or `nil`.
    @inlinable
    public func decodedIfPresent<T: Decodable & Sendable>(
        toType type: T.Type, keyPath: String? = nil, decoder: JSONDecoder? = nil
    ) -> Future<T?> {
        let decoder = decoder.map(SendableCoder.init)
        return mapBeforeObservers { [self] response in
            try BodyDecoder.decodeIfPresent(
                type, from: response.data, keyPath: keyPath,
                decoder: resolvedDecoder(decoder?.coder, origin: requestOrigin), response: response)
        }
    }

    /// The future of the request this one's response came from, once it has completed: the one a
    /// `flatMap` or `flatRecover` continued with, else this one. Its context holds that request's
    /// decoder.
    @inlinable
    var requestOrigin: Future<Response> {
        responseSource ?? self
    }

    /// The body alone, taken where the response arrives; observers run on the callback queue.
    /// Decoding it (`decoded(toType:keyPath:decoder:)`) still reports the response with
    /// a failure.
    @inlinable
    public var data: Future<Data> {
        let body = mapWhereCompleted(\.data)
        // Before anyone else holds `body`: its decoding steps read this after it completes.
        body.responseSource = self
        return body
    }
}
