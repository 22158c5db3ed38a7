#!/usr/bin/env bash
# Checks that the library and its tests use no API newer than the Apple deployment targets in
# Package.swift (macOS 10.15, iOS 13, …) outside an `if #available` or `@available` scope.
# Builds here are Linux builds, whose compiler checks no Apple availability; without this, such a
# use would first fail on a user's Mac. See scripts/availability.py for how it is found.
#
# Second, it checks that the library needs no `Sendable` conformance Apple gives only on later
# systems: Apple's `JSONEncoder` and `JSONDecoder` are `Sendable` from macOS 13 and iOS 16 on, where
# Linux's always are. The library's sources are type-checked with stand-ins of the two that are not
# `Sendable`, as Apple's compiler sees them for the deployment targets.
#
# Its blind spots:
# - FoundationNetworking and the parts of Foundation that come from swift-corelibs-foundation
#   (URLSession, FileHandle, streams, …) carry almost no Apple availability on Linux, so their
#   newer API (`FileHandle.write(contentsOf:)`, macOS 10.15.4) passes;
# - code under `#if canImport(Darwin)` or `#if os(macOS)` is not compiled here, so not checked.
#
#   scripts/availability.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SWIFT_BIN="$(dirname "$(command -v swift)")"
export PATH="$SWIFT_BIN:$PATH"
RESOURCES="$(dirname "$SWIFT_BIN")/lib/swift/linux"

WORK=.build/availability
rm -rf "$WORK"
mkdir -p "$WORK/graphs"
export TMPDIR="${TMPDIR:-$ROOT/.build/tmp}"
mkdir -p "$TMPDIR"

# The test targets import the library: its module comes from a build.
swift build --target SwiftConnect >/dev/null
MODULES="$(swift build --show-bin-path)/Modules"

# What the modules declare, with each symbol's @available: the toolchain's and the library's (a
# test calling a library API marked @available is checked too).
for module in Swift _Concurrency _StringProcessing Synchronization Dispatch Foundation FoundationEssentials \
    FoundationInternationalization FoundationNetworking Testing Observation RegexBuilder SwiftConnect; do
    swift-symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" \
        -minimum-access-level public -output-dir "$WORK/graphs" -I "$RESOURCES" -I "$MODULES" -sdk / >/dev/null
done

# What each module refers to: every file's AST, in batches across the cores, with SwiftPM's
# flags for a debug build. swiftc writes each batch's dump whole, to stdout or stderr.
dump() { # name, language mode, extra flags..., then the files
    local name="$1" mode="$2"
    shift 2
    if ! swiftc -dump-ast -dump-ast-format json -module-name "$name" -swift-version "$mode" -parse-as-library \
        -DDEBUG -DSWIFT_PACKAGE -j "$(nproc)" -enable-batch-mode "$@" >"$WORK/$name.json" 2>&1; then
        echo "availability: swiftc could not dump $name:"
        grep -E 'error:' "$WORK/$name.json" | head -20 || tail -20 "$WORK/$name.json"
        exit 1
    fi
    # Every file given must be in the dump.
    local given dumped
    given=$(printf '%s\n' "$@" | grep -c '\.swift$')
    dumped=$(grep -o '{"_kind":"source_file"' "$WORK/$name.json" | wc -l)
    if [ "$given" != "$dumped" ]; then
        echo "availability: the AST of $name has $dumped files, not $given"
        exit 1
    fi
}

# First, the check must still see through this toolchain's dump: a use it has to report.
cat >"$WORK/Canary.swift" <<'SWIFT'
func canary() async throws { try await Task.sleep(for: .seconds(1)) }
SWIFT
dump Canary 6 "$WORK/Canary.swift"
if python3 scripts/availability.py Package.swift "$WORK/graphs" "$WORK/Canary.json" >"$WORK/canary.txt" ||
    ! grep -q 'Task.sleep(for:tolerance:clock:)' "$WORK/canary.txt"; then
    echo "availability: the check no longer reports an unguarded Task.sleep(for:); its output was:"
    cat "$WORK/canary.txt"
    exit 1
