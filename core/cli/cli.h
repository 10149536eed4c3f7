/* The belt command line: one file per subcommand. */
#ifndef BELT_CLI_H
#define BELT_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses: runtime failure and command-line misuse. */
#define CLI_FAIL 1
#define CLI_USAGE 2

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_perplexity(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Room for an error message of the library or the CLI: a path of
 * PATH_MAX bytes and the errno text after it are not cut. */
#define CLI_ERR_SIZE 8192

/* Messages on stderr, one line each, with control characters and bytes
 * that are not UTF-8 (from a corrupt file or argv) written as \xNN. */
/* Print "belt: msg"; returns CLI_FAIL. */
int cli_fail(const char *msg);
/* Print "belt CMD: msg" and a hint to --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print "belt CMD: msg" (cmd NULL: "belt: msg"); returns CLI_FAIL. */
int cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print "belt CMD: warning: msg". */
void cli_warn(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Parse a whole decimal integer in [min, max] for option opt. */
bool cli_int(const char *cmd, const char *opt, const char *s, long min,
	     long max, long *out);
/* Parse a finite number (strtod syntax; one too small for a float rounds
 * to it) for option opt. */
/* The drafter's options with --draft-heads FILE put first as heads=FILE:
 * options, heads=FILE or both (buf, bufsz); NULL with a message printed
 * where they do not fit. */
const char *cli_draft_options(const char *cmd, const char *heads, const char *options, char *buf,
			      size_t bufsz);
bool cli_float(const char *cmd, const char *opt, const char *s, float *out);
/* The largest -b / -ub a command takes (the longest context). */
#define CLI_MAX_BATCH (1L << 24)
/* The value of llama.cpp's single-dash "-ub N" (getopt reads it as -u with
 * the value "b") or of --ubatch-size N, right after getopt_long returned
 * 'u'; long_form: it matched the long name. NULL after the usage message
 * for anything else ("-u N", "-ubN", a missing value). */
const char *cli_ubatch_value(const char *cmd, int argc, char **argv, bool long_form);
/* Parse a KV cache type (f32, f16, q8_0) for option opt into *out. */
bool cli_cache_type(const char *cmd, const char *opt, const char *s, int *out);
/* llama.cpp's -ctk T and -ctv T, right after getopt_long returned 'c'
 * (it reads "-ctk" as -c with the value "tk"): 1 when it was one of them,
 * its type parsed into *type_k or *type_v; 0 when it was not (-c itself,
 * optarg its value); -1 after the usage message. */
int cli_cache_type_short(const char *cmd, int argc, char **argv, bool long_form, int *type_k,
			 int *type_v);
/* Read a whole file into a NUL-terminated buffer (caller frees); NULL
 * with errno set if it cannot. */
char *cli_read_file(const char *path, size_t *len);
/* Describe backend's devices into buf, one line each (see list_devices in
 * belt/backend.h); returns how many there are, or -1 with err. */
int cli_devices(const char *backend, char *buf, size_t bufsz, char *err,
		size_t errsz);
/* For `cmd --device N`: 0 if backend has device N, else say why on stderr
 * and return CLI_USAGE (CLI_FAIL if its devices cannot be listed). */
int cli_check_device(const char *cmd, const char *backend, long device);

struct belt_model;
/* Warn on stderr about what a loaded model will do without a word: a
 * block count below the layers whose tensors the file holds, and n_ctx
 * (0: not checked) above the training context. */
void cli_model_warnings(const char *cmd, const struct belt_model *m, uint32_t n_ctx);

/* The sampling flags of belt run and belt chat (sampling.c): their
 * getopt_long entries, their --help lines, their parser. */
enum { CLI_OPT_TEMP = 0x1000, CLI_OPT_TOP_K, CLI_OPT_TOP_P, CLI_OPT_MIN_P, CLI_OPT_REPEAT,
       CLI_OPT_LAST_N, CLI_OPT_PRESENCE, CLI_OPT_FREQUENCY, CLI_OPT_SEED };
#define CLI_SAMPLING_OPTIONS \
	{"temp", required_argument, 0, CLI_OPT_TEMP}, {"top-k", required_argument, 0, CLI_OPT_TOP_K}, \
	{"top-p", required_argument, 0, CLI_OPT_TOP_P}, {"min-p", required_argument, 0, CLI_OPT_MIN_P}, \
	{"repeat-penalty", required_argument, 0, CLI_OPT_REPEAT}, \
	{"repeat-last-n", required_argument, 0, CLI_OPT_LAST_N}, \
	{"presence-penalty", required_argument, 0, CLI_OPT_PRESENCE}, \
	{"frequency-penalty", required_argument, 0, CLI_OPT_FREQUENCY}, \
	{"seed", required_argument, 0, CLI_OPT_SEED}
#define CLI_SAMPLING_HELP \
	"      --temp T         sampling temperature (default 0: greedy)\n" \
	"      --top-k N        keep the N most likely tokens (default 40; 0: off)\n" \
	"      --top-p P        keep the most likely tokens up to mass P (default 0.95; 1: off)\n" \
	"      --min-p P        drop tokens below P times the top probability (default 0.05; 0: off)\n" \
	"      --repeat-penalty F   penalize tokens of the last N (default 1: off)\n" \
	"      --repeat-last-n N    the window of the penalties (default 64; -1: the context)\n" \
	"      --presence-penalty F    subtract F from tokens in the window (default 0)\n" \
	"      --frequency-penalty F   subtract F per occurrence in the window (default 0)\n" \
	"      --seed N         seed of the draws (default: from the clock, printed)\n"
struct belt_sampling;
/* Parse option c (getopt_long's value) with value arg into *s (--seed
 * also sets *seed_given): 1 when c is a sampling flag, 0 when it is not,
 * -1 after the usage message. */
int cli_sampling_option(const char *cmd, int c, const char *arg, struct belt_sampling *s,
			bool *seed_given);
/* Without --seed, a seed from the clock, printed on stderr if sampled. */
void cli_sampling_seed(struct belt_sampling *s, bool given);

#endif
