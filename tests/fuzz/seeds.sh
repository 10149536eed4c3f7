#!/bin/sh
# The seed corpora of the fuzz targets, made at run time from the files
# belt ships and the shared models (none are kept in the repository):
#
#   tests/fuzz/seeds.sh OUTDIR
#
#   OUTDIR/gguf       every GGUF of $BELT_SHARED_DIR (models/, models/arch/,
#                     models/quant/, vocab/) cut down by gguf-seeds to its
#                     metadata (arrays to 512 elements) and one block per
#                     tensor, a few KiB each
#   OUTDIR/arch       conf/arch/*.yaml and conf/belt.yaml of the source tree
#   OUTDIR/tokenizer  the tokenizer test texts of $BELT_SHARED_DIR/vocab
#                     (*.inp), each behind the byte that makes the target
#                     encode it with that vocabulary
#   OUTDIR/cli        command lines of the README and the man page, their
#                     arguments separated by NUL bytes
#   OUTDIR/quantize   tiny synthetic models (belt-synth: F32, F16, BF16,
#                     tied or not, rows of 32 and 48) whose matrices belt
#                     quantize quantizes, and the GGUF seeds
#   OUTDIR/gbnf       the grammars of $BELT_SHARED_DIR/grammars (gbnf/ and
#                     bad/) and a few below, one construct each
#   OUTDIR/schema     the JSON Schemas of $BELT_SHARED_DIR/grammars
#                     (schemas/ and bad/) and a few below
#   OUTDIR/template   the chat templates of $BELT_SHARED_DIR/templates/jinja
#
# Needs BELT_SHARED_DIR; GGUF_SEEDS names the gguf-seeds program
# (default: tests/fuzz/gguf-seeds of BELT_BUILDDIR, else of the current
# folder), SYNTH belt-synth (default: tests/belt-synth beside it).
set -eu
out="${1:?usage: seeds.sh OUTDIR}"
: "${BELT_SHARED_DIR:?}"
top="$(cd "$(dirname "$0")/../.." && pwd)"
seeds="${GGUF_SEEDS:-${BELT_BUILDDIR:-.}/tests/fuzz/gguf-seeds}"
mkdir -p "$out/gguf" "$out/arch" "$out/tokenizer" "$out/cli" "$out/quantize" "$out/gbnf" \
	"$out/schema" "$out/template"

