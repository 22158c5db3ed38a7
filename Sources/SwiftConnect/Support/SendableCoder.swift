import Foundation

/// A `JSONEncoder` or `JSONDecoder`, held where the compiler asks for `Sendable`: in a `Sendable`
/// type's stored property, or captured by a `@Sendable` closure.
///
/// Apple's Foundation declares the two coders `Sendable` only from macOS 13, iOS 16, tvOS 16 and
/// watchOS 9 (`@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) extension JSONDecoder:
/// @unchecked Sendable`), so on this package's older deployment targets a `Sendable` type storing
/// one, or a `@Sendable` closure capturing one, is an error in the Swift 6 language mode. Linux's
/// Foundation has no such limit, so only Apple's compiler would say so; `scripts/availability.sh`
/// builds the library with stand-ins that are not `Sendable` to check that every coder goes
/// through here.
///
/// `@unchecked`, as Apple's own conformance is: a coder reads its options when it starts and keeps
/// its state per call, so several threads may encode or decode with it at once. Changing its
/// options meanwhile is a race, with or without this box; the documents say to set a coder up
/// before handing it over.
@usableFromInline
struct SendableCoder<Coder: JSONCoder>: @unchecked Sendable {
    @usableFromInline let coder: Coder

    @inlinable
    init(_ coder: Coder) {
        self.coder = coder
    }
}

/// The two coders ``SendableCoder`` holds, and only they: the reason its conformance is unchecked
/// holds for them, not for any class.
@usableFromInline
protocol JSONCoder: AnyObject {}

extension JSONEncoder: JSONCoder {}
extension JSONDecoder: JSONCoder {}
