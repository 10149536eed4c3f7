#!/bin/sh
# tests/bench-tokenizer.sh [BUILD_DIR]: encoding speed (tokens/s) of the
# llama-bpe (Llama 3, byte-level BPE) and llama-spm (Llama 2, SentencePiece)
# vocabularies on 1 MiB of text. Builds nothing: run `make` in BUILD_DIR
# (default: build) first. The text is llama.cpp's tokenizer test texts
# (English, code-like runs, whitespace, Cyrillic, Khmer, CJK, emoji),
# repeated to 1 MiB. Extra vocabulary names may follow in $BENCH_VOCABS.
#
# Measured (gcc -O2, PCRE2 10.42 JIT, one thread of a shared 2-CPU
# container; 1,049,220 bytes, best of 5 runs, three runs of the script):
#   llama-bpe: 355,860 tokens in 0.018-0.019 s -> ~19 M tokens/s (~56 MB/s)
#   llama-spm: 563,761 tokens in 0.20-0.23 s   -> ~2.7 M tokens/s (~5 MB/s)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
shared=${BELT_SHARED_DIR:-$here/../../shared}
bin=$build/tests/bench-tokenizer
if [ ! -x "$bin" ]; then
	echo "bench-tokenizer.sh: $bin not found: build first (make -C $build)" >&2
	exit 1
fi
src=$shared/vocab/ggml-vocab-llama-bpe.gguf.inp
text=$(mktemp)
trap 'rm -f "$text"' EXIT
size=$(wc -c < "$src")
copies=$(( (1048576 + size - 1) / size ))
i=0
while [ "$i" -lt "$copies" ]; do
	cat "$src"
	i=$((i + 1))
done > "$text"
for v in llama-bpe llama-spm ${BENCH_VOCABS:-}; do
	"$bin" "$shared/vocab/ggml-vocab-$v.gguf" "$text" 5
done
