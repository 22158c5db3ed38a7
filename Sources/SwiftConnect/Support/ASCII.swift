/// Byte classes shared by the encoders and validators.
enum ASCII {
    /// `A-Z`, `a-z`, `0-9`.
    @inline(__always)
    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return false
        }
    }
}