fi

dump SwiftConnect 6 $(find Sources/SwiftConnect -name '*.swift' | sort)
dump SwiftConnectTests 6 -I "$MODULES" $(find Tests/SwiftConnectTests -name '*.swift' | sort)
dump UsageDocumentTests 5 -I "$MODULES" $(find Tests/UsageDocumentTests -name '*.swift' | sort)
dump MainActorDefaultTests 6 -default-isolation MainActor -I "$MODULES" \
    $(find Tests/MainActorDefaultTests -name '*.swift' | sort)

python3 scripts/availability.py Package.swift "$WORK/graphs" \
    "$WORK/SwiftConnect.json" "$WORK/SwiftConnectTests.json" "$WORK/UsageDocumentTests.json" \
    "$WORK/MainActorDefaultTests.json"

# Second, the coders' `Sendable`: the library type-checked with stand-ins for JSONEncoder and
# JSONDecoder that are not `Sendable` (a type of the module shadows Foundation's), as on Apple
# platforms before macOS 13 and iOS 16. First the stand-ins must still be what the check relies
# on: a `Sendable` type storing one is an error.
cat >"$WORK/Coders.swift" <<'SWIFT'
import Foundation

/// Not `Sendable`, as Apple's `JSONDecoder` before macOS 13 and iOS 16.
open class JSONDecoder {
    public typealias DateDecodingStrategy = Foundation.JSONDecoder.DateDecodingStrategy
    public typealias KeyDecodingStrategy = Foundation.JSONDecoder.KeyDecodingStrategy
    let base = Foundation.JSONDecoder()
    public init() {}
    open func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try base.decode(type, from: data) }
    open var keyDecodingStrategy: KeyDecodingStrategy {
        get { base.keyDecodingStrategy }
        set { base.keyDecodingStrategy = newValue }
    }
    open var dateDecodingStrategy: DateDecodingStrategy {
        get { base.dateDecodingStrategy }
        set { base.dateDecodingStrategy = newValue }
    }
}

/// Not `Sendable`, as Apple's `JSONEncoder` before macOS 13 and iOS 16.
open class JSONEncoder {
    let base = Foundation.JSONEncoder()
    public init() {}
    open func encode<T: Encodable>(_ value: T) throws -> Data { try base.encode(value) }
    open var outputFormatting: Foundation.JSONEncoder.OutputFormatting {
        get { base.outputFormatting }
        set { base.outputFormatting = newValue }
    }
}
SWIFT
typecheck() { # output file, then the files
    local output="$1"
    shift
    swiftc -typecheck -module-name SwiftConnect -swift-version 6 -parse-as-library -DSWIFT_PACKAGE \
        -j "$(nproc)" -enable-batch-mode "$WORK/Coders.swift" "$@" >"$output" 2>&1
}
cat >"$WORK/CodersCanary.swift" <<'SWIFT'
struct Canary: Sendable { let decoder: JSONDecoder }
SWIFT
if typecheck "$WORK/coders-canary.txt" "$WORK/CodersCanary.swift" ||
    ! grep -q "non-Sendable type 'JSONDecoder'" "$WORK/coders-canary.txt"; then
    echo "availability: a Sendable type storing the JSONDecoder stand-in is no longer an error; the output was:"
    cat "$WORK/coders-canary.txt"
    exit 1
fi
if ! typecheck "$WORK/coders.txt" $(find Sources/SwiftConnect -name '*.swift' | sort); then
    echo "availability: the library needs JSONEncoder or JSONDecoder to be Sendable, which Apple's are only"
    echo "from macOS 13, iOS 16, tvOS 16 and watchOS 9 on: hold them in a SendableCoder. The compiler said:"
    grep -E 'error:' "$WORK/coders.txt" | sort -u | head -20
    exit 1
fi
echo "availability: the library needs no Sendable JSONEncoder or JSONDecoder"
