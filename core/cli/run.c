/* belt run: generate text (or ids) from a prompt; stats on stderr. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt run -m MODEL [-p PROMPT | -f FILE] [OPTIONS]\n"
	"\n"
	"Generate text, greedily unless --temp > 0; only the generated text goes to\n"
	"stdout. Sampling is llama.cpp's: penalties, top-k, top-p, min-p, then a\n"
	"draw at the temperature (doc/samplers.md).\n"
	"\n"
	"  -m, --model FILE     GGUF model\n"
	"  -p, --prompt TEXT    prompt (default: empty, BOS only)\n"
	"  -f, --file FILE      read the prompt from FILE\n"
	"  -n, --n-predict N    new tokens to generate (default 256; -1: until the context is full)\n"
	"  -c, --ctx-size N     context length (default: the model's)\n"
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
	"      --chunk N        tokens per backend submission in decode (default 16)\n"
	"      --kernel OP=VARIANT[,OP=VARIANT]  kernel choices (e.g. attention=split_kv)\n"
	"      --ids            print generated token ids, space-separated, instead of text\n"
	"      --no-bos         do not prepend BOS to the prompt\n"
	"      --ignore-eos     keep generating after an end-of-generation token\n"
	"      --context-shift  when the context is full, drop half of the tokens after the\n"
	"                       first --keep (and BOS) and go on, as llama.cpp does\n"
	"      --keep N         with --context-shift: prompt tokens kept (default 0; -1: all)\n"
	CLI_SAMPLING_HELP
	"      --grammar TEXT   only text of this GBNF grammar (llama.cpp's; doc/grammars.md)\n"
	"      --grammar-file FILE  the same, the grammar read from FILE\n"
	"      --json-schema S  only JSON valid under this JSON Schema: S is a file if one\n"
	"                       of that name exists, else the schema's text (doc/grammars.md)\n"
	"      --draft NAME     speculative decoding with the drafter NAME (ngram; doc/drafting.md):\n"
	"                       the same tokens, fewer passes where the text repeats\n"
	"      --draft-max N    drafted tokens per verification pass at most (default 8)\n"
	"      --draft-options TEXT  the drafter's settings (ngram: min=N,max=N,tree=0|1, default\n"
	"                            min=2,max=4,tree=1; medusa: topk=N,min=P, default\n"
	"                            topk=4,min=0.05)\n"
	"      --draft-heads FILE  medusa: the heads' GGUF side file\n"
	"  -h, --help           this help\n";

/* Set by SIGINT or SIGTERM (to the signal): generation stops after the
 * token being written. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* SIGINT and SIGTERM stop generation cleanly; SA_RESETHAND: a second one
 * ends belt at once; SA_RESTART: a write in progress is not cut short. A
 * signal ignored from the start (SIGINT of a background job) stays so. */
static void catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND | SA_RESTART}, old;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		if (sigaction(sigs[i], &sa, &old) == 0 && old.sa_handler == SIG_IGN)
			sigaction(sigs[i], &old, NULL);
}

struct out {
	bool ids;
	bool first;
	bool tty;
	uint32_t flush_every, n; /* flush each flush_every tokens */
	int werr;		 /* errno of the first failed write; 0: none */
};

/* Note a failed write (ok false, or the stream's error flag). */
static void check_write(struct out *o, bool ok)
{
	if ((!ok || ferror(stdout)) && !o->werr)
		o->werr = errno ? errno : EIO;
}

/* Write the token, flushing each chunk's worth (each token on a terminal)
 * so that a reader that left or a full disk stops generation soon. */
static bool on_token(void *ud, int32_t id, const char *text, size_t len)
{
	struct out *o = ud;
	errno = 0;
	if (o->ids) {
		if (id >= 0)
			check_write(o, printf(o->first ? "%d" : " %d", id) >= 0);
		o->first = false;
	} else if (len) {
		check_write(o, fwrite(text, 1, len, stdout) == len);
	}
	if (!o->werr && (o->tty || ++o->n % o->flush_every == 0))
		check_write(o, fflush(stdout) == 0);
	return !o->werr && !stop_signal;
}

