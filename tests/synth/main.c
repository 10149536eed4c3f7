/* belt-synth: write a synthetic GGUF of any shipped architecture's layout
 * (see synth.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "belt/error.h"
#include "belt/quant.h"
#include "synth.h"

static const char help[] =
	"usage: belt-synth -o FILE [--preset 1b|8b|30b-a3b|tiny] [--arch ARCH] [OPTIONS]\n"
	"\n"
	"Write a GGUF with random weights in an architecture's tensor layout.\n"
	"  --arch ARCH                      llama (default), qwen2, qwen3, phi3, gemma2,\n"
	"                                   gemma3 or qwen3moe (gemma: tied embeddings)\n"
	"  --embd N --layers N --heads N --kv-heads N --ff N --vocab N --ctx N\n"
	"  --experts N --experts-used N --ff-exp N   qwen3moe's experts (default 8, 2, 32)\n"
	"  --type TYPE                      2-D weight type (default f32): f32 f16 bf16\n"
	"                                   q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k q4_k q5_k\n"
	"                                   q6_k iq4_nl iq4_xs (K-quants, iq4_xs: --embd\n"
	"                                   and --ff multiples of 256)\n"
	"  --embd-type TYPE                 token_embd type (default: --type)\n"
	"  --tied                           no output.weight (tied embeddings)\n"
	"  --seed N\n"
	"  --vocab-from FILE                the tokenizer of this GGUF (e.g. a vocab-only file)\n"
	"                                   and its vocabulary size, instead of a synthetic one\n"
	"presets: 1b = 2048/16 layers/32 heads/8 kv/8192 ffn/vocab 128256, untied;\n"
	"         8b = 4096/32/32/8/14336/128256; tiny = 64/2/4/2/128/300;\n"
	"         30b-a3b = qwen3moe 2048/48 layers/16 heads/4 kv/128 experts of 768,\n"
	"         8 used/vocab 151936 (Qwen3-30B-A3B's sizes, head size 128).\n";

/* f32, f16, bf16 or any type belt quantizes to, by belt's name. */
static int parse_type(const char *s)
{
	for (int t = 0; t < BELT_TYPE_COUNT; t++)
		if ((t == BELT_TYPE_F32 || t == BELT_TYPE_F16 || t == BELT_TYPE_BF16 ||
		     belt_quant_supported(t)) && !strcasecmp(s, belt_type_name(t)))
			return t;
	return -2;
}

static int preset(struct synth_shape *s, const char *name)
{
	synth_default(s);
	if (!strcmp(name, "tiny"))
		return 0;
	if (!strcmp(name, "30b-a3b")) {
		*s = (struct synth_shape){.n_embd = 2048, .n_layer = 48, .n_head = 16, .n_head_kv = 4,
					  .n_ff = 6144, .n_vocab = 151936, .n_ctx = 8192,
					  .embd_type = BELT_TYPE_ANY, .seed = 1, .arch = "qwen3moe",
					  .n_expert = 128, .n_expert_used = 8, .n_ff_exp = 768};
		return 0;
	}
	uint32_t big = !strcmp(name, "8b");
	if (!big && strcmp(name, "1b"))
		return -1;
	s->n_embd = big ? 4096 : 2048;
	s->n_layer = big ? 32 : 16;
	s->n_head = 32;
	s->n_head_kv = 8;
	s->n_ff = big ? 14336 : 8192;
	s->n_vocab = 128256;
	s->n_ctx = 8192;
	return 0;
}

