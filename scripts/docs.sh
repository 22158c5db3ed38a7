#!/usr/bin/env bash
# Builds SwiftConnect's DocC documentation from its symbol graph and its catalog
# (Sources/SwiftConnect/SwiftConnect.docc). Any warning fails: a broken ``link``, an ambiguous
# one, a parameter without documentation.
#
#   scripts/docs.sh                 check only (CI)
#   scripts/docs.sh --output DIR    also keep the rendered archive in DIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUTPUT=""
if [ "${1:-}" = "--output" ]; then OUTPUT="${2:?--output needs a directory}"; fi

DOCC="$(command -v docc || true)"
if [ -z "$DOCC" ]; then DOCC="$(dirname "$(command -v swift)")/docc"; fi

# A build directory of its own, so that the symbol graph is emitted whenever the library
# compiles, whatever the main build has cached; it stays up to date with the sources.
BUILD=.build/docs
GRAPHS="$BUILD/symbol-graphs"
mkdir -p "$GRAPHS"
swift build --target SwiftConnect --build-path "$BUILD" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$ROOT/$GRAPHS"

ARCHIVE="$OUTPUT"
if [ -z "$ARCHIVE" ]; then
    ARCHIVE="$(mktemp -d)"
    trap 'rm -rf "$ARCHIVE"' EXIT
fi
"$DOCC" convert Sources/SwiftConnect/SwiftConnect.docc \
    --additional-symbol-graph-dir "$GRAPHS" \
    --fallback-display-name SwiftConnect --fallback-bundle-identifier org.swiftconnect.SwiftConnect \
    --output-path "$ARCHIVE" --warnings-as-errors
echo "docs: no warnings${OUTPUT:+; archive in $OUTPUT}"
