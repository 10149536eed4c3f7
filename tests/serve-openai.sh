#!/usr/bin/env bash
# belt serve against the real `openai` npm package (Node): streamed and
# non-streamed chat completions, a completion, errors as the client's
# classes (tests/serve_openai.mjs). The package is installed with npm into
# $BELT_BUILDDIR/tests/node-openai (ignored by git) the first time, which
# needs the network; without node or npm the test is skipped (77).
set -u
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}" "${BELT_BUILDDIR:?set by make check}"
srcdir="$(cd "$(dirname "$0")" && pwd)"
me=serve-openai.sh
. "$srcdir/serve-node.sh"
node_dir="$BELT_BUILDDIR/tests/node-openai"
node_package "$node_dir" openai
key="test-key-$$"
serve_start --api-key "$key"
# the script imports "openai" from the folder it runs in
cp "$srcdir/serve_openai.mjs" "$node_dir/"
if ! node "$node_dir/serve_openai.mjs" "http://127.0.0.1:$port/v1" "$key"; then
	echo "--- server log:"
	cat "$tmp/log"
	exit 1
fi
serve_stop
echo "serve-openai.sh: all passed"
