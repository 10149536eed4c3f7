/* belt serve: the OpenAI-compatible HTTP server (core/serve/, doc/serve.md);
 * this file reads the command line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "serve/serve.h"

static const char help[] =
	"usage: belt serve -m MODEL [OPTIONS]\n"
	"\n"
	"Serve MODEL over HTTP with OpenAI's API: POST /v1/chat/completions and\n"
	"/v1/completions (streamed with \"stream\": true), GET /v1/models, /health,\n"
	"and a chat page at /. SIGINT or SIGTERM stops it: requests in flight end\n"
	"with 503, and it exits 0. doc/serve.md has the fields and the errors.\n"
	"\n"
	"  -m, --model FILE       GGUF model\n"
	"      --host ADDR        address to listen on (default 127.0.0.1; 0.0.0.0: every one)\n"
	"      --port N           port (default 8080; 0: any free one, named on stderr)\n"
	"  -np, --parallel N      requests generated at once, each in its own slot (default 1);\n"
	"                         more wait in a queue\n"
	"      --api-key KEY      every /v1 request needs the header Authorization: Bearer KEY\n"
	"      --api-key-file FILE  the same, the key the first line of FILE\n"
	"  -c, --ctx-size N       context of each slot (default: the model's)\n"
	"      --chat-template FILE  Jinja chat template (default: the model's tokenizer.chat_template)\n"
	"  -t, --threads N        CPU threads (default: one per core)\n"
	"      --backend NAME     backend plugin (default cpu)\n"
	"      --device N         the backend's device N (default: its choice)\n"
	"      --kernel OP=VARIANT[,OP=VARIANT]  kernel choices\n"
	"      --chunk N          tokens per backend submission of a slot decoding alone (default 16)\n"
	"      --max-body N       largest request body in bytes (default 8388608)\n"
	"      --max-connections N  connections at once (default 64)\n"
	"      --context-shift    a full context drops half of the tokens after the first\n"
	"                         --keep (and BOS) and the answer goes on (default: it ends)\n"
	"      --keep N           with --context-shift: prompt tokens kept (default 0; -1: all)\n"
	"  -h, --help             this help\n";

/* The key: the first line of path, without its newline. */
static char *read_key(const char *path)
{
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text) {
		cli_error("serve", "--api-key-file %s: %s", path, strerror(errno));
		return NULL;
	}
	text[strcspn(text, "\r\n")] = 0;
	if (!*text) {
		cli_error("serve", "--api-key-file %s: the first line is empty", path);
		free(text);
		return NULL;
	}
	return text;
}

