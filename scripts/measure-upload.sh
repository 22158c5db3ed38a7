#!/usr/bin/env bash
# Measures peak RSS and time of uploading one large file to the local test server, in each way
# scripts/upload-memory knows (see its main.swift). By hand only: not part of the tests or CI.
#
#   scripts/measure-upload.sh [size in MiB, default 1024] [modes...]
#
# Needs /usr/bin/time (GNU time). The file is random bytes in a temporary directory, removed after.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZE_MIB="${1:-1024}"
shift || true
MODES=("$@")
if [ ${#MODES[@]} -eq 0 ]; then MODES=(library library-chunked spooled plain-file library-data); fi

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "building scripts/upload-memory (release) ..." >&2
swift build -c release --package-path "$ROOT/scripts/upload-memory" >&2
BIN="$(swift build -c release --package-path "$ROOT/scripts/upload-memory" --show-bin-path)/UploadMemory"

echo "writing a ${SIZE_MIB} MiB file ..." >&2
head -c "$((SIZE_MIB * 1024 * 1024))" /dev/urandom >"$WORK/upload.bin"

"$ROOT/scripts/test.sh" --server-only >"$WORK/server.out" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
    grep -q '^HTTPBIN_URL=' "$WORK/server.out" && break
    sleep 0.2
done
URL="$(sed -n 's/^HTTPBIN_URL=//p' "$WORK/server.out")"
[ -n "$URL" ] || { cat "$WORK/server.out" >&2; exit 1; }

printf '%-16s %10s %14s  %s\n' mode seconds "peak RSS (MB)" "server saw"
for mode in "${MODES[@]}"; do
    /usr/bin/time -v "$BIN" "$mode" "$WORK/upload.bin" "$URL" >"$WORK/out" 2>"$WORK/time" || { cat "$WORK/out" "$WORK/time" >&2; exit 1; }
    seconds="$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time")"
    rss_kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time")"
    seen="$(grep -o '"bytes": [0-9]*\|"content_length": [^,]*\|"transfer_encoding": [^,}]*' "$WORK/out" | tr '\n' ' ')"
    printf '%-16s %10s %14s  %s\n' "$mode" "$seconds" "$((rss_kb / 1024))" "$seen"
done
