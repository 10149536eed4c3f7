/* belt bench: prompt processing (pp) and generation (tg) speed, as a
 * llama-bench-style table, plus what a decode step reads and dispatches. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "belt/belt.h"
#include "belt/plugin.h"
#include "belt/sampler.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt bench -m MODEL [-p N] [-n N] [-d N] [-r N] [OPTIONS]\n"
	"\n"
	"  -m, --model FILE     GGUF model\n"
	"  -p, --n-prompt N     prompt tokens for the pp test (default 512; 0 skips it)\n"
	"  -n, --n-gen N        generated tokens for the tg test (default 128; 0 skips it)\n"
	"  -d, --n-depth N      run both tests after N tokens already in the context\n"
	"                       (filled before each test, not timed; default 0)\n"
	"  -r, --repetitions N  runs of each test (default 3)\n"
	"  -b, --batch-size N   logical batch of the prompt (default 2048)\n"
	"  -ub, --ubatch-size N rows per batched pass over the prompt (default 512; 1: token by token)\n"
	"  -ctk, --cache-type-k T  K cache type: f16 (default), q8_0 or f32\n"
	"  -ctv, --cache-type-v T  V cache type: f16 (default), q8_0 or f32\n"
	"      --swa-full          keep every position of sliding-window layers (default: a\n"
	"                          ring of the window and a pass's rows)\n"
	"  -t, --threads N      CPU threads (default: one per core)\n"
	"      --backend NAME   backend plugin (default cpu)\n"
	"      --device N       the backend's device N (default: its choice; belt info lists them)\n"
	"      --profile        per-kernel times on stderr at the end (vulkan backend)\n"
	"      --chunk N        tokens per backend submission (default 16)\n"
	"      --kernel OP=VARIANT[,OP=VARIANT]  kernel choices\n"
	"      --temp T         also time sampled decode at temperature T (llama.cpp's\n"
	"                       defaults otherwise: top-k 40, top-p 0.95, min-p 0.05;\n"
	"                       seed 1) and print its ratio to greedy decode\n"
	"      --top-k N, --top-p P, --min-p P  those settings for --temp\n"
	"      --draft NAME     also time decode with the drafter NAME (doc/drafting.md), its\n"
	"                       tokens per verification pass, and a pass's cost against a\n"
	"                       decode step\n"
	"      --draft-max N, --draft-options TEXT, --draft-heads FILE  as for belt run\n"
	"      --draft-unpaced  check every proposal, also where drafting is found to cost\n"
	"                       more than it saves (tau of the drafter alone)\n"
	"      --grammar-file FILE  also time decode constrained by this GBNF grammar, and\n"
	"                       its mask's cost per token (one core, the generated tokens\n"
	"                       replayed through a new state of the grammar)\n"
	"      --json-schema FILE  the same with a JSON Schema\n"
	"  -f, --file FILE      the tg tests' prompt: this text instead of random tokens\n"
	"                       (drafts need text that repeats to be of use)\n";

struct bench_opts {
	const char *model, *backend, *kernels;
	const char *draft, *draft_options, *file; /* --draft, --draft-options, -f */
	const char *draft_heads;		  /* --draft-heads */
	bool draft_unpaced;			  /* --draft-unpaced */
	const char *grammar_file, *grammar_kind;   /* --grammar-file or --json-schema */
	long draft_max;
	long n_prompt, n_gen, depth, reps, n_batch, n_ubatch, threads, chunk, device;
	int type_k, type_v;
	bool profile, swa_full;
	struct belt_sampling samp; /* temp 0: greedy only */
};

