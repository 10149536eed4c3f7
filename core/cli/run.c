/* belt run: generate text (or ids) from a prompt; stats on stderr. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/belt.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt run -m MODEL [-p PROMPT | -f FILE] [OPTIONS]\n"
	"\n"
	"Generate text greedily; only the generated text goes to stdout.\n"
	"\n"
	"  -m, --model FILE     GGUF model\n"
	"  -p, --prompt TEXT    prompt (default: empty, BOS only)\n"
	"  -f, --file FILE      read the prompt from FILE\n"
	"  -n, --n-predict N    new tokens to generate (default 256; -1: until the context is full)\n"
	"  -c, --ctx-size N     context length (default: the model's)\n"
	"  -t, --threads N      CPU threads (default: one per core)\n"
	"      --backend NAME   backend plugin (default cpu)\n"
	"      --chunk N        tokens per backend submission in decode (default 16)\n"
	"      --kernel OP=VARIANT[,OP=VARIANT]  kernel choices (e.g. attention=split_kv)\n"
	"      --ids            print generated token ids, space-separated, instead of text\n"
	"      --no-bos         do not prepend BOS to the prompt\n"
	"      --ignore-eos     keep generating after an end-of-generation token\n"
	"  -h, --help           this help\n";

struct out {
	bool ids;
	bool first;
	bool tty;
};

static bool on_token(void *ud, int32_t id, const char *text, size_t len)
{
	struct out *o = ud;
	if (o->ids) {
		if (id >= 0)
			printf(o->first ? "%d" : " %d", id);
		o->first = false;
	} else {
		fwrite(text, 1, len, stdout);
	}
	if (o->tty)
		fflush(stdout);
	return true;
}

struct run_opts {
	const char *model, *prompt, *prompt_file, *backend, *kernels;
	long n_predict, n_ctx, threads, chunk;
	bool ids, no_bos, ignore_eos;
};

static int parse(int argc, char **argv, struct run_opts *o)
{
	enum { O_BACKEND = 256, O_IDS, O_NO_BOS, O_CHUNK, O_IGNORE_EOS, O_KERNEL };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"prompt", required_argument, 0, 'p'},
		{"file", required_argument, 0, 'f'}, {"n-predict", required_argument, 0, 'n'},
		{"ctx-size", required_argument, 0, 'c'}, {"threads", required_argument, 0, 't'},
		{"backend", required_argument, 0, O_BACKEND}, {"chunk", required_argument, 0, O_CHUNK},
		{"ids", no_argument, 0, O_IDS}, {"no-bos", no_argument, 0, O_NO_BOS},
		{"ignore-eos", no_argument, 0, O_IGNORE_EOS}, {"kernel", required_argument, 0, O_KERNEL},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	*o = (struct run_opts){.backend = "cpu", .n_predict = 256, .chunk = 16};
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":m:p:f:n:c:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'f': o->prompt_file = optarg; break;
		case 'n': if (!cli_int("run", "-n", optarg, -1, 1L << 24, &o->n_predict)) return CLI_USAGE; break;
		case 'c': if (!cli_int("run", "-c", optarg, 0, 1L << 24, &o->n_ctx)) return CLI_USAGE; break;
		case 't': if (!cli_int("run", "-t", optarg, 1, 1024, &o->threads)) return CLI_USAGE; break;
		case O_CHUNK: if (!cli_int("run", "--chunk", optarg, 1, 4096, &o->chunk)) return CLI_USAGE; break;
		case O_BACKEND: o->backend = optarg; break;
		case O_KERNEL: o->kernels = optarg; break;
		case O_IDS: o->ids = true; break;
		case O_NO_BOS: o->no_bos = true; break;
		case O_IGNORE_EOS: o->ignore_eos = true; break;
		case 'h': fputs(help, stdout); return -1;
		case ':': return cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("run", "-m MODEL is required");
	if (o->prompt && o->prompt_file)
		return cli_usage_error("run", "give -p or -f, not both");
	return 0;
}

static int generate(struct belt_model *m, const struct run_opts *o, const char *text,
		    size_t len, char *err)
{
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)o->n_ctx;
	sp.chunk = (uint32_t)o->chunk;
	struct belt_session *s;
	if (belt_session_create(m, &sp, &s, err, BELT_ERR_SIZE))
		return -1;
	size_t n = 0;
	int32_t *ids = NULL;
	int rc = belt_tok_encode(tok, text, len, !o->no_bos && belt_tok_add_bos(tok), NULL, 0, &n,
				 err, BELT_ERR_SIZE);
	if (rc == 0 && !(ids = malloc((n + 1) * sizeof *ids)))
		rc = belt_errf(err, BELT_ERR_SIZE, "out of memory");
	if (rc == 0)
		rc = belt_tok_encode(tok, text, len, !o->no_bos && belt_tok_add_bos(tok), ids, n, &n,
				     err, BELT_ERR_SIZE);
	if (rc == 0 && n == 0)
		rc = belt_errf(err, BELT_ERR_SIZE, "the prompt is empty and --no-bos is set: nothing to feed the model");
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = o->n_predict < 0 ? 0 : (uint32_t)o->n_predict;
	gp.stop_at_eog = !o->ignore_eos;
	struct out out = {.ids = o->ids, .first = true, .tty = isatty(1)};
	if (rc == 0 && o->n_predict != 0)
		rc = belt_generate(s, ids, n, &gp, on_token, &out, err, BELT_ERR_SIZE);
	if (rc == 0) {
		putchar('\n');
		fflush(stdout);
		const struct belt_stats *st = belt_session_stats(s);
		fprintf(stderr,
			"belt: prompt %u tokens in %.3f s (%.1f tokens/s); decode %u tokens in %.3f s (%.1f tokens/s)\n",
			st->n_prompt, st->prefill_s, st->prefill_s > 0 ? st->n_prompt / st->prefill_s : 0,
			st->n_generated, st->decode_s,
			st->decode_s > 0 && st->n_generated > 1 ? (st->n_generated - 1) / st->decode_s : 0);
	}
	free(ids);
	belt_session_free(s);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[BELT_ERR_SIZE];
	size_t len = 0;
	char *file_text = NULL;
	if (o.prompt_file && !(file_text = cli_read_file(o.prompt_file, &len))) {
		snprintf(err, sizeof err, "%s: cannot read prompt file", o.prompt_file);
		return cli_fail(err);
	}
	const char *text = file_text ? file_text : o.prompt ? o.prompt : "";
	if (!file_text)
		len = strlen(text);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.kernels = o.kernels;
	struct belt_model *m;
	rc = belt_model_load(&mp, &m, err, sizeof err) || generate(m, &o, text, len, err);
	belt_model_free(m);
	free(file_text);
	return rc ? cli_fail(err) : 0;
}