struct run_opts {
	const char *model, *prompt, *prompt_file, *backend, *kernels;
	const char *grammar, *grammar_file; /* --grammar TEXT, --grammar-file FILE */
	const char *json_schema;	    /* --json-schema FILE or TEXT */
	const char *draft, *draft_options;  /* --draft NAME, --draft-options TEXT */
	const char *draft_heads;	    /* --draft-heads FILE */
	long draft_max;
	long n_predict, n_ctx, n_batch, n_ubatch, threads, chunk, device, keep;
	int type_k, type_v;
	bool ids, no_bos, ignore_eos, profile, context_shift, swa_full;
	bool seed_given; /* every uint64 is a seed, BELT_SEED_RANDOM too */
	struct belt_sampling samp;
};

/* The options; -1 after --help, CLI_USAGE after a usage message. */
static int parse(int argc, char **argv, struct run_opts *o)
{
	enum { O_BACKEND = 256, O_IDS, O_NO_BOS, O_CHUNK, O_IGNORE_EOS, O_KERNEL, O_DEVICE,
	       O_PROFILE, O_CTK, O_CTV, O_GRAMMAR, O_GRAMMAR_FILE, O_JSON_SCHEMA,
	       O_DRAFT, O_DRAFT_MAX, O_DRAFT_OPTIONS, O_DRAFT_HEADS, O_CONTEXT_SHIFT, O_KEEP, O_SWA_FULL };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"prompt", required_argument, 0, 'p'},
		{"file", required_argument, 0, 'f'}, {"n-predict", required_argument, 0, 'n'},
		{"ctx-size", required_argument, 0, 'c'}, {"threads", required_argument, 0, 't'},
		{"batch-size", required_argument, 0, 'b'}, {"ubatch-size", required_argument, 0, 'u'},
		{"backend", required_argument, 0, O_BACKEND}, {"chunk", required_argument, 0, O_CHUNK},
		{"ids", no_argument, 0, O_IDS}, {"no-bos", no_argument, 0, O_NO_BOS},
		{"ignore-eos", no_argument, 0, O_IGNORE_EOS}, {"kernel", required_argument, 0, O_KERNEL},
		{"device", required_argument, 0, O_DEVICE}, {"profile", no_argument, 0, O_PROFILE},
		CLI_SAMPLING_OPTIONS,
		{"cache-type-k", required_argument, 0, O_CTK},
		{"cache-type-v", required_argument, 0, O_CTV},
		{"swa-full", no_argument, 0, O_SWA_FULL},
		{"grammar", required_argument, 0, O_GRAMMAR},
		{"grammar-file", required_argument, 0, O_GRAMMAR_FILE},
		{"json-schema", required_argument, 0, O_JSON_SCHEMA},
		{"draft", required_argument, 0, O_DRAFT},
		{"draft-max", required_argument, 0, O_DRAFT_MAX},
		{"draft-options", required_argument, 0, O_DRAFT_OPTIONS},
		{"draft-heads", required_argument, 0, O_DRAFT_HEADS},
		{"context-shift", no_argument, 0, O_CONTEXT_SHIFT},
		{"keep", required_argument, 0, O_KEEP},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	*o = (struct run_opts){.backend = "cpu", .n_predict = 256, .n_batch = 2048, .n_ubatch = 512,
			       .chunk = 16, .device = -1, .type_k = BELT_TYPE_F16,
			       .type_v = BELT_TYPE_F16};
	belt_sampling_default(&o->samp);
	o->samp.temp = 0.0f; /* greedy unless --temp is given */
	long lv;
	const char *v;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c, li = -1;
	while ((c = getopt_long(argc, argv, ":m:p:f:n:c:b:u:t:h", opts, &li)) != -1) {
		int sampling = cli_sampling_option("run", c, optarg, &o->samp, &o->seed_given);
		if (sampling < 0)
			return CLI_USAGE;
		if (sampling > 0) {
			li = -1;
			continue;
		}
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'p': o->prompt = optarg; break;
		case 'f': o->prompt_file = optarg; break;
		case 'n': if (!cli_int("run", "-n", optarg, -1, 1L << 24, &o->n_predict)) return CLI_USAGE; break;
		case 'c':
			lv = cli_cache_type_short("run", argc, argv, li >= 0, &o->type_k, &o->type_v);
			if (lv < 0)
				return CLI_USAGE;
			if (lv)
				break;
			if (!cli_int("run", "-c", optarg, 0, 1L << 24, &o->n_ctx)) return CLI_USAGE;
			if (o->n_ctx == 1)
				return cli_usage_error("run", "-c: expected 0 (the model's context) or 2..%ld, got '%s'",
						       1L << 24, optarg);
			break;
		case 'b': if (!cli_int("run", "-b", optarg, 1, CLI_MAX_BATCH, &o->n_batch)) return CLI_USAGE; break;
		case 'u':
			if (!(v = cli_ubatch_value("run", argc, argv, li >= 0)) ||
			    !cli_int("run", "-ub", v, 1, CLI_MAX_BATCH, &o->n_ubatch))
				return CLI_USAGE;
			break;
		case 't': if (!cli_int("run", "-t", optarg, 1, 1024, &o->threads)) return CLI_USAGE; break;
		case O_CHUNK: if (!cli_int("run", "--chunk", optarg, 1, 4096, &o->chunk)) return CLI_USAGE; break;
		case O_DEVICE: if (!cli_int("run", "--device", optarg, 0, 1023, &o->device)) return CLI_USAGE; break;
		case O_PROFILE: o->profile = true; break;
		case O_BACKEND: o->backend = optarg; break;
		case O_KERNEL: o->kernels = optarg; break;
		case O_CTK: if (!cli_cache_type("run", "--cache-type-k", optarg, &o->type_k)) return CLI_USAGE; break;
		case O_CTV: if (!cli_cache_type("run", "--cache-type-v", optarg, &o->type_v)) return CLI_USAGE; break;
		case O_IDS: o->ids = true; break;
		case O_SWA_FULL: o->swa_full = true; break;
		case O_NO_BOS: o->no_bos = true; break;
		case O_IGNORE_EOS: o->ignore_eos = true; break;
		case O_CONTEXT_SHIFT: o->context_shift = true; break;
		case O_KEEP: if (!cli_int("run", "--keep", optarg, -1, 1L << 24, &o->keep)) return CLI_USAGE; break;
		case O_GRAMMAR: o->grammar = optarg; break;
		case O_GRAMMAR_FILE: o->grammar_file = optarg; break;
		case O_JSON_SCHEMA: o->json_schema = optarg; break;
		case O_DRAFT: o->draft = optarg; break;
		case O_DRAFT_OPTIONS: o->draft_options = optarg; break;
		case O_DRAFT_HEADS: o->draft_heads = optarg; break;
		case O_DRAFT_MAX: if (!cli_int("run", "--draft-max", optarg, 1, CLI_MAX_BATCH - 1, &o->draft_max)) return CLI_USAGE; break;
		case 'h': fputs(help, stdout); return -1;
		case ':': return cli_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
		li = -1;
	}
	if (optind < argc)
		return cli_usage_error("run", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("run", "-m MODEL is required");
	if (o->prompt && o->prompt_file)
		return cli_usage_error("run", "give -p or -f, not both");
	if (o->grammar && o->grammar_file)
		return cli_usage_error("run", "give --grammar or --grammar-file, not both");
	if (o->json_schema && (o->grammar || o->grammar_file))
		return cli_usage_error("run", "give --json-schema or a grammar, not both");
	if ((o->draft_max || o->draft_options || o->draft_heads) && !o->draft)
		return cli_usage_error("run", "--draft-max, --draft-options and --draft-heads need "
				       "--draft NAME");
	if (o->keep && !o->context_shift)
		return cli_usage_error("run", "--keep %ld needs --context-shift", o->keep);
	if (o->draft && (o->grammar || o->grammar_file || o->json_schema))
		return cli_usage_error("run", "--draft does not combine with a grammar yet: give one of them");
	if (o->draft_max && o->draft_max >= o->n_ubatch)
		return cli_usage_error("run", "--draft-max %ld: a verification pass of %ld rows needs -ub of at least %ld (it is %ld)",
				       o->draft_max, o->draft_max + 1, o->draft_max + 1, o->n_ubatch);
	char err[BELT_ERR_SIZE];
	if (belt_sampling_check(&o->samp, err, sizeof err))
		return cli_usage_error("run", "%s", err);
	if (o->device >= 0)
		return cli_check_device("run", o->backend, o->device);
	return 0;
}

