# Sourced by the tests that drive belt serve (serve-openai.sh and
# serve-page.sh from Node, serve-soak.sh, bench-serve.sh): the npm package a test needs,
# installed once into the build folder, and a server on a free port. The
# caller sets srcdir and names itself in $me.

# node_package DIR PACKAGE: PACKAGE installed under DIR/node_modules (the
# first time only: npm needs the network then). Exits 77 (skipped) without
# node or npm.
node_package() {
	local dir="$1" pkg="$2" tool
	for tool in node npm; do
		command -v $tool >/dev/null ||
			{ echo "$me: $tool is not installed: skipped (apt-get install nodejs npm)"; exit 77; }
	done
	[ -f "$dir/node_modules/$pkg/package.json" ] && return 0
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"name": "belt-serve-test", "private": true}' >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --silent "$pkg") ||
		{ echo "$me: npm install $pkg failed (it needs the network)"; exit 1; }
}

# serve_start ARGS: belt serve on $model (default stories260K) with
# tests/serve-template.jinja and ARGS, on a free port; sets $pid, $port,
# $tmp (its log is $tmp/log) and a trap that stops it and removes $tmp.
serve_start() {
	tmp="$(mktemp -d "${TMPDIR:-/tmp}/belt-$me-XXXXXX")"
	pid=
	trap 'serve_cleanup' EXIT
	"$BELT_BIN" serve -m "${model:-$BELT_SHARED_DIR/models/stories260K.f32.gguf}" --port 0 -t 2 \
		-c 512 --chat-template "$srcdir/serve-template.jinja" "$@" 2>"$tmp/log" &
	pid=$!
	port=
	for _ in $(seq 600); do
		port="$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/log")"
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "$me: belt serve did not start"; cat "$tmp/log"; exit 1; }
}
serve_cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}

# serve_stop: SIGTERM, which must end belt serve with status 0.
serve_stop() {
	kill -TERM "$pid"
	wait "$pid"
	local rc=$?
	pid=
	[ $rc = 0 ] || { echo "$me: belt serve exited $rc after SIGTERM"; exit 1; }
}
