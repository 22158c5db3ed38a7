#!/usr/bin/env bash
# Runs `swift test` against a local httpbin server (gunicorn on 127.0.0.1), with the
# routes of scripts/swiftconnect_testserver.py (/multipart, /sink, /cut) added.
#
#   scripts/test.sh [swift test args...]   e.g. scripts/test.sh --sanitize=thread
#   scripts/test.sh --server-only          start httpbin, print HTTPBIN_URL=..., wait until killed
#
# The Python virtualenv is cached in .build/httpbin-venv (pins: scripts/httpbin-requirements.txt).
# The server log goes to .build/httpbin.log. Environment knobs:
#   PYTHON            interpreter used to create the venv (default: python3)
#   HTTPBIN_WORKERS   gunicorn worker processes (default: 4)
#   HTTPBIN_THREADS   threads per worker        (default: 64)
#   TMPDIR            temporary directory for the build and the tests (default: .build/tmp)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.build/httpbin-venv"
REQS="$ROOT/scripts/httpbin-requirements.txt"
STAMP="$VENV/.requirements.sha256"
LOG="$ROOT/.build/httpbin.log"
WORKERS="${HTTPBIN_WORKERS:-4}"
THREADS="${HTTPBIN_THREADS:-64}"

SERVER_ONLY=0
if [ "${1:-}" = "--server-only" ]; then
    SERVER_ONLY=1
    shift
fi

log() { echo "[test.sh] $*" >&2; }

mkdir -p "$ROOT/.build"

# The Swift driver leaves an empty TemporaryDirectory.XXXXXX in the temporary directory on every
# invocation, a dozen per `swift test`: they, and the tests' own temporary files, go to .build/tmp.
# (A TMPDIR set by the caller is kept.)
if [ -z "${TMPDIR:-}" ]; then
    export TMPDIR="$ROOT/.build/tmp"
    mkdir -p "$TMPDIR"
    # Those of earlier runs: an hour old, no build of this run is using them.
    find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'TemporaryDirectory.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
fi

# ---------------------------------------------------------------- venv
IMPORT_CHECK='from httpbin import app; import gunicorn.app.wsgiapp, gunicorn.workers.gthread'
reqs_hash() { "$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$REQS"; }

venv_ok() {
    [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/gunicorn" ] || return 1
    [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(reqs_hash)" ] || return 1
    "$VENV/bin/python" -c "$IMPORT_CHECK" >/dev/null 2>&1
}

if ! venv_ok; then
    log "creating httpbin virtualenv in .build/httpbin-venv ..."
    start=$SECONDS
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQS"
    "$VENV/bin/python" -c "$IMPORT_CHECK" >/dev/null 2>&1 || {
        log "ERROR: '$IMPORT_CHECK' fails in the fresh virtualenv:"
        "$VENV/bin/python" -c "$IMPORT_CHECK" || true
        exit 1
    }
    reqs_hash >"$STAMP"
    log "virtualenv ready ($((SECONDS - start)) s)"
fi

# ---------------------------------------------------------------- server
SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

free_port() {
    "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Returns 0 once GET /get answers 200, 1 if the server died, 2 on timeout.
wait_ready() {
    local url="$1" deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        if "$VENV/bin/python" - "$url/get" <<'PY' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
        then
            return 0
        fi
        sleep 0.2
    done
    return 2
}

: >"$LOG"
started=0
for attempt in 1 2 3; do  # retry: the free port can be taken between probe and bind
    PORT="$(free_port)"
    HTTPBIN_URL="http://127.0.0.1:$PORT"
    echo "=== attempt $attempt: $HTTPBIN_URL ===" >>"$LOG"
    # gthread: idle keep-alive connections do not hold a thread; 4x64 threads so
    # 50+ concurrent /delay/N requests do not queue behind each other.
    "$VENV/bin/gunicorn" \
        --bind "127.0.0.1:$PORT" \
        --worker-class gthread --workers "$WORKERS" --threads "$THREADS" \
        --timeout 60 --graceful-timeout 2 --keep-alive 30 \
        --access-logfile - --error-logfile - \
        --pythonpath "$ROOT/scripts" \
        swiftconnect_testserver:app >>"$LOG" 2>&1 &
    SERVER_PID=$!
    rc=0; wait_ready "$HTTPBIN_URL" || rc=$?
    if [ $rc -eq 0 ]; then started=1; break; fi
    if [ $rc -eq 2 ]; then
        log "ERROR: httpbin did not answer $HTTPBIN_URL/get within 30 s. Server log ($LOG):"
        cat "$LOG" >&2
        exit 1
    fi
    stop_server
    log "gunicorn exited during startup (attempt $attempt), retrying on another port"
done
if [ $started -ne 1 ]; then
    log "ERROR: could not start httpbin/gunicorn. Server log ($LOG):"
    cat "$LOG" >&2
    exit 1
fi
export HTTPBIN_URL
log "httpbin up at $HTTPBIN_URL (gunicorn pid $SERVER_PID, log .build/httpbin.log)"

if [ $SERVER_ONLY -eq 1 ]; then
    echo "HTTPBIN_URL=$HTTPBIN_URL"
    log "server-only mode: Ctrl-C (or kill $$) to stop"
    rc=0; wait "$SERVER_PID" || rc=$?
    SERVER_PID=""
    log "gunicorn exited with status $rc"
    exit $rc
fi

# ---------------------------------------------------------------- tests
rc=0
swift test "$@" || rc=$?
exit $rc