/* Say why generation stopped where the reason is not plain; then the
 * stats line. */
static void report(const struct belt_session *s)
{
	const struct belt_stats *st = belt_session_stats(s);
	if (stop_signal)
		cli_error("run", "stopped by %s after %u tokens", stop_signal == SIGINT ? "SIGINT" : "SIGTERM",
			  st->n_generated);
	else if (st->stop == BELT_STOP_CONTEXT_FULL)
		cli_error("run", "context full after %u tokens (-c %u)", st->n_generated,
			  belt_session_n_ctx(s));
	else if (st->stop == BELT_STOP_GRAMMAR)
		cli_error("run", "the grammar allows no token after %u tokens", st->n_generated);
	fprintf(stderr,
		"belt: prompt %u tokens in %.3f s (%.1f tokens/s); decode %u tokens in %.3f s (%.1f tokens/s)\n",
		st->n_prompt, st->prefill_s, st->prefill_s > 0 ? st->n_prompt / st->prefill_s : 0,
		st->n_generated, st->decode_s,
		st->decode_s > 0 && st->n_generated > 1 ? (st->n_generated - 1) / st->decode_s : 0);
	if (st->n_verify)
		fprintf(stderr,
			"belt: drafts: %u verification passes, %u of %u drafted tokens accepted "
			"(%u off a tree's first chain), %.2f tokens per pass\n",
			st->n_verify, st->n_accepted, st->n_drafted, st->n_moved,
			(double)(st->n_accepted + st->n_verify) / st->n_verify);
	if (st->n_forced)
		fprintf(stderr, "belt: grammar: %u of the %u tokens forced (run in batches, no logits of their own)\n",
			st->n_forced, st->n_generated);
	if (st->n_shifts)
		fprintf(stderr, "belt: the context was shifted %u times (-c %u)\n", st->n_shifts,
			belt_session_n_ctx(s));
}

