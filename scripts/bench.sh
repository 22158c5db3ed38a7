#!/usr/bin/env bash
# Runs SwiftConnect's benchmarks (the Benchmarks/ package, package-benchmark) against a local nginx.
#
#   scripts/bench.sh                       all suites; prints package-benchmark's tables, then a
#                                          summary of the ratios (Benchmarks/summarize.py)
#   scripts/bench.sh --target EndToEnd     any `swift package benchmark` arguments pass through
#   scripts/bench.sh thresholds check      compare a run with Benchmarks/Thresholds (exit 2: a
#                                          regression, 4: only improvements, 0: equal)
#   scripts/bench.sh thresholds update     record a run as the new thresholds
#   scripts/bench.sh --server-only         start the servers, print SWIFTCONNECT_BENCH_URL=... and
#                                          SWIFTCONNECT_BENCH_SINK_URL=..., wait
#
# nginx comes from Debian's packages (installed with apt-get when missing and running as root). It
# runs as this script's own process, from a config in a temporary directory, on a free 127.0.0.1
# port, serving Benchmarks/Server/todo.json with keep-alive; it is stopped by pid on exit. Beside it,
# Benchmarks/Server/sink.py (python3, standard library) reads upload bodies to the end and discards
# them, for the Uploads suite; also stopped by pid.
# Environment knobs:
#   SWIFTCONNECT_BENCH_SECONDS   time per end-to-end benchmark (default 8)
#   SWIFTCONNECT_BENCH_UPLOAD_1GIB=1  adds the 1 GiB upload to the Uploads suite (about 1½ minutes more)
#   BENCH_NGINX                  nginx binary (default: nginx on PATH, or /usr/sbin/nginx)
#   TMPDIR                       temporary files: the build's, nginx's prefix, the upload fixtures
#                                (default: Benchmarks/.build/tmp)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH="$ROOT/Benchmarks"
cd "$ROOT"

log() { echo "[bench.sh] $*" >&2; }

SERVER_ONLY=0
if [ "${1:-}" = "--server-only" ]; then
    SERVER_ONLY=1
    shift
fi

# ---------------------------------------------------------------- nginx
find_nginx() {
    if [ -n "${BENCH_NGINX:-}" ]; then echo "$BENCH_NGINX"; return; fi
    command -v nginx 2>/dev/null && return
    [ -x /usr/sbin/nginx ] && { echo /usr/sbin/nginx; return; }
    return 1
}

