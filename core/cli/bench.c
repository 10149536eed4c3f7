/* belt bench: prompt processing (pp) and generation (tg) speed, as a
 * llama-bench-style table, plus what a decode step reads and dispatches. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt bench -m MODEL [-p N] [-n N] [-r N] [OPTIONS]\n"
	"\n"
	"  -m, --model FILE     GGUF model\n"
	"  -p, --n-prompt N     prompt tokens for the pp test (default 512; 0 skips it)\n"
	"  -n, --n-gen N        generated tokens for the tg test (default 128; 0 skips it)\n"
	"  -r, --repetitions N  runs of each test (default 3)\n"
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
	long n_prompt, n_gen, reps, threads, chunk, device;
	bool profile;
	struct belt_sampling samp; /* temp 0: greedy only */
};

static int parse(int argc, char **argv, struct bench_opts *o)
{
	enum { O_BACKEND = 256, O_CHUNK, O_KERNEL, O_DEVICE, O_PROFILE, O_TEMP, O_TOP_K, O_TOP_P,
	       O_MIN_P };
	static const struct option opts[] = {
		{"model", 1, 0, 'm'}, {"n-prompt", 1, 0, 'p'}, {"n-gen", 1, 0, 'n'},
		{"repetitions", 1, 0, 'r'}, {"threads", 1, 0, 't'}, {"backend", 1, 0, O_BACKEND},
		{"chunk", 1, 0, O_CHUNK}, {"kernel", 1, 0, O_KERNEL}, {"device", 1, 0, O_DEVICE},
		{"profile", 0, 0, O_PROFILE}, {"temp", 1, 0, O_TEMP}, {"top-k", 1, 0, O_TOP_K},
		{"top-p", 1, 0, O_TOP_P}, {"min-p", 1, 0, O_MIN_P}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct bench_opts){.backend = "cpu", .n_prompt = 512, .n_gen = 128, .reps = 3, .chunk = 16,
				 .device = -1};
	belt_sampling_default(&o->samp);
	o->samp.temp = 0;
	o->samp.seed = 1;
	opterr = 0;
	optind = 1;
	int c;
	long lv;
	while ((c = getopt_long(argc, argv, ":m:p:n:r:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': if (!cli_int("bench", "-p", optarg, 0, 1L << 20, &o->n_prompt)) return CLI_USAGE; break;
		case 'n': if (!cli_int("bench", "-n", optarg, 0, 1L << 20, &o->n_gen)) return CLI_USAGE; break;
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
	}
	if (optind < argc)
		return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("bench", "-m MODEL is required");
	char err[BELT_ERR_SIZE];
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

static void row(const char *model, double mib, double params, const struct bench_opts *o,
		const char *test, const struct series *s)
{
	double mean = s->sum / s->n;
	double var = s->n > 1 ? (s->sum2 - s->n * mean * mean) / (s->n - 1) : 0;
	printf("| %-28s | %9.2f MiB | %8.2f M | %-7s | %7ld | %7s | %10.2f ± %7.2f |\n", model, mib,
	       params / 1e6, o->backend, o->threads, test, mean, var > 0 ? sqrt(var) : 0);
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

static int bench(struct belt_model *m, const struct bench_opts *o, char *err)
{
	const struct belt_gguf *g = belt_model_gguf(m);
	double bytes = 0, params = 0;
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		bytes += (double)g->tensors[i].size;
		params += (double)(g->tensors[i].ne[0] * g->tensors[i].ne[1] * g->tensors[i].ne[2] *
				   g->tensors[i].ne[3]);
	}
	uint32_t need = (uint32_t)(o->n_prompt > o->n_gen + 1 ? o->n_prompt : o->n_gen + 1);
	uint32_t train = belt_model_n_ctx_train(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = need > train ? need : train;
	sp.chunk = (uint32_t)o->chunk;
	struct belt_session *s;
	if (belt_session_create(m, &sp, &s, err, BELT_ERR_SIZE))
		return -1;
	int32_t n_vocab = belt_model_n_vocab(m);
	int32_t *ids = malloc(sizeof *ids * (size_t)(o->n_prompt + 1));
	uint64_t rng = 88172645463325252ull;
	for (long i = 0; i < o->n_prompt + 1; i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ids[i] = (int32_t)(3 + rng % (uint64_t)(n_vocab - 3));
	}
	const char *name = strrchr(o->model, '/') ? strrchr(o->model, '/') + 1 : o->model;
	printf("| %-28s | %13s | %10s | %-7s | %7s | %7s | %20s |\n", "model", "size", "params",
	       "backend", "threads", "test", "t/s");
	printf("|------------------------------|---------------|------------|---------|---------|---------|----------------------|\n");
	int rc = 0;
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.stop_at_eog = false;
	gp.n_predict = (uint32_t)o->n_gen + 1;
	struct series pp = {0}, tg = {0}, tgs = {0};
	bool sampled = o->samp.temp > 0;
	/* one warm-up of each, then the measured repetitions */
	for (long r = -1; rc == 0 && r < o->reps; r++) {
		double t0 = now();
		if (o->n_prompt && (rc = belt_session_eval(s, ids, (size_t)o->n_prompt, 0, NULL, err,
							   BELT_ERR_SIZE)) == 0 && r >= 0)
			add(&pp, o->n_prompt / (now() - t0));
		if (rc == 0 && o->n_gen &&
		    (rc = belt_generate(s, ids, 1, &gp, count_only, NULL, err, BELT_ERR_SIZE)) == 0 && r >= 0)
			add(&tg, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		/* sampled right after greedy, the same length: a fair ratio */
		gp.sampling = &o->samp;
		if (rc == 0 && o->n_gen && sampled &&
		    (rc = belt_generate(s, ids, 1, &gp, count_only, NULL, err, BELT_ERR_SIZE)) == 0 && r >= 0)
			add(&tgs, (belt_session_stats(s)->n_generated - 1) / belt_session_stats(s)->decode_s);
		gp.sampling = NULL;
	}
	char test[32];
	if (rc == 0 && pp.n) {
		snprintf(test, sizeof test, "pp%ld", o->n_prompt);
		row(name, bytes / 1048576, params, o, test, &pp);
	}
	if (rc == 0 && tg.n) {
		snprintf(test, sizeof test, "tg%ld", o->n_gen);
		row(name, bytes / 1048576, params, o, test, &tg);
		uint32_t cmds;
		uint64_t wbytes;
		belt_session_cost(s, &cmds, &wbytes);
		double tps = tg.sum / tg.n;
		if (tgs.n) {
			snprintf(test, sizeof test, "tg%ld T%g", o->n_gen, (double)o->samp.temp);
			row(name, bytes / 1048576, params, o, test, &tgs);
		}
		printf("\ndecode: %u table commands/token (a backend may fuse them), %.2f MiB of weights/token, %.1f GB/s of weights at %.1f tokens/s\n",
		       cmds, wbytes / 1048576.0, wbytes * tps / 1e9, tps);
		if (tgs.n)
			printf("sampled decode (temp %g, top-k %d, top-p %g, min-p %g): %.3f x greedy\n",
			       (double)o->samp.temp, (int)o->samp.top_k, (double)o->samp.top_p,
			       (double)o->samp.min_p, tgs.sum / tgs.n / tps);
	}
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
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.kernels = o.kernels;
	mp.device = (int)o.device;
	mp.profile = o.profile;
	char err[BELT_ERR_SIZE];
	struct belt_model *m;
	rc = belt_model_load(&mp, &m, err, sizeof err) || bench(m, &o, err);
	belt_model_free(m);
	return rc ? cli_fail(err) : 0;
}
