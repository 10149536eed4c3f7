#!/bin/sh
# Continuous batching under load (doc/serve.md): belt serve on MODEL with
# --parallel CLIENTS, then tests/bench_serve.py: streaming completions of
# TOKENS tokens, one client at a time, then CLIENTS at once; the aggregate
# tokens/s against one client's, and every concurrent answer checked
# against the same prompt's answer alone.
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
. "$srcdir/serve-node.sh"
serve_start --backend "${BACKEND:-vulkan}" --parallel "$clients" -c $((tokens + 64)) \
	--max-connections $((clients * 2 + 4)) "$@"
rc=0
python3 "$srcdir/bench_serve.py" --port "$port" --clients "$clients" --tokens "$tokens" \
	--temperature "${TEMP:-0}" || rc=$?
serve_stop
grep "slots:" "$tmp/log" || true
[ -z "$BENCH_SERVE_LOG" ] || cp "$tmp/log" "$BENCH_SERVE_LOG"
exit $rc