/* Compile --grammar, --grammar-file or --json-schema against the model's
 * vocabulary, read from its GGUF before the weights load, so that a bad
 * grammar is said at once; *tok stays for the grammar's life. The exit
 * status. */
static int load_grammar(const struct run_opts *o, struct belt_tokenizer **tok,
			struct belt_grammar **out)
{
	char err[CLI_ERR_SIZE];
	size_t len = 0;
	char *file_text = NULL;
	/* --json-schema: a file if there is one of that name, else the text */
	const char *file = o->grammar_file, *flag = o->json_schema ? "--json-schema" : "--grammar";
	struct stat sb;
	if (o->json_schema && stat(o->json_schema, &sb) == 0 && !S_ISDIR(sb.st_mode))
		file = o->json_schema;
	else if (o->json_schema && o->json_schema[strspn(o->json_schema, " \t\r\n")] != '{')
		return cli_error("run", "--json-schema %s: %s (nor is it a schema's text, which begins "
				 "with '{')", o->json_schema, strerror(errno));
	if (file && !(file_text = cli_read_file(file, &len)))
		return cli_error("run", "%s %s: %s", o->json_schema ? "--json-schema" : "--grammar-file",
				 file, strerror(errno));
	const char *text = file_text ? file_text : o->json_schema ? o->json_schema : o->grammar;
	if (!file_text)
		len = strlen(text);
	int rc = 0;
	struct belt_gguf *g = belt_gguf_open(o->model, err, sizeof err);
	if (!g || belt_tok_load(g, tok, err, sizeof err)) {
		rc = cli_fail(err);
	} else if (belt_grammar_new(*tok, "gbnf", o->json_schema ? "json-schema" : "gbnf", text, len,
				    out, err, sizeof err)) {
		/* file:line:col: as compilers say it, when the message has a place */
		const char *where = file_text ? file : flag;
		rc = cli_error("run", "%s:%s%s", where, *err >= '0' && *err <= '9' ? "" : " ", err);
	}
	belt_gguf_close(g);
	free(file_text);
	return rc;
}

