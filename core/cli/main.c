/* belt: entry point and subcommand dispatch. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	"\n"
	"belt COMMAND --help describes each command.\n";

int cli_fail(const char *msg)
{
	fprintf(stderr, "belt: %s\n", msg);
	return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "belt %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see belt %s --help)\n", cmd);
	return CLI_USAGE;
}

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
	float f = strtof(s, &end);
	if (errno || end == s || *end) {
		cli_usage_error(cmd, "%s expects a number, got '%s'", opt, s);
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

char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		char *grown = realloc(buf, cap *= 2);
		if (!grown)
			free(buf);
		buf = grown;
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

int main(int argc, char **argv)
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
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "perplexity"))
		return cmd_perplexity(argc - 1, argv + 1);
	if (!strcmp(cmd, "tokenize"))
		return cmd_tokenize(argc - 1, argv + 1);
	fprintf(stderr, "belt: unknown command '%s'\n\n%s", cmd, usage);
	return CLI_USAGE;
}
