#!/bin/sh
# Continuous batching under load (doc/serve.md): belt serve on MODEL with
# --parallel CLIENTS, then tests/bench_serve.py: streaming greedy
# completions of TOKENS tokens, one client at a time, then CLIENTS at once;
# the aggregate tokens/s against one client's, and every concurrent answer
# checked against the same prompt's answer alone.
#   usage: sh tests/bench-serve.sh MODEL [CLIENTS] [TOKENS] [belt serve options]
# Env: BELT_BIN (default build/belt), BACKEND (default vulkan),
# BENCH_SERVE_LOG (a file to keep the server's log in), TEMP (default 0:
# greedy; above 0, sampled with a seed per prompt).
set -e
me=bench-serve
model="$1"
clients="${2:-16}"
tokens="${3:-256}"
[ $# -ge 3 ] && shift 3 || shift $#
srcdir="$(cd "$(dirname "$0")" && pwd)"
BELT_BIN="${BELT_BIN:-./build/belt}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/belt-$me-XXXXXX")"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$BELT_BIN" serve -m "$model" --backend "${BACKEND:-vulkan}" --port 0 --parallel "$clients" \
	-c $((tokens + 64)) --max-connections $((clients * 2 + 4)) "$@" 2>"$tmp/log" &
pid=$!
port=
for _ in $(seq 1200); do
	port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/log")"
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$port" ] || { echo "$me: belt serve did not start"; cat "$tmp/log"; exit 1; }
rc=0
python3 "$srcdir/bench_serve.py" --port "$port" --clients "$clients" --tokens "$tokens" \
	--temperature "${TEMP:-0}" || rc=$?
kill -TERM "$pid"
wait "$pid" || { echo "$me: belt serve exited $? after SIGTERM"; tail -5 "$tmp/log"; exit 1; }
pid=
grep "slots:" "$tmp/log" || true
[ -z "$BENCH_SERVE_LOG" ] || cp "$tmp/log" "$BENCH_SERVE_LOG"
exit $rc
