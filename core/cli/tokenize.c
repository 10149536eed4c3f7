/* belt tokenize: ids and pieces of a text; works on vocabulary-only GGUFs. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt tokenize -m MODEL (-p TEXT | -f FILE) [--ids] [--no-bos]\n"
	"                     [--parse-special]\n"
	"\n"
	"Print each token as 'id -> 'piece'' on its own line, or with --ids the\n"
	"ids alone, space-separated. MODEL may be a vocabulary-only GGUF.\n"
	"--parse-special reads special-token text such as <|begin_of_text|> as\n"
	"that one token; without it such text is tokenized literally.\n";

static int tokenize(const char *model, const char *text, size_t len, bool ids_only,
		    bool no_bos, bool parse_special, char *err)
{
	struct belt_gguf *g = belt_gguf_open(model, err, CLI_ERR_SIZE);
	if (!g)
		return -1;
	struct belt_tokenizer *tok = NULL;
	int32_t *ids = NULL;
	size_t n = 0;
	int rc = belt_tok_load(g, &tok, err, CLI_ERR_SIZE);
	bool add_bos = rc == 0 && !no_bos && belt_tok_add_bos(tok);
	unsigned flags = (add_bos ? BELT_TOK_ADD_BOS : 0) |
			 (parse_special ? BELT_TOK_PARSE_SPECIAL : 0);
	if (rc == 0)
		rc = belt_tok_encode_flags(tok, text, len, flags, NULL, 0, &n, err, CLI_ERR_SIZE);
	if (rc == 0 && !(ids = malloc((n + 1) * sizeof *ids)))
		rc = belt_errf(err, CLI_ERR_SIZE, "out of memory");
	if (rc == 0)
		rc = belt_tok_encode_flags(tok, text, len, flags, ids, n, &n, err, CLI_ERR_SIZE);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (ids_only)
			printf(i ? " %d" : "%d", ids[i]);
		else
			printf("%6d -> '%s'\n", ids[i], belt_tok_piece(tok, ids[i]));
	}
	if (rc == 0 && ids_only)
		putchar('\n');
	free(ids);
	belt_tok_free(tok);
	belt_gguf_close(g);
	return rc;
}

int cmd_tokenize(int argc, char **argv)
{
	enum { O_IDS = 256, O_NO_BOS, O_PARSE_SPECIAL };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"prompt", required_argument, 0, 'p'},
		{"file", required_argument, 0, 'f'}, {"ids", no_argument, 0, O_IDS},
		{"no-bos", no_argument, 0, O_NO_BOS}, {"parse-special", no_argument, 0, O_PARSE_SPECIAL},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *model = NULL, *prompt = NULL, *file = NULL;
	bool ids_only = false, no_bos = false, parse_special = false;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c;
	while ((c = getopt_long(argc, argv, ":m:p:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': model = optarg; break;
		case 'p': prompt = optarg; break;
		case 'f': file = optarg; break;
		case O_IDS: ids_only = true; break;
		case O_NO_BOS: no_bos = true; break;
		case O_PARSE_SPECIAL: parse_special = true; break;
		case 'h': fputs(help, stdout); return 0;
		case ':': return cli_usage_error("tokenize", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("tokenize", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("tokenize", "unexpected argument '%s'", argv[optind]);
	if (!model)
		return cli_usage_error("tokenize", "-m MODEL is required");
	if (!prompt == !file)
		return cli_usage_error("tokenize", "give exactly one of -p TEXT or -f FILE");
	char err[CLI_ERR_SIZE];
	size_t len = prompt ? strlen(prompt) : 0;
	char *text = file ? cli_read_file(file, &len) : NULL;
	if (file && !text)
		return cli_error("tokenize", "-f %s: %s", file, strerror(errno));
	int rc = tokenize(model, text ? text : prompt, len, ids_only, no_bos, parse_special, err);
	free(text);
	return rc ? cli_fail(err) : 0;
}
