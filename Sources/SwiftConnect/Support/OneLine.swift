/// Text quoted in an error's description, kept on the description's one line.
///
/// A description quotes text that a user or a server chose — a header name, a file's path, a URL,
/// a JSON key — and is printed and logged. A line break in that text would split the log line and
/// could start a forged one, so every such quote goes through ``escaped(_:)``.
enum OneLine {
    /// `text` with its control characters and line separators escaped (`\r`, `\n`, `\t`, `\0`,
    /// any other as `\u{7F}`, `\u{85}`, `\u{2028}`), so that a description quoting it stays on one
    /// line. A backslash is escaped too (`\\`): two texts never read the same, and `==`, which
    /// compares most invalid-request reasons by description, holds.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) || $0 == "\\" }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\0": result += "\\0"
            case "\\": result += "\\\\"
            case _ where isControl(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A C0 or C1 control character, DEL, or a Unicode line or paragraph separator: each of them a
    /// line break to some reader (`Character.isNewline` counts NEL, U+2028 and U+2029 among them).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return false
        }
    }
}
