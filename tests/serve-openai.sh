#!/usr/bin/env bash
# belt serve against the real `openai` npm package (Node): streamed and
# non-streamed chat completions, a completion, errors as the client's
# classes (tests/serve_openai.mjs). The package is installed with npm into
# $BELT_BUILDDIR/tests/node-openai (ignored by git) the first time, which
# needs the network; without node or npm the test is skipped (77).
set -u
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}" "${BELT_BUILDDIR:?set by make check}"
srcdir="$(cd "$(dirname "$0")" && pwd)"
for tool in node npm; do
	command -v $tool >/dev/null || { echo "serve-openai.sh: $tool is not installed: skipped (apt-get install nodejs npm)"; exit 77; }
done
node_dir="$BELT_BUILDDIR/tests/node-openai"
if [ ! -f "$node_dir/node_modules/openai/package.json" ]; then
	mkdir -p "$node_dir"
	[ -f "$node_dir/package.json" ] || echo '{"name": "belt-serve-test", "private": true}' >"$node_dir/package.json"
	(cd "$node_dir" && npm install --no-audit --no-fund --silent openai) ||
		{ echo "serve-openai.sh: npm install openai failed (it needs the network)"; exit 1; }
fi
tmp="$(mktemp -d "${TMPDIR:-/tmp}/belt-serve-openai-XXXXXX")"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
key="test-key-$$"
"$BELT_BIN" serve -m "$BELT_SHARED_DIR/models/stories260K.f32.gguf" --port 0 -t 2 -c 512 \
	--chat-template "$srcdir/serve-template.jinja" --api-key "$key" 2>"$tmp/log" &
pid=$!
port=
for _ in $(seq 100); do
	port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/log")"
	[ -n "$port" ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$port" ] || { echo "serve-openai.sh: belt serve did not start"; cat "$tmp/log"; exit 1; }
# the script imports "openai" from the folder it runs in
cp "$srcdir/serve_openai.mjs" "$node_dir/"
if ! node "$node_dir/serve_openai.mjs" "http://127.0.0.1:$port/v1" "$key"; then
	echo "--- server log:"
	cat "$tmp/log"
	exit 1
fi
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || { echo "serve-openai.sh: belt serve exited $rc after SIGTERM"; exit 1; }
echo "serve-openai.sh: all passed"
