#!/bin/sh
# make check with --enable-fuzzing: each libFuzzer target runs a short,
# seeded session over its seed corpus (tests/fuzz/seeds.sh), so that a
# regression in a target, or a crash its seeds already reach, fails the
# build. Long runs are by hand (tests/fuzz/README.md).
set -eu
: "${BELT_BUILDDIR:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
here="$(cd "$(dirname "$0")" && pwd)"
runs="${BELT_FUZZ_RUNS:-2000}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/belt-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sh "$here/seeds.sh" "$tmp/seeds"
rc=0
for t in gguf arch tokenizer cli quantize gbnf schema template; do
	dict=
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	mkdir "$tmp/$t"
	# new inputs go to $tmp/$t; crash files to $tmp
	if "$BELT_BUILDDIR/tests/fuzz/fuzz-$t" -runs="$runs" -seed=1 $dict \
		-artifact_prefix="$tmp/" "$tmp/$t" "$tmp/seeds/$t" >"$tmp/$t.log" 2>&1; then
		echo "fuzz-$t: $(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$tmp/$t.log" | tail -1)"
	else
		tail -60 "$tmp/$t.log"
		echo "FAIL: fuzz-$t (-runs=$runs -seed=1)"
		for a in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
			[ -f "$a" ] && echo "artifact: $(basename "$a"): $(od -An -c "$a" | head -5)"
		done
		rc=1
	fi
done
exit $rc
