/// A set of ASCII bytes as a 128-bit mask: a membership test is a shift and a mask, not a chain of
/// comparisons (building a request tests every byte of its URL). Bytes from 128 up are never in it.
/// The byte classes the encoders and validators share.
///
/// The sets are written as constants so that they need no lazy initialisation on Linux; the tests
/// check each against its definition, byte by byte.
struct ASCIISet: Sendable {
    /// Bytes 0–63, bit `n` for byte `n`.
    let low: UInt64
    /// Bytes 64–127, bit `n` for byte `64 + n`.
    let high: UInt64

    /// Whether `byte` is in the set.
    @inline(__always)
    func contains(_ byte: UInt8) -> Bool {
        // A select rather than two branches: the bytes of a URL mix letters (in `high`) with
        // digits and punctuation (in `low`).
        let word = byte < 64 ? low : high
        return byte < 128 && word >> UInt64(byte & 63) & 1 != 0
    }

    /// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static let unreserved = ASCIISet(low: 0x03FF_6000_0000_0000, high: 0x47FF_FFFE_87FF_FFFE)

    /// What a developer-written path may keep: pchar (unreserved, sub-delims, ":", "@") and "/".
    static let pathLiteral = ASCIISet(low: 0x2FFF_FFD2_0000_0000, high: 0x47FF_FFFE_87FF_FFFF)

    /// What a developer-written query may keep: pchar, "/" and "?".
    static let queryLiteral = ASCIISet(low: 0xAFFF_FFD2_0000_0000, high: 0x47FF_FFFE_87FF_FFFF)

    /// RFC 9110 tchar, the bytes of a token (a method or a header name): ALPHA / DIGIT and
    /// the symbols `!#$%&'*+-.^_|~` and the backtick.
    static let token = ASCIISet(low: 0x03FF_6CFA_0000_0000, high: 0x57FF_FFFF_C7FF_FFFE)

    /// Whether `string` is an RFC 9110 token, as a method or a header name must be: one or more
    /// ``token`` bytes.
    static func isToken(_ string: String) -> Bool {
        string.withUTF8Bytes { !$0.isEmpty && $0.allSatisfy(token.contains) }
    }

    /// RFC 2046 bchars, the characters of a multipart boundary: ALPHA / DIGIT and
    /// `'()+_,-./:=?` and space.
    static let boundary = ASCIISet(low: 0xA7FF_FB81_0000_0000, high: 0x07FF_FFFE_87FF_FFFE)
}