int main(int argc, char **argv)
{
	enum { EMBD = 256, LAYERS, HEADS, KV, FF, VOCAB, CTX, TYPE, ETYPE, TIED, SEED, PRESET, ARCH,
	       EXPERTS, USED, FF_EXP, VOCAB_FROM };
	static const struct option opts[] = {
		{"embd", 1, 0, EMBD}, {"layers", 1, 0, LAYERS}, {"heads", 1, 0, HEADS},
		{"kv-heads", 1, 0, KV}, {"ff", 1, 0, FF}, {"vocab", 1, 0, VOCAB}, {"ctx", 1, 0, CTX},
		{"type", 1, 0, TYPE}, {"embd-type", 1, 0, ETYPE}, {"tied", 0, 0, TIED},
		{"seed", 1, 0, SEED}, {"preset", 1, 0, PRESET}, {"arch", 1, 0, ARCH},
		{"experts", 1, 0, EXPERTS}, {"experts-used", 1, 0, USED}, {"ff-exp", 1, 0, FF_EXP},
		{"vocab-from", 1, 0, VOCAB_FROM}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	const char *vocab_from = NULL;
	struct synth_shape s;
	synth_default(&s);
	const char *out = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		long v = optarg ? strtol(optarg, NULL, 10) : 0;
		int t;
		switch (c) {
		case 'o': out = optarg; break;
		case VOCAB_FROM: vocab_from = optarg; break;
		case EMBD: s.n_embd = (uint32_t)v; break;
		case LAYERS: s.n_layer = (uint32_t)v; break;
		case HEADS: s.n_head = (uint32_t)v; break;
		case KV: s.n_head_kv = (uint32_t)v; break;
		case FF: s.n_ff = (uint32_t)v; break;
		case VOCAB: s.n_vocab = (uint32_t)v; break;
		case CTX: s.n_ctx = (uint32_t)v; break;
		case SEED: s.seed = (uint64_t)v; break;
		case TIED: s.tied = true; break;
		case EXPERTS: s.n_expert = (uint32_t)v; break;
		case USED: s.n_expert_used = (uint32_t)v; break;
		case FF_EXP: s.n_ff_exp = (uint32_t)v; break;
		case ARCH:
			if (!synth_arch_known(optarg)) {
				fprintf(stderr, "belt-synth: unknown architecture '%s' (see --help)\n", optarg);
				return 2;
			}
			s.arch = optarg;
			break;
		case TYPE:
		case ETYPE:
			if ((t = parse_type(optarg)) == -2) {
				fprintf(stderr, "belt-synth: unknown type '%s' (see --help)\n", optarg);
				return 2;
			}
			*(c == TYPE ? &s.wtype : &s.embd_type) = (enum belt_type)t;
			break;
		case PRESET: {
			/* a preset sets the shape; the type, embedding type and
			 * architecture given before it stay (30b-a3b is qwen3moe) */
			struct synth_shape keep = s;
			if (preset(&s, optarg)) {
				fprintf(stderr, "belt-synth: unknown preset '%s' (1b, 8b, 30b-a3b, tiny)\n",
					optarg);
				return 2;
			}
			s.wtype = keep.wtype;
			s.embd_type = keep.embd_type;
			s.tied = keep.tied;
			if (!s.arch)
				s.arch = keep.arch;
			break;
		}
		case 'h': fputs(help, stdout); return 0;
		default: fputs(help, stderr); return 2;
		}
	}
	char err[BELT_ERR_SIZE];
	struct belt_gguf *vg = NULL;
	if (vocab_from) {
		/* the file's vocabulary and its size, whatever --vocab said */
		const struct belt_gguf_kv *toks;
		if (!(vg = belt_gguf_open(vocab_from, err, sizeof err))) {
			fprintf(stderr, "belt-synth: --vocab-from %s: %s\n", vocab_from, err);
			return 1;
		}
		toks = belt_gguf_find(vg, "tokenizer.ggml.tokens");
		if (!toks || toks->type != BELT_GGUF_ARRAY || toks->v.arr.n < 260 ||
		    toks->v.arr.n > (1u << 24)) {
			fprintf(stderr, "belt-synth: --vocab-from %s: expected tokenizer.ggml.tokens, "
				"an array of 260 .. 16777216 tokens\n", vocab_from);
			belt_gguf_close(vg);
			return 1;
		}
		s.n_vocab = (uint32_t)toks->v.arr.n;
		s.vocab_from = vg;
	}
	if (!out || optind < argc || s.n_vocab < 260) {
		fprintf(stderr, "belt-synth: -o FILE is required (and --vocab must be >= 260)\n%s", help);
		belt_gguf_close(vg);
		return 2;
	}
	int rc = synth_write(&s, out, err, sizeof err);
	if (rc)
		fprintf(stderr, "belt-synth: %s\n", err);
	belt_gguf_close(vg);
	return rc ? 1 : 0;
}
