/* belt bench: prompt processing (pp) and generation (tg) speed, as a
 * llama-bench-style table, plus what a decode step reads and dispatches. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "belt/belt.h"
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
	"  -t, --threads N      CPU threads (default: one per core)\n"
	"      --backend NAME   backend plugin (default cpu)\n"
	"      --device N       the backend's device N (default: its choice; belt info lists them)\n"
	"      --profile        per-kernel times on stderr at the end (vulkan backend)\n"
	"      --chunk N        tokens per backend submission (default 16)\n"
	"      --kernel OP=VARIANT[,OP=VARIANT]  kernel choices\n"
	"      --temp T         also time sampled decode at temperature T (llama.cpp's\n"
	"                       defaults otherwise: top-k 40, top-p 0.95, min-p 0.05;\n"
	"                       seed 1) and print its ratio to greedy decode\n"
	"      --top-k N, --top-p P, --min-p P  those settings for --temp\n";

struct bench_opts {
	const char *model, *backend, *kernels;
	long n_prompt, n_gen, depth, reps, n_batch, n_ubatch, threads, chunk, device;
	int type_k, type_v;
	bool profile;
	struct belt_sampling samp; /* temp 0: greedy only */
};

static int parse(int argc, char **argv, struct bench_opts *o)
{
	enum { O_BACKEND = 256, O_CHUNK, O_KERNEL, O_DEVICE, O_PROFILE, O_TEMP, O_TOP_K, O_TOP_P,
	       O_MIN_P, O_CTK, O_CTV };
	static const struct option opts[] = {
		{"model", 1, 0, 'm'}, {"n-prompt", 1, 0, 'p'}, {"n-gen", 1, 0, 'n'},
		{"n-depth", 1, 0, 'd'}, {"batch-size", 1, 0, 'b'}, {"ubatch-size", 1, 0, 'u'},
		{"repetitions", 1, 0, 'r'}, {"threads", 1, 0, 't'}, {"backend", 1, 0, O_BACKEND},
		{"chunk", 1, 0, O_CHUNK}, {"kernel", 1, 0, O_KERNEL}, {"device", 1, 0, O_DEVICE},
		{"profile", 0, 0, O_PROFILE}, {"temp", 1, 0, O_TEMP}, {"top-k", 1, 0, O_TOP_K},
		{"top-p", 1, 0, O_TOP_P}, {"min-p", 1, 0, O_MIN_P}, {"cache-type-k", 1, 0, O_CTK},
		{"cache-type-v", 1, 0, O_CTV}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
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
	while ((c = getopt_long(argc, argv, ":m:p:n:d:r:b:u:t:c:h", opts, &li)) != -1) {
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
		case O_TEMP: if (!cli_float("bench", "--temp", optarg, &o->samp.temp)) return CLI_USAGE; break;
		case O_TOP_P: if (!cli_float("bench", "--top-p", optarg, &o->samp.top_p)) return CLI_USAGE; break;
		case O_MIN_P: if (!cli_float("bench", "--min-p", optarg, &o->samp.min_p)) return CLI_USAGE; break;
		case O_TOP_K:
			if (!cli_int("bench", "--top-k", optarg, 0, INT32_MAX, &lv))
				return CLI_USAGE;
			o->samp.top_k = (int32_t)lv;
			break;
		case O_BACKEND: o->backend = optarg; break;
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
	char pp[48], tg[48], tgs[64];
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
	size_t w = 7;
	if (o->n_prompt && strlen(t->pp) > w)
		w = strlen(t->pp);
	if (o->n_gen && strlen(t->tg) > w)
		w = strlen(t->tg);
	if (o->n_gen && o->samp.temp > 0 && strlen(t->tgs) > w)
		w = strlen(t->tgs);
	t->width = (int)w;
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
	/* tg decodes after a prompt of the depth's tokens (one at depth 0) */
	long tg_prompt = o->depth ? o->depth : 1;
	long need = o->depth + o->n_prompt;
	if (tg_prompt + o->n_gen > need)
		need = tg_prompt + o->n_gen;
	uint32_t train = belt_model_n_ctx_train(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)need > train ? (uint32_t)need : train;
	sp.chunk = (uint32_t)o->chunk;
	sp.n_batch = (uint32_t)o->n_batch;
	sp.n_ubatch = (uint32_t)o->n_ubatch;
	sp.type_k = o->type_k;
	sp.type_v = o->type_v;
	struct belt_session *s;
	if (belt_session_create(m, &sp, &s, err, CLI_ERR_SIZE))
		return -1;
	cli_model_warnings("bench", m, 0);
	int32_t n_vocab = belt_model_n_vocab(m);
	/* the depth's tokens, then the pp test's */
	size_t n_ids = (size_t)(o->depth + o->n_prompt + 1);
	int32_t *ids = malloc(sizeof *ids * n_ids);
	if (!ids) {
		belt_session_free(s);
		return belt_errf(err, CLI_ERR_SIZE, "out of memory for %zu token ids", n_ids);
	}
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
	struct series pp = {0}, tg = {0}, tgs = {0};
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
		    (rc = belt_generate(s, ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&tg, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		/* sampled right after greedy, the same length: a fair ratio */
		gp.sampling = &o->samp;
		if (rc == 0 && o->n_gen && sampled &&
		    (rc = belt_generate(s, ids, (size_t)tg_prompt, &gp, count_only, NULL, err,
					CLI_ERR_SIZE)) == 0 && r >= 0)
			add(&tgs, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
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
		if (tgs.n)
			row(name, bytes / 1048576, params, o, t.width, t.tgs, &tgs);
		printf("\ndecode: %u table commands/token (a backend may fuse them), %.2f MiB of weights/token, %.1f GB/s of weights at %.1f tokens/s\n",
		       cmds, wbytes / 1048576.0, wbytes * tps / 1e9, tps);
		if (tgs.n)
			printf("sampled decode (temp %g, top-k %d, top-p %g, min-p %g): %.3f x greedy\n",
			       (double)o->samp.temp, (int)o->samp.top_k, (double)o->samp.top_p,
			       (double)o->samp.min_p, tgs.sum / tgs.n / tps);
	}
	if (rc == 0)
		printf("%sKV cache: K %s, V %s\n", tg.n ? "" : "\n", belt_type_name(o->type_k),
		       belt_type_name(o->type_v));
	free(ids);
	belt_session_free(s);
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
