#!/usr/bin/env bash
# Benchmark belt on synthetic Llama-3.2-1B-shaped and 8B-shaped models
# (random weights) in several weight types; writes the models to $DIR and
# prints one belt bench table per file.
#   usage: tests/bench-synthetic.sh [BUILD_DIR] [BACKEND] [SHAPES] [TYPES]
#   e.g.   tests/bench-synthetic.sh build vulkan "1b 8b" "q4_0 q8_0 f16"
set -euo pipefail
build="${1:-build}"
backend="${2:-vulkan}"
shapes="${3:-1b 8b}"
types="${4:-q4_0 q8_0 f16}"
dir="${DIR:-/tmp/belt-synth}"
reps="${REPS:-3}"
mkdir -p "$dir"
for shape in $shapes; do
	for type in $types; do
		f="$dir/synth-$shape-$type.gguf"
		[ -s "$f" ] || "$build/tests/belt-synth" --preset "$shape" --type "$type" -o "$f"
		echo "== $shape $type"
		"$build/belt" bench -m "$f" --backend "$backend" -p "${PP:-512}" -n "${TG:-128}" -r "$reps" ${BENCH_ARGS:-}
		[ -z "${KEEP:-}" ] && rm -f "$f"
	done
done
