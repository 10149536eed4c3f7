/* A main() for a libFuzzer target without libFuzzer: make check builds
 * each target of tests/fuzz with this file and any compiler, and runs it
 * over its seeds and a fixed number of deterministic mutations of each.
 *
 *   replay [-n MUTATIONS] [-d DICT] FILE|DIR...
 *
 * Every file given, and every regular file in a folder given, is one seed
 * (folders are read in name order). Each seed runs as it is, then
 * MUTATIONS times changed (default 64): bytes flipped, cut short, a run
 * repeated, bytes or a dictionary word (libFuzzer's -dict format, one
 * "word" a line) inserted, chosen by a fixed-seed generator, so a run is
 * the same each time. A target signals a finding by aborting (ASan,
 * UBSan or its own invariant), which fails the test. */
/* fuzz-cli renames core/cli's main with -Dmain=belt_cli_main; not this one */
#undef main

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

#define REPLAY_MAX_INPUT (1u << 20)
#define MAX_WORDS 1024

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t next(void) /* splitmix64 */
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static struct {
	char *text[MAX_WORDS];
	size_t len[MAX_WORDS];
	size_t n;
} dict;

/* A dictionary line: optional name=, then "..." with \\, \" and \xNN. */
static void add_word(const char *line)
{
	const char *q = strchr(line, '"');
	if (*line == '#' || !q || dict.n == MAX_WORDS)
		return;
	char *w = malloc(strlen(q) + 1);
	size_t n = 0;
	if (!w)
		return;
	for (const char *p = q + 1; *p && *p != '"'; p++) {
		unsigned x;
		if (*p == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &x) == 1) {
			w[n++] = (char)x;
			p += 3;
		} else if (*p == '\\' && p[1]) {
			w[n++] = *++p;
		} else {
			w[n++] = *p;
		}
	}
	dict.text[dict.n] = w;
	dict.len[dict.n++] = n;
}

static int load_dict(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char line[4096];
	while (fgets(line, sizeof line, f))
		add_word(line);
	fclose(f);
	return 0;
}

/* Change buf (n bytes, room for REPLAY_MAX_INPUT) once; returns the new size. */
static size_t mutate(uint8_t *buf, size_t n)
{
	size_t at = below(n + 1), k;
	switch (below(6)) {
	case 0: /* flip bits of a few bytes */
		for (k = 1 + below(4); k-- && n;)
			buf[below(n)] ^= (uint8_t)(1u << below(8));
		return n;
	case 1: /* cut short */
		return below(n + 1);
	case 2: /* a byte at a time: set to a boundary value */
		if (n)
			buf[below(n)] = (uint8_t[]){0, 1, 0x7f, 0x80, 0xff, '\n', '-', ':'}[below(8)];
		return n;
	case 3: { /* repeat a run */
		size_t from = below(n), len = 1 + below(n - from < 64 ? n - from : 64);
		if (!n || n + len > REPLAY_MAX_INPUT)
			return n;
		memmove(buf + at + len, buf + at, n - at);
		memmove(buf + at, buf + (from >= at ? from + len : from), len);
		return n + len;
	}
	case 4: /* insert random bytes */
		k = 1 + below(8);
		if (n + k > REPLAY_MAX_INPUT)
			return n;
		memmove(buf + at + k, buf + at, n - at);
		for (size_t i = 0; i < k; i++)
			buf[at + i] = (uint8_t)next();
		return n + k;
	default: /* insert a dictionary word */
		if (!dict.n)
			return n;
		k = below(dict.n);
		if (n + dict.len[k] > REPLAY_MAX_INPUT)
			return n;
		memmove(buf + at + dict.len[k], buf + at, n - at);
		memcpy(buf + at, dict.text[k], dict.len[k]);
		return n + dict.len[k];
	}
}

static unsigned long runs, seeds;

static int run_file(const char *path, long mutations, uint8_t *buf, uint8_t *work)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t n = fread(buf, 1, REPLAY_MAX_INPUT, f);
	fclose(f);
	seeds++;
	LLVMFuzzerTestOneInput(buf, n);
	runs++;
	for (long i = 0; i < mutations; i++) {
		size_t m = n;
		memcpy(work, buf, n);
		for (size_t k = 1 + below(3); k--;)
			m = mutate(work, m);
		/* a copy of exactly m bytes, so ASan sees a read past the end */
		uint8_t *exact = malloc(m ? m : 1);
		if (!exact)
			return -1;
		memcpy(exact, work, m);
		LLVMFuzzerTestOneInput(exact, m);
		free(exact);
		runs++;
	}
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_path(const char *path, long mutations, uint8_t *buf, uint8_t *work)
{
	struct dirent **names;
	int n = scandir(path, &names, NULL, by_name);
	if (n < 0) /* not a folder: a file */
		return run_file(path, mutations, buf, work);
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char file[4096];
		if (names[i]->d_name[0] != '.' && !rc) {
			snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
			rc = run_file(file, mutations, buf, work);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	long mutations = 64;
	int i = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-n"))
			mutations = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "-d") && load_dict(argv[i + 1]))
			return 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-n MUTATIONS] [-d DICT] FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	uint8_t *buf = malloc(REPLAY_MAX_INPUT), *work = malloc(REPLAY_MAX_INPUT);
	int rc = buf && work ? 0 : 2;
	for (; i < argc && !rc; i++) {
		/* a target may change folder (fuzz-cli does) */
		char *abs = realpath(argv[i], NULL);
		if (!abs) {
			perror(argv[i]);
			rc = 2;
			break;
		}
		rc = run_path(abs, mutations, buf, work) ? 2 : 0;
		free(abs);
	}
	if (!rc)
		fprintf(stderr, "%s: %lu seeds, %lu runs, no finding\n", argv[0], seeds, runs);
	free(buf);
	free(work);
	for (size_t k = 0; k < dict.n; k++)
		free(dict.text[k]);
	return rc;
}