/* Generate and print; the exit status (after the message, if any). */
static int generate(struct belt_model *m, const struct run_opts *o, struct belt_grammar *grammar,
		    const char *text, size_t len)
{
	char err[CLI_ERR_SIZE];
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)o->n_ctx;
	sp.chunk = (uint32_t)o->chunk;
	sp.n_batch = (uint32_t)o->n_batch;
	sp.n_ubatch = (uint32_t)o->n_ubatch;
	sp.type_k = o->type_k;
	sp.type_v = o->type_v;
	sp.swa_full = o->swa_full;
	struct belt_session *s;
	struct belt_drafter *drafter = NULL;
	char dopts[4200];
	const char *dopt = o->draft_heads || o->draft_options
				   ? cli_draft_options("run", o->draft_heads, o->draft_options,
						       dopts, sizeof dopts)
				   : NULL;
	if ((o->draft_heads || o->draft_options) && !dopt)
		return CLI_USAGE;
	if (o->draft && belt_drafter_new(m, o->draft, dopt, &drafter, err, sizeof err))
		return cli_error("run", "--draft %s: %s", o->draft, err);
	if (belt_session_create(m, &sp, &s, err, sizeof err)) {
		belt_drafter_free(drafter);
		return cli_fail(err);
	}
	cli_model_warnings("run", m, belt_session_n_ctx(s));
	size_t n = 0;
	int32_t *ids = NULL;
	int rc = belt_tok_encode(tok, text, len, !o->no_bos && belt_tok_add_bos(tok), NULL, 0, &n,
				 err, sizeof err);
	if (rc == 0 && !(ids = malloc((n + 1) * sizeof *ids)))
		rc = belt_errf(err, sizeof err, "out of memory");
	if (rc == 0)
		rc = belt_tok_encode(tok, text, len, !o->no_bos && belt_tok_add_bos(tok), ids, n, &n,
				     err, sizeof err);
	if (rc == 0 && n == 0)
		rc = belt_errf(err, sizeof err, "the prompt is empty and --no-bos is set: nothing to feed the model");
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = o->n_predict < 0 ? 0 : (uint32_t)o->n_predict;
	gp.stop_at_eog = !o->ignore_eos;
	struct belt_sampling samp = o->samp;
	cli_sampling_seed(&samp, o->seed_given);
	gp.sampling = &samp;
	gp.grammar = grammar;
	gp.drafter = drafter;
	gp.draft_max = (uint32_t)o->draft_max;
	/* llama.cpp's --keep: N prompt tokens after BOS, which stays too */
	gp.context_shift = o->context_shift;
	gp.n_keep = belt_keep_tokens(tok, ids, n, o->keep);
	struct out out = {.ids = o->ids, .first = true, .tty = isatty(1),
			  .flush_every = (uint32_t)o->chunk};
	if (rc == 0 && o->n_predict != 0) {
		catch_signals();
		rc = belt_generate(s, ids, n, &gp, on_token, &out, err, sizeof err);
	}
	if (rc == 0) {
		errno = 0;
		if (!out.werr)
			check_write(&out, putchar('\n') != EOF && fflush(stdout) == 0);
		if (out.werr)
			rc = cli_error("run", "cannot write the output: %s (stopped after %u tokens)",
				       strerror(out.werr), belt_session_stats(s)->n_generated);
		else
			report(s);
	} else {
		rc = cli_fail(err);
	}
	free(ids);
	belt_session_free(s);
	belt_drafter_free(drafter);
	return rc == 0 && stop_signal ? 128 + stop_signal : rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[CLI_ERR_SIZE];
	size_t len = 0;
	char *file_text = NULL;
	if (o.prompt_file && !(file_text = cli_read_file(o.prompt_file, &len)))
		return cli_error("run", "-f %s: %s", o.prompt_file, strerror(errno));
	const char *text = file_text ? file_text : o.prompt ? o.prompt : "";
	if (!file_text)
		len = strlen(text);
	struct belt_tokenizer *gtok = NULL;
	struct belt_grammar *grammar = NULL;
	if ((o.grammar || o.grammar_file || o.json_schema) &&
	    (rc = load_grammar(&o, &gtok, &grammar))) {
		belt_tok_free(gtok);
		free(file_text);
		return rc;
	}
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.kernels = o.kernels;
	mp.device = (int)o.device;
	mp.profile = o.profile;
	struct belt_model *m;
	rc = belt_model_load(&mp, &m, err, sizeof err) ? cli_fail(err)
						       : generate(m, &o, grammar, text, len);
	belt_model_free(m);
	belt_grammar_free(grammar);
	belt_tok_free(gtok);
	free(file_text);
	return rc;
}

const char *cli_draft_options(const char *cmd, const char *heads, const char *options, char *buf,
			      size_t bufsz)
{
	int n = heads && options ? snprintf(buf, bufsz, "heads=%s,%s", heads, options)
		: heads	     ? snprintf(buf, bufsz, "heads=%s", heads)
			     : snprintf(buf, bufsz, "%s", options ? options : "");
	if (n < 0 || (size_t)n >= bufsz || (heads && strchr(heads, ','))) {
		cli_usage_error(cmd, "--draft-heads '%s': expected a file name without commas, "
				"of at most %zu bytes with the options", heads ? heads : "",
				bufsz - 1);
		return NULL;
	}
	return buf;
}
