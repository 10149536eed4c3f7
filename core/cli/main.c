/* belt: entry point and subcommand dispatch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/backend.h"
#include "belt/draft.h"
#include "belt/grammar.h"
#include "belt/plugin.h"
#include "belt/sampler.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: belt COMMAND [OPTIONS]\n"
	"\n"
	"commands:\n"
	"  run         generate text from a prompt\n"
	"  info        show a model's metadata, hyperparameters, tensors and plugins\n"
	"  tokenize    show how a text splits into tokens\n"
	"  bench       measure prompt and generation speed\n"
	"  perplexity  score a text file as llama.cpp's llama-perplexity does\n"
	"  quantize    write a model's weights in a quantized type (Q4_K_M, Q8_0, ...)\n"
	"  template    render a chat template for a conversation (JSON messages)\n"
	"  chat        chat with a model in the terminal\n"
	"  serve       an OpenAI-compatible HTTP server (chat, completions, a chat page)\n"
	"  version     the version and the plugin ABIs (also --version)\n"
	"\n"
	"belt COMMAND --help describes each command.\n";

bool cli_int(const char *cmd, const char *opt, const char *s, long min, long max,
	     long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max) {
		cli_usage_error(cmd, "%s: expected an integer in %ld..%ld, got '%s'", opt, min, max, s);
		return false;
	}
	*out = v;
	return true;
}

bool cli_float(const char *cmd, const char *opt, const char *s, float *out)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	/* ERANGE on underflow only rounds; on overflow d is HUGE_VAL */
	float f = (float)d;
	if (end == s || *end || !isfinite(f)) {
		cli_usage_error(cmd, "%s: expected a finite number, got '%s'", opt, s);
		return false;
	}
	*out = f;
	return true;
}

const char *cli_ubatch_value(const char *cmd, int argc, char **argv, bool long_form)
{
	if (long_form)
		return optarg;
	if (strcmp(argv[optind - 1], "-ub")) {
		cli_usage_error(cmd, "unknown option '-u': expected -ub N or --ubatch-size N");
		return NULL;
	}
	if (optind >= argc) {
		cli_usage_error(cmd, "option '-ub' needs a value");
		return NULL;
	}
	return argv[optind++];
}

bool cli_cache_type(const char *cmd, const char *opt, const char *s, int *out)
{
	static const int types[] = {BELT_TYPE_F32, BELT_TYPE_F16, BELT_TYPE_Q8_0};
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (!strcmp(s, belt_type_name(types[i]))) {
			*out = types[i];
			return true;
		}
	cli_usage_error(cmd, "%s: expected f32, f16 or q8_0, got '%s'", opt, s);
	return false;
}

int cli_cache_type_short(const char *cmd, int argc, char **argv, bool long_form, int *type_k,
			 int *type_v)
{
	const char *arg = argv[optind - 1];
	if (long_form || (strcmp(arg, "-ctk") && strcmp(arg, "-ctv")))
		return 0;
	if (optind >= argc) {
		cli_usage_error(cmd, "option '%s' needs a value", arg);
		return -1;
	}
	return cli_cache_type(cmd, arg, argv[optind++], arg[3] == 'k' ? type_k : type_v) ? 1 : -1;
}

char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int bad = 0;
	while (buf) {
		errno = 0;
		n += fread(buf + n, 1, cap - n - 1, f);
		if (ferror(f))
			bad = errno ? errno : EIO;
		if (n < cap - 1 || bad)
			break;
		char *grown = realloc(buf, cap *= 2);
		if (!grown)
			free(buf);
		buf = grown;
	}
	if (!buf)
		bad = ENOMEM;
	fclose(f);
	if (bad) {
		free(buf);
		errno = bad;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The package and the plugin ABIs this belt loads (oldest .. newest). */
static int version(void)
{
	printf("belt %s\n", PACKAGE_VERSION);
	printf("plugin ABI %d (loads %d .. %d)\n", BELT_PLUGIN_ABI, BELT_PLUGIN_ABI_MIN,
	       BELT_PLUGIN_ABI);
	printf("backend ABI %d (loads %d .. %d)\n", BELT_BACKEND_ABI, BELT_BACKEND_ABI_MIN,
	       BELT_BACKEND_ABI);
	printf("sampler ABI %d (loads %d .. %d)\n", BELT_SAMPLER_ABI, BELT_SAMPLER_ABI_MIN,
	       BELT_SAMPLER_ABI);
	printf("grammar ABI %d (loads %d .. %d)\n", BELT_GRAMMAR_ABI, BELT_GRAMMAR_ABI_MIN,
	       BELT_GRAMMAR_ABI);
	printf("draft ABI %d (loads %d .. %d)\n", BELT_DRAFT_ABI, BELT_DRAFT_ABI_MIN,
	       BELT_DRAFT_ABI);
	return 0;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return CLI_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version"))
		return version();
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "perplexity"))
		return cmd_perplexity(argc - 1, argv + 1);
	if (!strcmp(cmd, "quantize"))
		return cmd_quantize(argc - 1, argv + 1);
	if (!strcmp(cmd, "tokenize"))
		return cmd_tokenize(argc - 1, argv + 1);
	if (!strcmp(cmd, "template"))
		return cmd_template(argc - 1, argv + 1);
	if (!strcmp(cmd, "chat"))
		return cmd_chat(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc - 1, argv + 1);
	cli_error(NULL, "unknown command '%s'", cmd);
	fprintf(stderr, "\n%s", usage);
	return CLI_USAGE;
}

int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);
	/* what is still buffered, and any write that failed unnoticed */
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (rc == 0)
			rc = cli_error(NULL, "cannot write the output: %s",
				       strerror(errno ? errno : EIO));
	}
	return rc;
}
