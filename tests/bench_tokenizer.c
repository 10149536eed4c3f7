/* bench-tokenizer: encoding speed of a vocabulary on a text file.
 *
 * usage: bench-tokenizer VOCAB.gguf TEXT [RUNS]
 * Encodes the whole file RUNS times (default 5) without BOS and prints the
 * best run as tokens/s and MB/s, then checks that decoding gives the text
 * back (for lossless vocabularies; a mismatch is reported, not fatal). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/tokenizer.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (n + 65536 > cap) {
			cap = 2 * (n + 65536);
			char *b = realloc(buf, cap);
			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return buf;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t decode_all(const struct belt_tokenizer *t, const int32_t *ids,
			 size_t n, char *out, size_t cap)
{
	size_t piece = 32 + belt_tok_max_piece(t), o = 0;
	struct belt_tok_stream s;
	belt_tok_stream_init(&s, false);
	for (size_t i = 0; i < n && o + piece <= cap; i++)
		o += belt_tok_decode(t, &s, ids[i], out + o, cap - o);
	if (o + piece <= cap)
		o += belt_tok_flush(&s, out + o, cap - o);
	return o;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench-tokenizer VOCAB.gguf TEXT [RUNS]\n");
		return 2;
	}
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	char err[BELT_ERR_SIZE];
	size_t len;
	char *text = slurp(argv[2], &len);
	if (!text) {
		fprintf(stderr, "bench-tokenizer: %s: cannot read\n", argv[2]);
		return 1;
	}
	double t0 = now();
	struct belt_gguf *g = belt_gguf_open(argv[1], err, sizeof err);
	struct belt_tokenizer *t = NULL;
	if (!g || belt_tok_load(g, &t, err, sizeof err)) {
		fprintf(stderr, "bench-tokenizer: %s\n", err);
		belt_gguf_close(g);
		free(text);
		return 1;
	}
	belt_gguf_close(g);
	double load = now() - t0;
	size_t cap = len + 16, n = 0;
	int32_t *ids = malloc(cap * sizeof *ids);
	double best = 1e30;
	for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
		double a = now();
		if (belt_tok_encode(t, text, len, false, ids, cap, &n, err, sizeof err)) {
			fprintf(stderr, "bench-tokenizer: %s\n", err);
			return 1;
		}
		double s = now() - a;
		if (s < best)
			best = s;
	}
	char *back = malloc(2 * len + 64);
	size_t nb = back ? decode_all(t, ids, n < cap ? n : cap, back, 2 * len + 64) : 0;
	/* SPM: the dummy-prefix space comes back in front */
	bool same = (nb == len && memcmp(back, text, len) == 0) ||
		    (nb == len + 1 && back[0] == ' ' && memcmp(back + 1, text, len) == 0);
	const char *name = strrchr(argv[1], '/');
	printf("%-28s %8zu bytes -> %7zu tokens in %.4f s: %10.0f tokens/s, %6.2f MB/s"
	       " (load %.2f s, round trip %s)\n",
	       name ? name + 1 : argv[1], len, n, best, (double)n / best,
	       (double)len / best / 1e6, load, same ? "exact" : "differs");
	free(back);
	free(ids);
	free(text);
	belt_tok_free(t);
	return 0;
}
