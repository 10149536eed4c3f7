#!/usr/bin/env bash
# The test command of the README: configure out of tree, build, run the
# Check suites, then the suites again under valgrind's memcheck.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$top/build}"
jobs="$(nproc)"

# each stage's time, so a slow machine shows where it goes
stage_start=$SECONDS
stage() {
	echo "ci stage: $1 $((SECONDS - stage_start)) s"
	stage_start=$SECONDS
}

cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q
make -j"$jobs" -s
stage build
# on failure, the end of each failed suite's own log (CI shows only the
# end of what this prints)
failed_logs() {
	local trs
	for trs in $(grep -l '^:test-result: \(FAIL\|ERROR\|XPASS\)' $(find tests -name '*.trs')); do
		echo "=== ${trs%.trs}.log (its last 80 lines)"
		tail -80 "${trs%.trs}.log"
	done
}
make -j"$jobs" -s check || { failed_logs; exit 1; }
grep -h "^golden\|^logits\|^llama.cpp\|^batch\|^draft\|^templates\|^grammar_refs\|heap allocations" tests/*.log || true
stage "make check"

# memcheck: every suite but the end-to-end golden one (run on the small
# models below instead, to keep the time reasonable).
export CK_FORK=no
export BELT_PLUGIN_PATH="$build/plugins" BELT_ARCH_PATH="$top/conf/arch"
export BELT_SHARED_DIR="${BELT_SHARED_DIR:-$top/../shared}" BELT_BIN="$build/belt"
export BELT_TEST_PLUGINS="$build/tests/plugins"
vg="./libtool --mode=execute valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
for t in tests/check_gguf tests/check_tokenizer; do
	echo "valgrind: $t"
	$vg ./$t >/dev/null
done
# the CPU backend's kernels, every weight type, and its contract case;
# not its whole-model quant_base case (check_quant runs those models, and
# 6 minutes here; this Check has no CK_EXCLUDE_TCASE, so the cases are
# named). The kernels' generic and avx2 configurations run in two
# processes side by side (valgrind runs no AVX-512; half the wall time on
# two cores).
echo "valgrind: tests/check_backend_cpu kernels, generic and avx2 side by side"
BELT_TEST_ISA=generic CK_RUN_CASE=kernels $vg ./tests/check_backend_cpu >/dev/null &
vg_generic=$!
BELT_TEST_ISA=avx2 CK_RUN_CASE=kernels $vg ./tests/check_backend_cpu >/dev/null &
vg_avx2=$!
wait $vg_generic || { echo "valgrind: check_backend_cpu kernels (generic) failed"; exit 1; }
wait $vg_avx2 || { echo "valgrind: check_backend_cpu kernels (avx2) failed"; exit 1; }
echo "valgrind: tests/check_backend_cpu contract"
CK_RUN_CASE=contract $vg ./tests/check_backend_cpu >/dev/null
echo "valgrind: tests/check_batch (two small models, rows and verification)"
BELT_BATCH_LIGHT=1 BELT_GOLDEN_ONLY=stories260K.f32.gguf,aidreams260K.f16.gguf $vg ./tests/check_batch >/dev/null
echo "valgrind: tests/check_draft greedy (stories260K f32, 48 tokens a prompt: speculative decoding)"
BELT_GOLDEN_ONLY=stories260K.f32.gguf CK_RUN_CASE=greedy BELT_DRAFT_TOKENS=48 $vg ./tests/check_draft >/dev/null
echo "valgrind: tests/check_prefix (stories260K f32: prefix reuse)"
BELT_GOLDEN_ONLY=stories260K.f32.gguf $vg ./tests/check_prefix >/dev/null
echo "valgrind: tests/check_group light (sessions of a group in threads, stories260K f32)"
CK_RUN_CASE=light $vg ./tests/check_group >/dev/null
echo "valgrind: tests/check_group rings (gemma2 and gemma3: a group's sliding-window layers as rings)"
CK_RUN_CASE=rings $vg ./tests/check_group >/dev/null
echo "valgrind: tests/check_grammar_gbnf language (the GBNF plugin on its tiny vocabulary)"
CK_RUN_CASE=language $vg ./tests/check_grammar_gbnf >/dev/null
echo "valgrind: tests/check_grammar_schema (JSON Schemas on a byte vocabulary)"
$vg ./tests/check_grammar_schema >/dev/null
echo "valgrind: belt run (stories260K f32 and pycoder29M q8_0; a grammar)"
$vg ./belt run -m "$BELT_SHARED_DIR/models/stories260K.f32.gguf" -p "Once upon a time" -n 32 -t 2 >/dev/null 2>&1
$vg ./belt run -m "$BELT_SHARED_DIR/models/pycoder29M.q8_0.gguf" -p "def f(x):" -n 8 -t 2 >/dev/null 2>&1
$vg ./belt run -m "$BELT_SHARED_DIR/models/stories260K.f32.gguf" -p "Tom said" -n 24 -t 2 \
	--grammar-file "$BELT_SHARED_DIR/grammars/gbnf/json.gbnf" >/dev/null 2>&1
$vg ./belt run -m "$BELT_SHARED_DIR/models/stories260K.f32.gguf" -p "Tom said" -n 24 -t 2 \
	--json-schema "$BELT_SHARED_DIR/grammars/schemas/nested-refs.json" >/dev/null 2>&1
$vg ./belt info -m "$BELT_SHARED_DIR/models/stories260K.ggml-org.gguf" >/dev/null
$vg ./belt tokenize -m "$BELT_SHARED_DIR/vocab/ggml-vocab-llama-spm.gguf" -p "Hello wörld 🦙" >/dev/null
stage memcheck
echo "valgrind: clean"
