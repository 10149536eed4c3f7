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

#endif
