/* belt quantize: write a GGUF's F32/F16/BF16 weights in a quantized type
 * or one of llama.cpp's default mixes (doc/quantize.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "belt/quant.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt quantize [--pure] IN.gguf OUT.gguf TYPE [THREADS]\n"
	"\n"
	"Write IN's F32, F16 and BF16 matrices as TYPE into OUT, byte for byte as\n"
	"llama.cpp's llama-quantize does without an importance matrix. Norms and\n"
	"other 1-D tensors are copied; the metadata is copied with\n"
	"general.file_type set. TYPE is one of:\n"
	"  Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS\n"
	"  Q4_K_M Q5_K_M (mixes), Q3_K_S Q4_K_S Q5_K_S (= Q3_K Q4_K Q5_K)\n"
	"Like llama-quantize, output.weight (or a tied token_embd) is Q6_K and\n"
	"the mixes promote some attn_v and ffn_down; --pure writes every matrix\n"
	"in TYPE. THREADS (default 1) quantize rows in parallel; the bytes do not\n"
	"depend on it.\n";

struct progress {
	bool tty;
};

static void on_tensor(void *ud, uint64_t i, uint64_t n, const char *name, enum belt_type from,
		      enum belt_type to)
{
	const struct progress *p = ud;
	if (!p->tty)
		return;
	fprintf(stderr, "\r\033[K[%3llu/%3llu] %-40.40s %s -> %s", (unsigned long long)i + 1,
		(unsigned long long)n, name, belt_type_name(from), belt_type_name(to));
}

static void on_warn(void *ud, const char *msg)
{
	const struct progress *p = ud;
	if (p->tty)
		fputs("\r\033[K", stderr);
	cli_warn("quantize", "%s", msg);
}

int cmd_quantize(int argc, char **argv)
{
	enum { O_PURE = 256 };
	static const struct option opts[] = {
		{"pure", no_argument, 0, O_PURE}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	bool pure = false;
	opterr = 0;
	optind = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case O_PURE: pure = true; break;
		case 'h': fputs(help, stdout); return 0;
		default: return cli_usage_error("quantize", "unknown option '%s'", argv[optind - 1]);
		}
	}
	int npos = argc - optind;
	if (npos < 3 || npos > 4)
		return cli_usage_error("quantize", "expected IN.gguf OUT.gguf TYPE [THREADS], got %d "
				       "argument%s", npos, npos == 1 ? "" : "s");
	char **pos = argv + optind;
	const struct belt_quant_target *target = belt_quant_target_find(pos[2]);
	if (!target)
		return cli_usage_error("quantize", "unknown type '%s': expected one of %s", pos[2],
				       belt_quant_target_names());
	long threads = 1;
	if (npos == 4 && !cli_int("quantize", "THREADS", pos[3], 1, 64, &threads))
		return CLI_USAGE;
	struct progress pr = {.tty = isatty(STDERR_FILENO) == 1};
	struct belt_quantize_params p = {.in = pos[0], .out = pos[1], .target = target,
					 .pure = pure, .n_threads = (int)threads,
					 .progress = on_tensor, .warn = on_warn, .progress_ud = &pr};
	struct belt_quantize_stats st;
	char err[CLI_ERR_SIZE];
	int rc = belt_quantize_file(&p, &st, err, sizeof err);
	if (pr.tty)
		fputs("\r\033[K", stderr);
	if (rc)
		return cli_error("quantize", "%s", err);
	fprintf(stderr, "belt quantize: %s: %llu tensors (%llu quantized), %.2f MiB -> %.2f MiB, %s%s\n",
		p.out, (unsigned long long)st.n_tensors, (unsigned long long)st.n_quantized,
		st.bytes_in / 1048576.0, st.bytes_out / 1048576.0, target->name,
		pure ? " (pure)" : "");
	return 0;
}
