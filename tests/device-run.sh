#!/bin/sh
# One run on the GPU machine (see ../shared/gpu/README.md), from the
# repository root: unpack the run-time packages carried in .gl/, then the
# Vulkan kernel tests, the golden end-to-end suite on the GPU, and belt
# bench on synthetic models. Results go to $OUT; a summary is printed last.
#   usage: sh tests/device-run.sh BUILD_DIR SHARED_COPY "SHAPES" "TYPES"
# Before the first run of a checkout: ../shared/gpu/fetch-debs, then
# tests/device-debs.sh (what belt links beyond fetch-debs' packages).
# Env: SKIPCHECK=1 skips the tests; GOLDEN_ONLY filters the golden models;
# PROFILE=1 adds a BELT_VK_PROFILE run per file; VARIANTS="A=1,B=2 C=3"
# adds a decode-only bench per file for each comma-separated env setting;
# PP, REPS as in belt bench; BENCH_ARGS are added to every belt bench
# (e.g. "--temp 0.8" for the sampled/greedy ratio). ARCHS lists the
# layouts belt-synth writes for each shape (default "llama"; "llama-tied"
# is llama without output.weight, the bytes of gemma2's tied layout);
# MOE=TYPE also benchmarks the 30b-a3b qwen3moe shape in that type.
# QUANTIZE="q4_k_m q6_k ..." also benchmarks each shape (llama layout)
# written by belt-synth in F16 and converted by `belt quantize` to each
# type or mix (all cores), as llama.cpp's figures were made.
B=$(cd "$1" && pwd)
S=$(cd "$2" && pwd)
SHAPES=${3:-1b}
TYPES=${4:-"q4_0 q8_0 f16"}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# .gl/extra (tests/device-debs.sh): only the libraries the machine lacks,
# from a folder of their own, so that none of its own is replaced
EXTRA=/tmp/belt-extra-libs
mkdir -p "$EXTRA/deb" "$EXTRA/lib"
for f in .gl/extra/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$EXTRA/deb"; done
for so in $(find "$EXTRA/deb" -name '*.so.*'); do
	ldconfig -p | grep -q " $(basename "$so") " || cp -a "$so" "$EXTRA/lib/"
done
for j in /usr/share/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
	[ -f "$j" ] && export VK_DRIVER_FILES="$j"
done
export LD_LIBRARY_PATH="$B/.libs:$EXTRA/lib" BELT_PLUGIN_PATH="$B/plugins" BELT_ARCH_PATH="$PWD/conf/arch"
export BELT_CONF_PATH="$PWD/conf" BELT_SHARED_DIR="$S"
nvidia-smi -L
if [ -z "$SKIPCHECK" ]; then
	"$B/tests/.libs/check_backend_vulkan" > "$OUT/check_backend_vulkan.txt" 2>&1
	echo "check_backend_vulkan: $(tail -1 "$OUT/check_backend_vulkan.txt")"
	BELT_TEST_BACKEND=vulkan BELT_GOLDEN_ONLY="${GOLDEN_ONLY:-}" "$B/tests/.libs/check_golden" > "$OUT/golden_vulkan.txt" 2>&1
	grep -E "^golden|^logits|^llama.cpp|Checks" "$OUT/golden_vulkan.txt"
	BELT_TEST_BACKEND=vulkan BELT_GOLDEN_ONLY="${GOLDEN_ONLY:-}" "$B/tests/.libs/check_batch" > "$OUT/batch_vulkan.txt" 2>&1
	grep -E "^batch|Checks|:F:|:E:" "$OUT/batch_vulkan.txt" | grep -v "not in BELT_GOLDEN_ONLY"
	# the architectures against llama.cpp, where the copy has models/arch
	if [ -d "$S/models/arch" ]; then
		BELT_TEST_BACKEND=vulkan "$B/tests/.libs/check_archs" > "$OUT/archs_vulkan.txt" 2>&1
		grep -E "vs logits|^qwen3moe|Checks|:F:|:E:" "$OUT/archs_vulkan.txt"
	fi
fi
bench() { # FILE NAME: belt bench, then the optional profile and variants
	"$B/.libs/belt" bench -m "$1" --backend vulkan -p "${PP:-512}" -n 128 -r "${REPS:-3}" $BENCH_ARGS > "$OUT/bench-$2.txt" 2>&1
	[ -n "$PROFILE" ] && BELT_VK_PROFILE=1 "$B/.libs/belt" bench -m "$1" --backend vulkan -p 0 -n 64 -r 1 $BENCH_ARGS > "$OUT/profile-$2.txt" 2>&1
	for v in $VARIANTS; do
		echo "== $2 $v" >> "$OUT/variants.txt"
		env $(echo "$v" | tr , ' ') "$B/.libs/belt" bench -m "$1" --backend vulkan -p 0 -n 128 -r "${REPS:-3}" >> "$OUT/variants.txt" 2>&1
	done
	rm -f "$1"
}
for shape in $SHAPES; do
	for t in $TYPES; do
		for a in ${ARCHS:-llama}; do
			name=$shape-$t
			[ "$a" = llama ] || name=$shape-$a-$t
			f=/tmp/synth-$name.gguf
			case $a in
			*-tied) set -- --arch "${a%-tied}" --tied ;;
			*) set -- --arch "$a" ;;
			esac
			[ -s "$f" ] || "$B/tests/.libs/belt-synth" --preset "$shape" --type "$t" "$@" -o "$f" || exit 1
			bench "$f" "$name"
		done
	done
done
if [ -n "$QUANTIZE" ]; then
	for shape in $SHAPES; do
		src=/tmp/synth-$shape-f16src.gguf
		"$B/tests/.libs/belt-synth" --preset "$shape" --type f16 -o "$src" || exit 1
		for t in $QUANTIZE; do
			f=/tmp/synth-$shape-$t.gguf
			start=$(date +%s)
			nt=$(nproc); [ "$nt" -gt 64 ] && nt=64 # belt quantize: 1..64
			"$B/.libs/belt" quantize "$src" "$f" "$(echo "$t" | tr a-z A-Z)" "$nt" > "$OUT/quantize-$shape-$t.txt" 2>&1 || exit 1
			echo "quantize $shape $t: $(($(date +%s) - start)) s"
			bench "$f" "$shape-$t"
		done
		rm -f "$src"
	done
fi
if [ -n "$MOE" ]; then
	f=/tmp/synth-30b-a3b-$MOE.gguf
	"$B/tests/.libs/belt-synth" --preset 30b-a3b --type "$MOE" -o "$f" || exit 1
	bench "$f" "30b-a3b-$MOE"
fi
echo "== summary"
cat "$OUT"/bench-*.txt | grep -E "^\| synth|^decode|^sampled"
[ -f "$OUT/variants.txt" ] && grep -E "^==|tg" "$OUT/variants.txt"
exit 0
