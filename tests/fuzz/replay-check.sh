#!/bin/sh
# make check: each fuzz target of tests/fuzz, built with replay.c as its
# main (no libFuzzer needed), runs over its seeds (seeds.sh) and
# deterministic mutations of each (the same inputs every run): 32 for the
# many GGUF and tokenizer seeds, 256 for the GBNF grammars and JSON
# Schemas, 512 for the
# few arch and cli ones, times
# BELT_REPLAY_SCALE (default 1). A crash, a sanitizer report or a broken
# invariant fails the test and names the target.
set -eu
: "${BELT_BUILDDIR:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
here="$(cd "$(dirname "$0")" && pwd)"
scale="${BELT_REPLAY_SCALE:-1}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/belt-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GGUF_SEEDS="$BELT_BUILDDIR/tests/fuzz/gguf-seeds" sh "$here/seeds.sh" "$tmp/seeds"
rc=0
targets="arch cli gbnf schema template"
if [ -d "$BELT_SHARED_DIR/vocab" ]; then
	targets="gguf $targets tokenizer quantize"
else
	echo "SKIP replay-gguf, replay-tokenizer, replay-quantize: no $BELT_SHARED_DIR/vocab"
fi
for t in $targets; do
	case $t in gguf | tokenizer | quantize) n=32 ;; gbnf | schema) n=256 ;; template) n=64 ;; *) n=512 ;; esac
	seeds="$tmp/seeds/$t"
	set -- -n $((n * scale))
	[ -f "$here/$t.dict" ] && set -- "$@" -d "$here/$t.dict"
	if "$BELT_BUILDDIR/tests/fuzz/replay-$t" "$@" "$seeds" >"$tmp/$t.log" 2>&1; then
		tail -1 "$tmp/$t.log"
	else
		tail -40 "$tmp/$t.log"
		echo "FAIL: replay-$t $* over $seeds"
		rc=1
	fi
done
exit $rc