NGINX="$(find_nginx || true)"
if [ -z "$NGINX" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        log "installing nginx-light from Debian's packages ..."
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null \
            || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
        NGINX="$(find_nginx)"
    else
        log "ERROR: nginx not found; install it (apt-get install nginx-light) or set BENCH_NGINX"
        exit 1
    fi
fi

# The Swift driver leaves an empty TemporaryDirectory.XXXXXX in the temporary directory on every
# invocation: they, the server's prefix and the upload fixtures go to Benchmarks/.build/tmp, as
# scripts/test.sh does for the tests. (A TMPDIR set by the caller is kept.)
if [ -z "${TMPDIR:-}" ]; then
    export TMPDIR="$BENCH/.build/tmp"
    mkdir -p "$TMPDIR"
    # Those of earlier runs: an hour old, no build of this run is using them.
    find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'TemporaryDirectory.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
fi

PREFIX="$(mktemp -d "$TMPDIR/swiftconnect-bench.XXXXXX")"
SERVER_PID=""
SINK_PID=""
cleanup() {
    if [ -n "$SINK_PID" ]; then
        kill "$SINK_PID" 2>/dev/null || true
        wait "$SINK_PID" 2>/dev/null || true
        SINK_PID=""
    fi
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
    rm -rf "$PREFIX"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# 0 once /todos/1 answers 200, 1 if nginx died, 2 on timeout.
wait_ready() {
    local url="$1" deadline=$((SECONDS + 10))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        if python3 - "$url/todos/1" <<'EOF' 2>/dev/null; then return 0; fi
import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200 else 1)
EOF
        sleep 0.1
    done
    return 2
}

start_server() {
    local attempt port
    for attempt in 1 2 3 4 5; do
        port="$(free_port)"
        sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@PORT@|$port|g" -e "s|@ROOT@|$BENCH/Server|g" \
            "$BENCH/Server/nginx.conf.template" >"$PREFIX/nginx.conf"
        "$NGINX" -p "$PREFIX" -c "$PREFIX/nginx.conf" -e "$PREFIX/error.log" &
        SERVER_PID=$!
        if wait_ready "http://127.0.0.1:$port"; then
            SERVER_URL="http://127.0.0.1:$port"
            return 0
        fi
        log "nginx did not start on port $port (attempt $attempt):"
        cat "$PREFIX/error.log" >&2 || true
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    done
    log "ERROR: could not start nginx"
    exit 1
}

# The upload sink: 0 once it answers, 1 otherwise.
start_sink() {
    local attempt port deadline
    for attempt in 1 2 3; do
        port="$(free_port)"
        python3 "$BENCH/Server/sink.py" "$port" &
        SINK_PID=$!
        deadline=$((SECONDS + 10))
        while [ $SECONDS -lt $deadline ] && kill -0 "$SINK_PID" 2>/dev/null; do
            if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
                "http://127.0.0.1:$port/" 2>/dev/null; then
                SINK_URL="http://127.0.0.1:$port"
                return 0
            fi
            sleep 0.1
        done
        log "the upload sink did not start on port $port (attempt $attempt)"
        kill "$SINK_PID" 2>/dev/null || true
        wait "$SINK_PID" 2>/dev/null || true
        SINK_PID=""
    done
    log "ERROR: could not start the upload sink"
    exit 1
}

start_server
export SWIFTCONNECT_BENCH_URL="$SERVER_URL"
log "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (pid $SERVER_PID) serving $SERVER_URL"
start_sink
export SWIFTCONNECT_BENCH_SINK_URL="$SINK_URL"
log "upload sink (pid $SINK_PID) at $SINK_URL"

if [ "$SERVER_ONLY" = 1 ]; then
    echo "SWIFTCONNECT_BENCH_URL=$SERVER_URL"
    echo "SWIFTCONNECT_BENCH_SINK_URL=$SINK_URL"
    wait "$SERVER_PID"
    exit 0
fi

# ---------------------------------------------------------------- benchmarks
# package-benchmark builds the suites in release mode and runs each in its own process.
# From inside Benchmarks/, so that the plugin's relative paths (Thresholds/, .benchmarkBaselines/)
# land there.
cd "$BENCH"
PLUGIN=(swift package --allow-writing-to-package-directory benchmark)
case "${1:-}" in
    thresholds | baseline | list | help | init)
        # `swift package` turns every plugin failure into exit 1; the plugin's own verdict is in
        # its last error line, so a threshold check gets back its documented exit status.
        OUTPUT="$PREFIX/plugin-output.txt"
        status=0
        "${PLUGIN[@]}" "$@" 2>&1 | tee "$OUTPUT" || status=$?  # pipefail: the plugin's status
        if [ "$status" != 0 ]; then
            if grep -q "benchmarkThresholdRegression" "$OUTPUT"; then
                status=2
            elif grep -q "benchmarkThresholdImprovement" "$OUTPUT"; then
                status=4
            fi
        fi
        exit "$status"
        ;;
esac

# A plain run: package-benchmark's tables (markdown), kept in Benchmarks/.results/latest.md, then
# the summary of ratios.
RESULTS="$BENCH/.results"
mkdir -p "$RESULTS"
"${PLUGIN[@]}" "$@" --format markdown --no-progress | tee "$RESULTS/latest.md"
echo
python3 "$BENCH/summarize.py" "$RESULTS/latest.md"
