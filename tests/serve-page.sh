#!/usr/bin/env bash
# belt serve's chat page in headless Chromium (Debian's chromium, driven by
# the playwright-core npm package, which brings no browser of its own):
# the page streams answers into its DOM, and they equal the API's answers
# to the same conversation (tests/serve_page.mjs). playwright-core is
# installed with npm into $BELT_BUILDDIR/tests/node-page the first time
# (the network then). Without node, npm or chromium the test is skipped
# (77), but not where CI is set: CI installs them (.ci/run).
set -u
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}" "${BELT_BUILDDIR:?set by make check}"
srcdir="$(cd "$(dirname "$0")" && pwd)"
me=serve-page.sh
chromium="${BELT_CHROMIUM:-$(command -v chromium || true)}"
if [ -z "$chromium" ]; then
	echo "$me: chromium is not installed (apt-get install chromium)"
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
. "$srcdir/serve-node.sh"
node_dir="$BELT_BUILDDIR/tests/node-page"
node_package "$node_dir" playwright-core
key="test-key-$$"
serve_start --api-key "$key" -c 2048
cp "$srcdir/serve_page.mjs" "$node_dir/"
if ! node "$node_dir/serve_page.mjs" "http://127.0.0.1:$port" "$key" "$chromium"; then
	echo "--- server log:"
	cat "$tmp/log"
	exit 1
fi
serve_stop
echo "$me: all passed"