int cmd_serve(int argc, char **argv)
{
	enum { O_HOST = 256, O_PORT, O_KEY, O_KEY_FILE, O_TEMPLATE, O_BACKEND, O_DEVICE, O_KERNEL,
	       O_CHUNK, O_MAX_BODY, O_MAX_CONNS, O_CONTEXT_SHIFT, O_KEEP };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"host", required_argument, 0, O_HOST},
		{"port", required_argument, 0, O_PORT}, {"parallel", required_argument, 0, 'n'},
		{"api-key", required_argument, 0, O_KEY},
		{"api-key-file", required_argument, 0, O_KEY_FILE},
		{"ctx-size", required_argument, 0, 'c'},
		{"chat-template", required_argument, 0, O_TEMPLATE},
		{"threads", required_argument, 0, 't'}, {"backend", required_argument, 0, O_BACKEND},
		{"device", required_argument, 0, O_DEVICE}, {"kernel", required_argument, 0, O_KERNEL},
		{"chunk", required_argument, 0, O_CHUNK},
		{"max-body", required_argument, 0, O_MAX_BODY},
		{"max-connections", required_argument, 0, O_MAX_CONNS},
		{"context-shift", no_argument, 0, O_CONTEXT_SHIFT},
		{"keep", required_argument, 0, O_KEEP},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	struct serve_config cfg = {.backend = "cpu", .host = "127.0.0.1", .port = 8080,
				   .parallel = 1, .device = -1, .chunk = 16, .max_body = 8u << 20,
				   .max_conns = 64};
	const char *key_file = NULL;
	long v;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c, li = -1;
	while ((c = getopt_long(argc, argv, ":m:n:c:t:h", opts, &li)) != -1) {
		switch (c) {
		case 'm': cfg.model = optarg; break;
		case O_HOST: cfg.host = optarg; break;
		case O_PORT: if (!cli_int("serve", "--port", optarg, 0, 65535, &v)) return CLI_USAGE; cfg.port = (int)v; break;
		case 'n':
			/* llama.cpp's -np N: getopt reads it as -n with the value "p" */
			if (li < 0 && strcmp(argv[optind - 1], "-np"))
				return cli_usage_error("serve", "unknown option '-n': expected -np N or --parallel N");
			if (li < 0 && optind >= argc)
				return cli_usage_error("serve", "option '-np' needs a value");
			if (!cli_int("serve", "--parallel", li < 0 ? argv[optind++] : optarg, 1, 256, &v))
				return CLI_USAGE;
			cfg.parallel = (int)v;
			break;
		case O_KEY: cfg.api_key = optarg; break;
		case O_KEY_FILE: key_file = optarg; break;
		case 'c':
			if (!cli_int("serve", "-c", optarg, 0, 1L << 24, &v)) return CLI_USAGE;
			if (v == 1)
				return cli_usage_error("serve", "-c: expected 0 (the model's context) or 2..%ld, got '%s'",
						       1L << 24, optarg);
			cfg.n_ctx = (uint32_t)v;
			break;
		case O_TEMPLATE: cfg.chat_template = optarg; break;
		case 't': if (!cli_int("serve", "-t", optarg, 1, 1024, &v)) return CLI_USAGE; cfg.threads = (int)v; break;
		case O_BACKEND: cfg.backend = optarg; break;
		case O_DEVICE: if (!cli_int("serve", "--device", optarg, 0, 1023, &v)) return CLI_USAGE; cfg.device = (int)v; break;
		case O_KERNEL: cfg.kernels = optarg; break;
		case O_CHUNK: if (!cli_int("serve", "--chunk", optarg, 1, 4096, &v)) return CLI_USAGE; cfg.chunk = (uint32_t)v; break;
		case O_MAX_BODY: if (!cli_int("serve", "--max-body", optarg, 1024, 1L << 30, &v)) return CLI_USAGE; cfg.max_body = (size_t)v; break;
		case O_MAX_CONNS: if (!cli_int("serve", "--max-connections", optarg, 1, 4096, &v)) return CLI_USAGE; cfg.max_conns = (int)v; break;
		case O_CONTEXT_SHIFT: cfg.context_shift = true; break;
		case O_KEEP: if (!cli_int("serve", "--keep", optarg, -1, 1L << 24, &cfg.keep)) return CLI_USAGE; break;
		case 'h': fputs(help, stdout); return 0;
		case ':': return cli_usage_error("serve", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("serve", "unknown option '%s'", argv[optind - 1]);
		}
		li = -1;
	}
	if (optind < argc)
		return cli_usage_error("serve", "unexpected argument '%s'", argv[optind]);
	if (!cfg.model)
		return cli_usage_error("serve", "-m MODEL is required");
	if (cfg.keep && !cfg.context_shift)
		return cli_usage_error("serve", "--keep %ld needs --context-shift", cfg.keep);
	if (cfg.api_key && key_file)
		return cli_usage_error("serve", "give --api-key or --api-key-file, not both");
	if (cfg.api_key && !*cfg.api_key)
		return cli_usage_error("serve", "--api-key: the key is empty");
	char *key = NULL;
	if (key_file && !(cfg.api_key = key = read_key(key_file)))
		return CLI_FAIL;
	if (cfg.device >= 0) {
		int rc = cli_check_device("serve", cfg.backend, cfg.device);
		if (rc) {
			free(key);
			return rc;
		}
	}
	int rc = serve_run(&cfg) ? CLI_FAIL : 0;
	free(key);
	return rc;
}
