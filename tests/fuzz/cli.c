/* libFuzzer target: the belt command line's flag parsing.
 *
 * The input is an argument vector: its bytes split at each NUL into at
 * most 64 arguments, after argv[0] "belt". core/cli's main runs on it
 * (built renamed, -Dmain=belt_cli_main), so every subcommand parses its
 * flags and numbers exactly as from a shell, then goes as far as the
 * arguments let it. The target works in an empty folder of its own (from
 * its first input on: give libFuzzer absolute artifact paths), with
 * stdin and stdout on /dev/null and no Vulkan driver (VK_ICD_FILENAMES
 * names none), so a relative -m or -f names nothing and `belt info` lists
 * plugins without starting a device: what is fuzzed is the command line,
 * not a model (the GGUF and tokenizer targets have those).
 *
 * Invariants: the exit status is 0, 1 (failed) or 2 (usage); nothing
 * crashes, leaks or overflows (ASan, UBSan). A broken invariant aborts. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int belt_cli_main(int argc, char **argv);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static char dir[4096];

static void cleanup(void)
{
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/belt-fuzz-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int null = open("/dev/null", O_RDWR);
	if (!mkdtemp(dir) || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) {
		perror("fuzz cli: setup");
		exit(2);
	}
	close(null);
	atexit(cleanup);
	setenv("VK_ICD_FILENAMES", "/nonexistent/belt-fuzz-no-icd.json", 1);
	setenv("VK_DRIVER_FILES", "/nonexistent/belt-fuzz-no-icd.json", 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* into the empty folder at the first input, once libFuzzer has read
	 * its -dict and corpus paths (absolute paths from then on) */
	static int in_dir;
	if (!in_dir++ && chdir(dir)) {
		perror(dir);
		exit(2);
	}
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	char *argv[MAX_ARGS + 2] = {"belt"};
	int argc = 1;
	for (size_t i = 0; i <= size && argc <= MAX_ARGS; argc++) {
		argv[argc] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	int rc = belt_cli_main(argc, argv);
	clearerr(stdout);
	free(buf);
	if (rc < 0 || rc > 2) {
		fprintf(stderr, "fuzz cli: invariant broken: exit status %d (expected 0, 1 or 2)\n", rc);
		abort();
	}
	return 0;
}