for f in "$BELT_SHARED_DIR"/models/*.gguf "$BELT_SHARED_DIR"/models/arch/*.gguf \
	"$BELT_SHARED_DIR"/models/quant/*.gguf "$BELT_SHARED_DIR"/vocab/*.gguf; do
	if [ -f "$f" ]; then
		"$seeds" "$out/gguf" "$f" || echo "seeds: $f left out"
	fi
done

cp "$top"/conf/arch/*.yaml "$top"/conf/belt.yaml "$out/arch/"

# belt quantize: models small enough to mutate, with matrices to quantize
synth="${SYNTH:-$(dirname "$seeds")/../belt-synth}"
tiny="--embd 32 --ff 64 --vocab 260 --layers 1 --heads 2 --kv-heads 1 --ctx 16"
for v in "f32" "f16 --tied" "bf16" "f32 --embd 48 --heads 4 --kv-heads 2 --tied"; do
	name=$(echo "$v" | tr -d ' -')
	# shellcheck disable=SC2086 # the options split on purpose
	"$synth" -o "$out/quantize/synth-$name.gguf" $tiny --type $v || echo "seeds: synth $v left out"
done
cp "$out"/gguf/*.gguf "$out/quantize/" 2>/dev/null || true

# The vocabularies in the order of tests/fuzz_tokenizer.c's table: the
# first input byte modulo their count picks one.
i=0
for v in llama-spm gpt-2 llama-bpe qwen2 deepseek-llm deepseek-coder falcon mpt \
	starcoder bert-bge phi-3; do
	inp="$BELT_SHARED_DIR/vocab/ggml-vocab-$v.gguf.inp"
	if [ -f "$inp" ]; then
		LC_ALL=C awk -v sel="$i" -v dir="$out/tokenizer" -v v="$v" '
			function flush() {
				f = sprintf("%s/%s-%03d", dir, v, n++)
				printf "%c%s", sel, text > f
				close(f)
				text = ""; first = 1
			}
			BEGIN { first = 1 }
			$0 == "__ggml_vocab_test__" { flush(); next }
			{ text = first ? $0 : text "\n" $0; first = 0 }
			END { if (!first) flush() }' "$inp"
	fi
	i=$((i + 1))
done
# One command line a line below; each word becomes an argument.
n=0
while read -r line; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # split into words on purpose
	printf '%s\0' $line >"$out/cli/$(printf %03d $n)"
done <<'LINES'
run -m m.gguf -p Once -n 128
run -m m.gguf -p Hello --ids --no-bos --ignore-eos -c 512 -t 2
run -m m.gguf -f p.txt -b 2048 -ub 512 --chunk 16
run -m m.gguf -p Hi --temp 0.8 --seed 42 --top-k 40 --top-p 0.95 --min-p 0.05
run -m m.gguf -p Hi --repeat-penalty 1.1 --repeat-last-n -1 --presence-penalty 0.5 --frequency-penalty 0.5
run -m m.gguf -p Hi --backend vulkan --device 1 --profile --kernel matvec=q8x
run -m m.gguf -p Hi -n 8 --grammar-file g.gbnf
run -m m.gguf --grammar=root
run --model=m.gguf --prompt=Hi --n-predict=4 --ctx-size=0 --threads=1 --batch-size=1 --ubatch-size=1
info
info -m m.gguf --tensors --backend cpu
tokenize -m m.gguf -p Hello --ids --parse-special
bench -m m.gguf -p 512 -n 128 -d 4096 -r 3 -t 2 -b 2048 -ub 512
bench -m m.gguf --backend vulkan --temp 0.8 --top-k 40 --n-prompt=1 --n-gen=1 --n-depth=0 --repetitions=1
perplexity -m m.gguf -f t.txt -c 512 -b 512 -ub 512 -t 2
--version
--help
run --help
LINES
# GBNF: the shared grammars, good and bad, and one construct a line below
for f in "$BELT_SHARED_DIR"/grammars/gbnf/*.gbnf "$BELT_SHARED_DIR"/grammars/bad/*.gbnf; do
	if [ -f "$f" ]; then
		cp "$f" "$out/gbnf/$(basename "$(dirname "$f")")-$(basename "$f")"
	fi
done
n=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%b' "$line" >"$out/gbnf/construct-$(printf %02d $n)"
done <<'LINES'
root ::= "a" | "bc" | ""\n
root ::= ("a" | [b-d])* "e"? "f"+\n
root ::= [0-9]{1,3} ("," [0-9]{3})* "x"{2} "y"{2,}\n
root ::= "\\x41\\u00e9\\U0001F600\\n\\t\\\\" [^"\\\\] .\n
root ::= item+ # comment\nitem ::=\n  "- " [^\\n]+ "\\n" |\n  ( "*" ws )\nws ::= [ \\t]*\n
root ::= "(" root ")" | a\na ::= b | "z"\nb ::= ("q"?)*\n
root ::= [日-本ぁ-ゟ]+ "語"\n
LINES
# JSON Schemas: the shared ones, good and bad, and a few constructs below
for f in "$BELT_SHARED_DIR"/grammars/schemas/*.json "$BELT_SHARED_DIR"/grammars/bad/*.json; do
	if [ -f "$f" ]; then
		cp "$f" "$out/schema/$(basename "$(dirname "$f")")-$(basename "$f")"
	fi
done
n=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s' "$line" >"$out/schema/construct-$(printf %02d $n)"
done <<'LINES'
{"type": "object", "properties": {"a": {"type": "integer", "minimum": -5}, "b": {"type": "string", "pattern": "^x[0-9]{2}(a|b)*$"}}, "additionalProperties": {"type": "number"}}
{"$defs": {"n": {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}}}}, "$ref": "#/$defs/n"}
{"type": ["array", "null"], "items": {"enum": [1, "a", null]}, "minItems": 1, "maxItems": 3}
{"allOf": [{"properties": {"a": {"const": true}}}, {"anyOf": [{"properties": {"b": {"format": "date-time"}}}]}]}
{"type": "array", "prefixItems": [{"type": "string", "format": "uuid"}, {"type": "string", "maxLength": 2}]}
LINES
for f in "$BELT_SHARED_DIR"/templates/jinja/*.jinja; do
	[ -f "$f" ] && cp "$f" "$out/template/"
done
echo "seeds: $(ls "$out/gguf" | wc -l) gguf, $(ls "$out/arch" | wc -l) arch," \
	"$(ls "$out/tokenizer" | wc -l) tokenizer, $(ls "$out/cli" | wc -l) cli," \
	"$(ls "$out/quantize" | wc -l) quantize, $(ls "$out/gbnf" | wc -l) gbnf," \
	"$(ls "$out/schema" | wc -l) schema, $(ls "$out/template" | wc -l) template in $out"