static int parse(int argc, char **argv, struct bench_opts *o)
{
	enum { O_BACKEND = 256, O_CHUNK, O_KERNEL, O_DEVICE, O_PROFILE, O_TEMP, O_TOP_K, O_TOP_P,
	       O_MIN_P, O_CTK, O_CTV, O_DRAFT, O_DRAFT_MAX, O_DRAFT_OPTIONS, O_DRAFT_HEADS, O_DRAFT_UNPACED,
	       O_GRAMMAR_FILE, O_JSON_SCHEMA, O_SWA_FULL };
	static const struct option opts[] = {
		{"model", 1, 0, 'm'}, {"n-prompt", 1, 0, 'p'}, {"n-gen", 1, 0, 'n'},
		{"n-depth", 1, 0, 'd'}, {"batch-size", 1, 0, 'b'}, {"ubatch-size", 1, 0, 'u'},
		{"repetitions", 1, 0, 'r'}, {"threads", 1, 0, 't'}, {"backend", 1, 0, O_BACKEND},
		{"chunk", 1, 0, O_CHUNK}, {"kernel", 1, 0, O_KERNEL}, {"device", 1, 0, O_DEVICE},
		{"profile", 0, 0, O_PROFILE}, {"temp", 1, 0, O_TEMP}, {"top-k", 1, 0, O_TOP_K},
		{"top-p", 1, 0, O_TOP_P}, {"min-p", 1, 0, O_MIN_P}, {"cache-type-k", 1, 0, O_CTK},
		{"cache-type-v", 1, 0, O_CTV}, {"draft", 1, 0, O_DRAFT},
		{"draft-max", 1, 0, O_DRAFT_MAX}, {"draft-options", 1, 0, O_DRAFT_OPTIONS},
		{"draft-heads", 1, 0, O_DRAFT_HEADS}, {"draft-unpaced", 0, 0, O_DRAFT_UNPACED},
		{"file", 1, 0, 'f'}, {"grammar-file", 1, 0, O_GRAMMAR_FILE},
		{"json-schema", 1, 0, O_JSON_SCHEMA}, {"swa-full", 0, 0, O_SWA_FULL},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct bench_opts){.backend = "cpu", .n_prompt = 512, .n_gen = 128, .reps = 3,
				 .n_batch = 2048, .n_ubatch = 512, .chunk = 16, .device = -1,
				 .type_k = BELT_TYPE_F16, .type_v = BELT_TYPE_F16};
	belt_sampling_default(&o->samp);
	o->samp.temp = 0;
	o->samp.seed = 1;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c, li = -1;
	long lv;
	const char *v;
	while ((c = getopt_long(argc, argv, ":m:p:n:d:r:b:u:t:c:f:h", opts, &li)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': if (!cli_int("bench", "-p", optarg, 0, 1L << 20, &o->n_prompt)) return CLI_USAGE; break;
		case 'n': if (!cli_int("bench", "-n", optarg, 0, 1L << 20, &o->n_gen)) return CLI_USAGE; break;
		case 'd': if (!cli_int("bench", "-d", optarg, 0, 1L << 24, &o->depth)) return CLI_USAGE; break;
		case 'b': if (!cli_int("bench", "-b", optarg, 1, CLI_MAX_BATCH, &o->n_batch)) return CLI_USAGE; break;
		case 'u':
			if (!(v = cli_ubatch_value("bench", argc, argv, li >= 0)) ||
			    !cli_int("bench", "-ub", v, 1, CLI_MAX_BATCH, &o->n_ubatch))
				return CLI_USAGE;
			break;
		case 'c':
			/* -ctk, -ctv: bench has no -c of its own */
			lv = cli_cache_type_short("bench", argc, argv, li >= 0, &o->type_k, &o->type_v);
			if (lv < 0)
				return CLI_USAGE;
			if (!lv)
				return cli_usage_error("bench", "unknown option '-c'");
			break;
		case O_CTK: if (!cli_cache_type("bench", "--cache-type-k", optarg, &o->type_k)) return CLI_USAGE; break;
		case O_CTV: if (!cli_cache_type("bench", "--cache-type-v", optarg, &o->type_v)) return CLI_USAGE; break;
		case 'r': if (!cli_int("bench", "-r", optarg, 1, 1000, &o->reps)) return CLI_USAGE; break;
		case 't': if (!cli_int("bench", "-t", optarg, 1, 1024, &o->threads)) return CLI_USAGE; break;
		case O_CHUNK: if (!cli_int("bench", "--chunk", optarg, 1, 4096, &o->chunk)) return CLI_USAGE; break;
		case O_DEVICE: if (!cli_int("bench", "--device", optarg, 0, 1023, &o->device)) return CLI_USAGE; break;
		case O_PROFILE: o->profile = true; break;
		case O_SWA_FULL: o->swa_full = true; break;
		case O_TEMP: if (!cli_float("bench", "--temp", optarg, &o->samp.temp)) return CLI_USAGE; break;
		case O_TOP_P: if (!cli_float("bench", "--top-p", optarg, &o->samp.top_p)) return CLI_USAGE; break;
		case O_MIN_P: if (!cli_float("bench", "--min-p", optarg, &o->samp.min_p)) return CLI_USAGE; break;
		case O_TOP_K:
			if (!cli_int("bench", "--top-k", optarg, 0, INT32_MAX, &lv))
				return CLI_USAGE;
			o->samp.top_k = (int32_t)lv;
			break;
		case O_BACKEND: o->backend = optarg; break;
		case O_DRAFT: o->draft = optarg; break;
		case O_DRAFT_OPTIONS: o->draft_options = optarg; break;
		case O_DRAFT_HEADS: o->draft_heads = optarg; break;
		case O_DRAFT_UNPACED: o->draft_unpaced = true; break;
		case O_DRAFT_MAX: if (!cli_int("bench", "--draft-max", optarg, 1, CLI_MAX_BATCH - 1, &o->draft_max)) return CLI_USAGE; break;
		case 'f': o->file = optarg; break;
		case O_GRAMMAR_FILE:
		case O_JSON_SCHEMA:
			if (o->grammar_file)
				return cli_usage_error("bench", "give one --grammar-file or --json-schema");
			o->grammar_file = optarg;
			o->grammar_kind = c == O_GRAMMAR_FILE ? "gbnf" : "json-schema";
			break;
		case O_KERNEL: o->kernels = optarg; break;
		case 'h': fputs(help, stdout); return -1;
		case ':': return cli_usage_error("bench", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
		}
		li = -1;
	}
	if (optind < argc)
		return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("bench", "-m MODEL is required");
	if ((o->draft_max || o->draft_options || o->draft_heads || o->draft_unpaced) && !o->draft)
		return cli_usage_error("bench", "--draft-max, --draft-options, --draft-heads and "
				       "--draft-unpaced need --draft NAME");
	if (o->file && o->depth)
		return cli_usage_error("bench", "-f sets the tg tests' prompt and -d fills the context: give one of them");
	if (o->draft && o->draft_max >= o->n_ubatch)
		return cli_usage_error("bench", "--draft-max %ld: a verification pass of %ld rows needs -ub of at least %ld (it is %ld)",
				       o->draft_max, o->draft_max + 1, o->draft_max + 1, o->n_ubatch);
	char err[CLI_ERR_SIZE];
	if (belt_sampling_check(&o->samp, err, sizeof err))
		return cli_usage_error("bench", "%s", err);
	if (o->device >= 0)
		return cli_check_device("bench", o->backend, o->device);
	return 0;
}

struct series {
	double sum, sum2;
	unsigned n;
};

static void add(struct series *s, double v)
{
	s->sum += v;
	s->sum2 += v * v;
	s->n++;
}

/* A table row; tw is the width of the test column. */
static void row(const char *model, double mib, double params, const struct bench_opts *o,
		int tw, const char *test, const struct series *s)
{
	double mean = s->sum / s->n;
	double var = s->n > 1 ? (s->sum2 - s->n * mean * mean) / (s->n - 1) : 0;
	printf("| %-28s | %9.2f MiB | %8.2f M | %-7s | %7ld | %*s | %10.2f ± %7.2f |\n", model, mib,
	       params / 1e6, o->backend, o->threads, tw, test, mean, var > 0 ? sqrt(var) : 0);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool count_only(void *ud, int32_t id, const char *text, size_t len)
{
	(void)ud;
	(void)id;
	(void)text;
	(void)len;
	return true;
}

/* The names of the tests, as llama-bench writes them ("pp512 @ d4096"). */
struct names {
	char pp[48], tg[48], tgs[64], tgd[64], tgsd[80], tgg[64];
	int width; /* of the test column: 7, or the longest name */
};

static void test_names(const struct bench_opts *o, struct names *t)
{
	char at[24] = "";
	if (o->depth)
		snprintf(at, sizeof at, " @ d%ld", o->depth);
	snprintf(t->pp, sizeof t->pp, "pp%ld%s", o->n_prompt, at);
	snprintf(t->tg, sizeof t->tg, "tg%ld%s", o->n_gen, at);
	snprintf(t->tgs, sizeof t->tgs, "tg%ld T%g%s", o->n_gen, (double)o->samp.temp, at);
	snprintf(t->tgd, sizeof t->tgd, "%s %s", t->tg, o->draft ? o->draft : "");
	snprintf(t->tgsd, sizeof t->tgsd, "%s %s", t->tgs, o->draft ? o->draft : "");
	snprintf(t->tgg, sizeof t->tgg, "%s grammar", t->tg);
	size_t w = 7;
	if (o->n_prompt && strlen(t->pp) > w)
		w = strlen(t->pp);
	if (o->n_gen && strlen(t->tg) > w)
		w = strlen(t->tg);
	if (o->n_gen && o->samp.temp > 0 && strlen(o->draft ? t->tgsd : t->tgs) > w)
		w = strlen(o->draft ? t->tgsd : t->tgs);
	if (o->n_gen && o->draft && strlen(t->tgd) > w)
		w = strlen(t->tgd);
	if (o->n_gen && o->grammar_file && strlen(t->tgg) > w)
		w = strlen(t->tgg);
	t->width = (int)w;
}

/* -f: the file's text as the tg tests' prompt (BOS first where the model
 * adds one) into a new array; NULL with err. */
static int32_t *file_prompt(struct belt_model *m, const char *path, size_t *n, char *err)
{
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text) {
		belt_errf(err, CLI_ERR_SIZE, "-f %s: %s", path, strerror(errno));
		return NULL;
	}
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	bool bos = belt_tok_add_bos(tok);
	int32_t *ids = NULL;
	if (belt_tok_encode(tok, text, len, bos, NULL, 0, n, err, CLI_ERR_SIZE) == 0 &&
	    (ids = malloc((*n + 1) * sizeof *ids)) &&
	    belt_tok_encode(tok, text, len, bos, ids, *n, n, err, CLI_ERR_SIZE)) {
		free(ids);
		ids = NULL;
	} else if (!ids && *n) {
		belt_errf(err, CLI_ERR_SIZE, "-f %s: out of memory", path);
	}
	free(text);
	if (ids && *n == 0) {
		free(ids);
		belt_errf(err, CLI_ERR_SIZE, "-f %s: no tokens to feed the model", path);
		return NULL;
	}
	return ids;
}

/* The cost of a verification pass of n rows at pos (the tokens of ids,
 * n_ids of them, over and over) against a decode step of 1 / tps
 * seconds: its mean time over reps passes after a warm-up. */
static int verify_cost(struct belt_session *s, const int32_t *ids, size_t n_ids, uint32_t n,
		       uint32_t pos, long reps, double tps, char *err)
{
	int32_t *rows = malloc(2 * (size_t)n * sizeof *rows);
	if (!rows)
		return belt_errf(err, CLI_ERR_SIZE, "out of memory for %u rows", n);
	for (uint32_t i = 0; i < n; i++)
		rows[i] = ids[i % n_ids];
	double t = 0;
	for (long r = -1; r < reps; r++) {
		double t0 = now();
		if (belt_session_verify(s, rows, NULL, n, pos, rows + n, err, CLI_ERR_SIZE)) {
			free(rows);
			return -1;
		}
		if (r >= 0)
			t += now() - t0;
	}
	free(rows);
	t /= (double)reps;
	printf("verification pass of %u rows: %.3f ms, %.2f x a decode step (%.3f ms at %.1f tokens/s)\n",
	       n, t * 1e3, t * tps, 1e3 / tps, tps);
	return 0;
}

/* Token ids a generation made, for the grammar's replay. */
struct ids {
	int32_t *id;
	size_t n, cap;
};

static bool keep_ids(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct ids *k = ud;
	if (id >= 0 && k->n < k->cap)
		k->id[k->n++] = id;
	return true;
}

/* The grammar's cost per token: the ids a constrained generation picked,
 * replayed through a new state (compiled here, timed apart) on this
 * thread: each step the mask copied out (allowed) and the token accepted,
 * which computes the next mask. Prints mean and largest. */
static int mask_cost(struct belt_model *m, const struct bench_opts *o, const char *text,
		     size_t len, const struct ids *k, char *err)
{
	const struct belt_grammar_ops *ops = belt_grammar_get("gbnf", err, CLI_ERR_SIZE);
	if (!ops)
		return -1;
	int32_t nv = belt_model_n_vocab(m);
	uint32_t *mask = malloc(((size_t)nv + 31) / 32 * sizeof *mask);
	if (!mask)
		return belt_errf(err, CLI_ERR_SIZE, "out of memory for a mask of %d tokens", nv);
	void *st = NULL;
	double t0 = now();
	if (ops->compile(text, len, o->grammar_kind, belt_model_tokenizer(m), &st, err,
			 CLI_ERR_SIZE)) {
		free(mask);
		return -1;
	}
	double compile_s = now() - t0, sum = 0, max = 0;
	size_t n = 0;
	for (; n < k->n; n++) {
		t0 = now();
		ops->allowed(st, mask, nv);
		int rc = ops->accept(st, k->id[n], err, CLI_ERR_SIZE);
		double t = now() - t0;
		if (rc)
			break; /* the end-of-generation token past the end */
		sum += t;
		max = t > max ? t : max;
	}
	printf("grammar (%s, %d tokens): compiled in %.1f ms; mask per token %.1f us mean, %.1f us largest, over %zu tokens (one core)\n",
	       o->grammar_kind, nv, compile_s * 1e3, n ? sum / n * 1e6 : 0.0, max * 1e6, n);
	ops->free(st);
	free(mask);
	return 0;
}

/* --grammar-file or --json-schema: its text, compiled for m, and room for
 * the ids a constrained run makes; nothing kept on failure. */
static int load_grammar(struct belt_model *m, const struct bench_opts *o, char **text,
			size_t *len, struct belt_grammar **g, struct ids *kept, char *err)
{
	const char *flag = strcmp(o->grammar_kind, "gbnf") ? "--json-schema" : "--grammar-file";
	if (!(*text = cli_read_file(o->grammar_file, len)))
		return belt_errf(err, CLI_ERR_SIZE, "%s %s: %s", flag, o->grammar_file,
				 strerror(errno));
	if (belt_grammar_new(belt_model_tokenizer(m), "gbnf", o->grammar_kind, *text, *len, g, err,
			     CLI_ERR_SIZE) == 0 &&
	    (kept->id = malloc(kept->cap * sizeof *kept->id)))
		return 0;
	if (*g)
		belt_errf(err, CLI_ERR_SIZE, "out of memory");
	else
		belt_err_prefix(err, CLI_ERR_SIZE, o->grammar_file);
	belt_grammar_free(*g);
	*g = NULL;
	free(*text);
	*text = NULL;
	return -1;
}

static int bench(struct belt_model *m, const struct bench_opts *o, char *err)
{
	const struct belt_gguf *g = belt_model_gguf(m);
	double bytes = 0, params = 0;
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		bytes += (double)g->tensors[i].size;
		params += (double)(g->tensors[i].ne[0] * g->tensors[i].ne[1] * g->tensors[i].ne[2] *
				   g->tensors[i].ne[3]);
	}
	/* tg decodes after a prompt of the depth's tokens (one at depth 0),
	 * or the text of -f */
	size_t n_file = 0;
	int32_t *file_ids = o->file ? file_prompt(m, o->file, &n_file, err) : NULL;
	if (o->file && !file_ids)
		return -1;
	long tg_prompt = file_ids ? (long)n_file : o->depth ? o->depth : 1;
	long need = o->depth + o->n_prompt;
	if (tg_prompt + o->n_gen > need)
		need = tg_prompt + o->n_gen;
	/* and a verification pass after the prompt */
	if (o->draft && tg_prompt + (o->draft_max ? o->draft_max : 8) > need)
		need = tg_prompt + (o->draft_max ? o->draft_max : 8);
	uint32_t train = belt_model_n_ctx_train(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)need > train ? (uint32_t)need : train;
	sp.chunk = (uint32_t)o->chunk;
	sp.n_batch = (uint32_t)o->n_batch;
	sp.n_ubatch = (uint32_t)o->n_ubatch;
	sp.type_k = o->type_k;
	sp.type_v = o->type_v;
	sp.swa_full = o->swa_full;
	struct belt_session *s;
	struct belt_drafter *d = NULL;
	char dopts[4200];
	const char *dopt = o->draft_heads || o->draft_options
				   ? cli_draft_options("bench", o->draft_heads, o->draft_options,
						       dopts, sizeof dopts)
				   : NULL;
	if ((o->draft_heads || o->draft_options) && !dopt) {
		free(file_ids);
		return belt_errf(err, CLI_ERR_SIZE, "--draft-heads: see above");
	}
	if (o->draft && belt_drafter_new(m, o->draft, dopt, &d, err, CLI_ERR_SIZE)) {
		free(file_ids);
		return belt_err_prefix(err, CLI_ERR_SIZE, "--draft");
	}
	size_t g_len = 0;
	char *g_text = NULL;
	struct belt_grammar *gram = NULL;
	struct ids kept = {.cap = (size_t)o->n_gen + 2};
	if (o->grammar_file && load_grammar(m, o, &g_text, &g_len, &gram, &kept, err)) {
		belt_drafter_free(d);
		free(file_ids);
		return -1;
	}
	if (belt_session_create(m, &sp, &s, err, CLI_ERR_SIZE)) {
		belt_drafter_free(d);
		free(file_ids);
		return -1;
	}
	cli_model_warnings("bench", m, 0);
	int32_t n_vocab = belt_model_n_vocab(m);
	/* the depth's tokens, then the pp test's */
	size_t n_ids = (size_t)(o->depth + o->n_prompt + 1);
	int32_t *ids = malloc(sizeof *ids * n_ids);
	if (!ids) {
		belt_session_free(s);
		belt_drafter_free(d);
		free(file_ids);
		return belt_errf(err, CLI_ERR_SIZE, "out of memory for %zu token ids", n_ids);
	}
	const int32_t *tg_ids = file_ids ? file_ids : ids;
	uint64_t rng = 88172645463325252ull;
	for (size_t i = 0; i < n_ids; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ids[i] = (int32_t)(3 + rng % (uint64_t)(n_vocab - 3));
	}
	const char *name = strrchr(o->model, '/') ? strrchr(o->model, '/') + 1 : o->model;
	struct names t;
	test_names(o, &t);
	char dashes[80];
	memset(dashes, '-', sizeof dashes - 1);
	dashes[t.width + 2 < (int)sizeof dashes ? t.width + 2 : (int)sizeof dashes - 1] = 0;
	printf("| %-28s | %13s | %10s | %-7s | %7s | %*s | %20s |\n", "model", "size", "params",
	       "backend", "threads", t.width, "test", "t/s");
	printf("|------------------------------|---------------|------------|---------|---------|%s|----------------------|\n",
	       dashes);
	int rc = 0;
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.stop_at_eog = false;
	gp.n_predict = (uint32_t)o->n_gen + 1;
	gp.draft_max = (uint32_t)o->draft_max;
	gp.draft_unpaced = o->draft_unpaced;
	struct series pp = {0}, tg = {0}, tgs = {0}, tgd = {0}, tgsd = {0}, tgg = {0};
	uint32_t g_tokens = 0;
	uint64_t n_verify = 0, n_accepted = 0, n_drafted = 0;
	bool sampled = o->samp.temp > 0;
	/* one warm-up of each, then the measured repetitions */
	for (long r = -1; rc == 0 && r < o->reps; r++) {
		/* the context before the pp test, not timed */
		if (o->n_prompt && o->depth)
			rc = belt_session_eval(s, ids, (size_t)o->depth, 0, NULL, err, CLI_ERR_SIZE);
		double t0 = now();
		if (rc == 0 && o->n_prompt &&
		    (rc = belt_session_eval(s, ids + o->depth, (size_t)o->n_prompt, (uint32_t)o->depth,
					    NULL, err, CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&pp, o->n_prompt / (now() - t0));
		/* belt_generate refills the depth as its prompt: its prefill
		 * is timed apart from decode_s, which alone is counted */
		if (rc == 0 && o->n_gen &&
		    (rc = belt_generate(s, tg_ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&tg, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		/* with drafts right after without, the same prompt and length */
		gp.drafter = d;
		if (rc == 0 && o->n_gen && d &&
		    (rc = belt_generate(s, tg_ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0) {
			const struct belt_stats *st = belt_session_stats(s);
			add(&tgd, (st->n_generated - 1) / st->decode_s);
			n_verify += st->n_verify;
			n_accepted += st->n_accepted;
			n_drafted += st->n_drafted;
		}
		gp.drafter = NULL;
		/* constrained right after free, the same prompt and length;
		 * the last repetition's ids kept for the mask's replay */
		gp.grammar = gram;
		kept.n = 0;
		if (rc == 0 && o->n_gen && gram &&
		    (rc = belt_generate(s, tg_ids, (size_t)tg_prompt, &gp, keep_ids, &kept, err,
					CLI_ERR_SIZE)) == 0 && r >= 0) {
			const struct belt_stats *st = belt_session_stats(s);
			if (st->n_generated > 1)
				add(&tgg, (st->n_generated - 1) / st->decode_s);
			g_tokens = st->n_generated;
		}
		gp.grammar = NULL;
		/* sampled right after greedy, the same length: a fair ratio */
		gp.sampling = &o->samp;
		if (rc == 0 && o->n_gen && sampled &&
		    (rc = belt_generate(s, tg_ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&tgs, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		gp.drafter = d;
		if (rc == 0 && o->n_gen && sampled && d &&
		    (rc = belt_generate(s, tg_ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&tgsd, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		gp.drafter = NULL;
		gp.sampling = NULL;
	}
	if (rc == 0 && pp.n)
		row(name, bytes / 1048576, params, o, t.width, t.pp, &pp);
	if (rc == 0 && tg.n) {
		row(name, bytes / 1048576, params, o, t.width, t.tg, &tg);
		uint32_t cmds;
		uint64_t wbytes;
		belt_session_cost(s, &cmds, &wbytes);
		double tps = tg.sum / tg.n;
		if (tgd.n)
			row(name, bytes / 1048576, params, o, t.width, t.tgd, &tgd);
		if (tgg.n)
			row(name, bytes / 1048576, params, o, t.width, t.tgg, &tgg);
		if (tgs.n)
			row(name, bytes / 1048576, params, o, t.width, t.tgs, &tgs);
		if (tgsd.n)
			row(name, bytes / 1048576, params, o, t.width, t.tgsd, &tgsd);
		printf("\ndecode: %u table commands/token (a backend may fuse them), %.2f MiB of weights/token, %.1f GB/s of weights at %.1f tokens/s\n",
		       cmds, wbytes / 1048576.0, wbytes * tps / 1e9, tps);
		if (tgs.n)
			printf("sampled decode (temp %g, top-k %d, top-p %g, min-p %g): %.3f x greedy\n",
			       (double)o->samp.temp, (int)o->samp.top_k, (double)o->samp.top_p,
			       (double)o->samp.min_p, tgs.sum / tgs.n / tps);
		if (tgd.n) {
			uint32_t rows = o->draft_max ? (uint32_t)o->draft_max : 8;
			printf("drafts (%s): %.3f x greedy; %.2f tokens per verification pass (%llu of %llu drafted tokens accepted)\n",
			       o->draft, tgd.sum / tgd.n / tps,
			       n_verify ? (double)(n_accepted + n_verify) / (double)n_verify : 0.0,
			       (unsigned long long)n_accepted, (unsigned long long)n_drafted);
			if (tgsd.n)
				printf("sampled decode with drafts: %.3f x sampled without\n",
				       tgsd.sum / tgsd.n / (tgs.sum / tgs.n));
			rc = verify_cost(s, tg_ids, (size_t)tg_prompt, rows, (uint32_t)tg_prompt,
					 o->reps, tps, err);
		}
		if (rc == 0 && gram) {
			if (tgg.n)
				printf("constrained decode (%s): %.3f x greedy, %u tokens per run (a grammar that ends stops the run)\n",
				       o->grammar_file, tgg.sum / tgg.n / tps, g_tokens);
			rc = mask_cost(m, o, g_text, g_len, &kept, err);
		}
	}
	if (rc == 0)
		printf("%sKV cache: K %s, V %s, %.1f MiB for %u positions\n", tg.n ? "" : "\n",
		       belt_type_name(o->type_k), belt_type_name(o->type_v),
		       (double)belt_session_kv_bytes(s) / (1024.0 * 1024.0), belt_session_n_ctx(s));
	free(ids);
	free(file_ids);
	belt_session_free(s);
	belt_drafter_free(d);
	belt_grammar_free(gram);
	free(g_text);
	free(kept.id);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	/* the count the table shows is the count used: "one per core" made
	 * explicit, as the CPU backend would take it */
	if (o.threads <= 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = cores > 0 ? cores : 1;
	}
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.kernels = o.kernels;
	mp.device = (int)o.device;
	mp.profile = o.profile;
	char err[CLI_ERR_SIZE];
	struct belt_model *m;
	rc = belt_model_load(&mp, &m, err, sizeof err) || bench(m, &o, err);
	belt_model_free(m);
	return rc ? cli_fail(err) : 0;
}
