/* belt perplexity: the perplexity of a model on a text, computed as
 * llama.cpp's llama-perplexity does (doc/perplexity.md), so the figures
 * compare one to one. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/belt.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt perplexity -m MODEL -f FILE [-c N] [OPTIONS]\n"
	"\n"
	"The perplexity of MODEL on the text of FILE, as llama.cpp's llama-perplexity\n"
	"computes it: the text is cut into chunks of N tokens, each evaluated from an\n"
	"empty context with BOS first, and the second half of each chunk is scored.\n"
	"The running value after each chunk and the final estimate go to stdout.\n"
	"\n"
	"  -m, --model FILE       GGUF model\n"
	"  -f, --file FILE        the text to score\n"
	"  -c, --ctx-size N       tokens per chunk, the session's context (default 512)\n"
	"  -b, --batch-size N     logical batch (default 2048)\n"
	"  -ub, --ubatch-size N   rows per batched pass (default 512; 1: token by token)\n"
	"  -ctk, --cache-type-k T K cache type: f16 (default), q8_0 or f32\n"
	"  -ctv, --cache-type-v T V cache type: f16 (default), q8_0 or f32\n"
	"      --swa-full         keep every position of sliding-window layers\n"
	"  -t, --threads N        CPU threads (default: one per core)\n"
	"      --backend NAME     backend plugin (default cpu)\n"
	"      --device N         the backend's device N (default: its choice; belt info lists them)\n"
	"  -h, --help             this help\n";

struct ppl_opts {
	const char *model, *file, *backend;
	long n_ctx, n_batch, n_ubatch, threads, device;
	int type_k, type_v;
	bool swa_full;
};

static int parse(int argc, char **argv, struct ppl_opts *o)
{
	enum { O_BACKEND = 256, O_DEVICE, O_CTK, O_CTV, O_SWA_FULL };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"file", required_argument, 0, 'f'},
		{"ctx-size", required_argument, 0, 'c'}, {"batch-size", required_argument, 0, 'b'},
		{"ubatch-size", required_argument, 0, 'u'}, {"threads", required_argument, 0, 't'},
		{"backend", required_argument, 0, O_BACKEND}, {"device", required_argument, 0, O_DEVICE},
		{"cache-type-k", required_argument, 0, O_CTK},
		{"cache-type-v", required_argument, 0, O_CTV},
		{"swa-full", no_argument, 0, O_SWA_FULL},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct ppl_opts){.backend = "cpu", .n_ctx = 512, .n_batch = 2048, .n_ubatch = 512,
			       .device = -1, .type_k = BELT_TYPE_F16, .type_v = BELT_TYPE_F16};
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c, li = -1;
	while ((c = getopt_long(argc, argv, ":m:f:c:b:u:t:h", opts, &li)) != -1) {
		const char *v;
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'f': o->file = optarg; break;
		/* at least one token scored per chunk: c - 1 - c/2 > 0 */
		case 'c': {
			int r = cli_cache_type_short("perplexity", argc, argv, li >= 0, &o->type_k,
						     &o->type_v);
			if (r < 0)
				return CLI_USAGE;
			if (!r && !cli_int("perplexity", "-c", optarg, 3, 1L << 24, &o->n_ctx))
				return CLI_USAGE;
			break;
		}
		case O_CTK: if (!cli_cache_type("perplexity", "--cache-type-k", optarg, &o->type_k)) return CLI_USAGE; break;
		case O_CTV: if (!cli_cache_type("perplexity", "--cache-type-v", optarg, &o->type_v)) return CLI_USAGE; break;
		case O_SWA_FULL: o->swa_full = true; break;
		case 'b': if (!cli_int("perplexity", "-b", optarg, 1, CLI_MAX_BATCH, &o->n_batch)) return CLI_USAGE; break;
		case 'u':
			if (!(v = cli_ubatch_value("perplexity", argc, argv, li >= 0)) ||
			    !cli_int("perplexity", "-ub", v, 1, CLI_MAX_BATCH, &o->n_ubatch))
				return CLI_USAGE;
			break;
		case 't': if (!cli_int("perplexity", "-t", optarg, 1, 1024, &o->threads)) return CLI_USAGE; break;
		case O_DEVICE: if (!cli_int("perplexity", "--device", optarg, 0, 1023, &o->device)) return CLI_USAGE; break;
		case O_BACKEND: o->backend = optarg; break;
		case 'h': fputs(help, stdout); return -1;
		case ':': return cli_usage_error("perplexity", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("perplexity", "unknown option '%s'", argv[optind - 1]);
		}
		li = -1;
	}
	if (optind < argc)
		return cli_usage_error("perplexity", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("perplexity", "-m MODEL is required");
	if (!o->file)
		return cli_usage_error("perplexity", "-f FILE is required: the text to score");
	if (o->device >= 0)
		return cli_check_device("perplexity", o->backend, o->device);
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -log p(token) under the softmax of logits, in double, max-subtracted. */
static double nll_of(const float *logits, int32_t n_vocab, int32_t token)
{
	float max = logits[0];
	for (int32_t i = 1; i < n_vocab; i++)
		if (logits[i] > max)
			max = logits[i];
	double sum = 0;
	for (int32_t i = 0; i < n_vocab; i++)
		sum += exp((double)logits[i] - max);
	return -((double)logits[token] - max - log(sum));
}

/* The whole text as ids, BOS (and EOS) where the vocabulary adds them, as
 * llama.cpp tokenizes it: special-token text stays literal. */
static int32_t *tokenize(const struct belt_tokenizer *tok, const char *text, size_t len,
			 size_t *n, char *err)
{
	unsigned flags = (belt_tok_add_bos(tok) ? BELT_TOK_ADD_BOS : 0) |
			 (belt_tok_add_eos(tok) ? BELT_TOK_ADD_EOS : 0);
	int32_t *ids = NULL;
	if (belt_tok_encode_flags(tok, text, len, flags, NULL, 0, n, err, CLI_ERR_SIZE))
		return NULL;
	if (!(ids = malloc((*n + 1) * sizeof *ids))) {
		belt_errf(err, CLI_ERR_SIZE, "out of memory for %zu tokens", *n);
		return NULL;
	}
	if (belt_tok_encode_flags(tok, text, len, flags, ids, *n, n, err, CLI_ERR_SIZE)) {
		free(ids);
		return NULL;
	}
	return ids;
}

static int perplexity(struct belt_model *m, const struct ppl_opts *o, const char *text,
		      size_t len, char *err)
{
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	size_t n_tok;
	int32_t *ids = tokenize(tok, text, len, &n_tok, err);
	if (!ids)
		return -1;
	uint32_t n_ctx = (uint32_t)o->n_ctx;
	size_t n_chunk = n_tok / n_ctx;
	if (n_chunk == 0) {
		free(ids);
		return belt_errf(err, CLI_ERR_SIZE,
				 "%s: %zu tokens: expected at least one chunk of %u (-c)", o->file,
				 n_tok, n_ctx);
	}
	cli_model_warnings("perplexity", m, n_ctx);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = n_ctx;
	sp.n_batch = (uint32_t)o->n_batch;
	sp.n_ubatch = (uint32_t)o->n_ubatch;
	sp.type_k = o->type_k;
	sp.type_v = o->type_v;
	sp.swa_full = o->swa_full;
	struct belt_session *s = NULL;
	int32_t n_vocab = belt_model_n_vocab(m);
	int32_t *chunk = malloc(n_ctx * sizeof *chunk);
	float *logits = malloc((size_t)n_ctx * (size_t)n_vocab * sizeof *logits);
	int rc = chunk && logits ? 0 : belt_errf(err, CLI_ERR_SIZE,
						  "out of memory for the logits of %u positions", n_ctx);
	if (rc == 0)
		rc = belt_session_create(m, &sp, &s, err, CLI_ERR_SIZE);
	/* scored per chunk: the logits at first .. n_ctx - 2, each for the
	 * token after it, so every scored token has n_ctx/2 tokens before it */
	uint32_t first = n_ctx / 2;
	bool bos = belt_tok_add_bos(tok) && belt_tok_bos(tok) >= 0;
	if (rc == 0)
		fprintf(stderr, "belt perplexity: %zu tokens, %zu chunks of %u, %u scored in each\n",
			n_tok, n_chunk, n_ctx, n_ctx - 1 - first);
	double nll = 0, nll2 = 0, t0 = now();
	size_t count = 0;
	for (size_t i = 0; rc == 0 && i < n_chunk; i++) {
		const int32_t *src = ids + i * n_ctx;
		memcpy(chunk, src, n_ctx * sizeof *chunk);
		if (bos)
			chunk[0] = belt_tok_bos(tok);
		if ((rc = belt_session_eval_all(s, chunk, n_ctx, 0, logits, err, CLI_ERR_SIZE)))
			break;
		for (uint32_t j = first; j < n_ctx - 1; j++) {
			double v = nll_of(logits + (size_t)j * (size_t)n_vocab, n_vocab, src[j + 1]);
			nll += v;
			nll2 += v * v;
			count++;
		}
		printf("[%zu]%.4f,", i + 1, exp(nll / (double)count));
		fflush(stdout);
	}
	if (rc == 0) {
		double dt = now() - t0;
		/* the standard error of the mean NLL, carried through exp */
		double mean = nll / (double)count, var = nll2 / (double)count - mean * mean;
		double ppl = exp(mean);
		printf("\n");
		if (count > 1 && var > 0)
			printf("Final estimate: PPL = %.4f +/- %.5f\n", ppl,
			       ppl * sqrt(var / (double)(count - 1)));
		else
			printf("Final estimate: PPL = %.4f\n", ppl);
		fflush(stdout);
		fprintf(stderr, "belt perplexity: %zu chunks (%zu tokens) in %.2f s (%.1f tokens/s)\n",
			n_chunk, n_chunk * n_ctx, dt, dt > 0 ? (double)(n_chunk * n_ctx) / dt : 0);
	}
	belt_session_free(s);
	free(logits);
	free(chunk);
	free(ids);
	return rc;
}

int cmd_perplexity(int argc, char **argv)
{
	struct ppl_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[CLI_ERR_SIZE];
	size_t len = 0;
	char *text = cli_read_file(o.file, &len);
	if (!text)
		return cli_error("perplexity", "-f %s: %s", o.file, strerror(errno));
	if (len == 0) {
		free(text);
		return cli_error("perplexity", "-f %s: empty file: expected the text to score", o.file);
	}
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.device = (int)o.device;
	struct belt_model *m;
	rc = belt_model_load(&mp, &m, err, sizeof err) || perplexity(m, &o, text, len, err);
	belt_model_free(m);
	free(text);
	return rc ? cli_fail(err) : 0;
}
