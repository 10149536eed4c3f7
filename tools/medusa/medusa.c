/* belt-medusa: the data and the side file of Medusa draft heads
 * (doc/drafting.md, "Training the heads").
 *
 *   belt-medusa data -m MODEL -o DIR [-p N] [-n N] [--stride N] [--rows N] [-t N] FILE...
 *     For windows of each text FILE (a prompt of -p tokens every --stride
 *     tokens), the model's greedy continuation of -n tokens; then every
 *     position from the prompt's last on, evaluated again as one text:
 *     its hidden state after the final norm (hidden.f32), the tokens that
 *     followed it (next.i32, NEXT_COLS a row, -1 past the end), its
 *     window's number (seq.i32). Also the output projection's bytes as
 *     stored (output.bin), the logits of the first rows (check.f32, to
 *     check a reader of output.bin against), and meta.txt.
 *   belt-medusa pack -i HEADS.f32 -o FILE.gguf -k K -e E -v V [--name S]
 *     The side file of K heads E wide for V tokens from raw F32 (per
 *     head W [E x E] rows of outputs, then b [E]): W as F16, b as F32.
 *
 * The backend comes from BELT_BACKEND (default cpu). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"
#include "belt/sampler.h"
#include "belt/tokenizer.h"
#include "belt/types.h"

#define NEXT_COLS 6
#define CHECK_ROWS 8
#define ERRSZ 512

static int fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "belt-medusa: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 1;
}

static long num(const char *opt, const char *s, long lo, long hi, long *out)
{
	char *e;
	long v = strtol(s, &e, 10);
	if (e == s || *e || v < lo || v > hi) {
		fprintf(stderr, "belt-medusa: %s '%s': expected an integer in %ld..%ld\n", opt, s,
			lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 65536 > cap) {
			char *nb = realloc(buf, cap = 2 * cap + 65536);
			if (!nb)
				break;
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

struct collect {
	int32_t *ids;
	size_t n, cap;
};

static bool on_token(void *ud, int32_t token, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct collect *c = ud;
	if (c->n < c->cap)
		c->ids[c->n++] = token;
	return c->n < c->cap;
}

struct out_files {
	FILE *hidden, *next, *seq, *check;
	uint64_t rows, check_rows;
};

static FILE *open_in(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		fprintf(stderr, "belt-medusa: %s: %s\n", p, strerror(errno));
	return f;
}

/* The rows of one text seq[0..n) whose prompt was p tokens. */
static int write_rows(struct belt_session *s, const int32_t *seq, size_t n, size_t p,
		      uint32_t n_embd, int32_t n_vocab, int32_t window, float *hidden, float *logits,
		      struct out_files *o, char *err)
{
	if (belt_session_eval_hidden(s, seq, n, 0, hidden, err, ERRSZ))
		return -1;
	if (o->check_rows < CHECK_ROWS &&
	    belt_session_eval_all(s, seq, n, 0, logits, err, ERRSZ))
		return -1;
	for (size_t r = p - 1; r + 1 < n; r++) {
		int32_t next[NEXT_COLS];
		for (size_t j = 0; j < NEXT_COLS; j++)
			next[j] = r + 1 + j < n ? seq[r + 1 + j] : -1;
		if (fwrite(hidden + r * n_embd, 4, n_embd, o->hidden) != n_embd ||
		    fwrite(next, 4, NEXT_COLS, o->next) != NEXT_COLS ||
		    fwrite(&window, 4, 1, o->seq) != 1)
			return belt_errf(err, ERRSZ, "writing the data: %s", strerror(errno));
		if (o->check_rows < CHECK_ROWS) {
			if (fwrite(logits + r * (size_t)n_vocab, 4, (size_t)n_vocab, o->check) !=
			    (size_t)n_vocab)
				return belt_errf(err, ERRSZ, "writing check.f32: %s",
						 strerror(errno));
			o->check_rows++;
		}
		o->rows++;
	}
	return 0;
}

static int write_output(const struct belt_model *m, const char *dir, FILE *meta)
{
	const struct belt_gguf *g = belt_model_gguf(m);
	const struct belt_gguf_tensor *t = belt_gguf_find_tensor(g, "output.weight");
	if (!t)
		t = belt_gguf_find_tensor(g, "token_embd.weight");
	if (!t)
		return fail("%s: no output.weight or token_embd.weight%s", g->path, "");
	FILE *f = open_in(dir, "output.bin");
	if (!f)
		return 1;
	bool ok = fwrite(t->data, 1, t->size, f) == t->size;
	ok &= fclose(f) == 0;
	char tn[32];
	snprintf(tn, sizeof tn, "%s", belt_type_name(t->type));
	for (char *c = tn; *c; c++)
		*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	fprintf(meta, "output_type %s\noutput_rows %lld\noutput_cols %lld\n", tn,
		(long long)t->ne[1], (long long)t->ne[0]);
	return ok ? 0 : fail("%s/output.bin: %s", dir, strerror(errno));
}

static int cmd_data(int argc, char **argv)
{
	const char *model = NULL, *dir = NULL;
	long p = 64, n = 96, stride = 256, max_rows = 1L << 40, threads = 0;
	static const struct option lo[] = {{"stride", 1, 0, 's'}, {"rows", 1, 0, 'r'}, {0}};
	int c;
	while ((c = getopt_long(argc, argv, "m:o:p:n:t:", lo, NULL)) != -1) {
		if ((c == 'p' && num("-p", optarg, 2, 4096, &p)) ||
		    (c == 't' && num("-t", optarg, 1, 1024, &threads)) ||
		    (c == 'n' && num("-n", optarg, 1, 4096, &n)) ||
		    (c == 's' && num("--stride", optarg, 1, 1L << 30, &stride)) ||
		    (c == 'r' && num("--rows", optarg, 1, 1L << 40, &max_rows)) || c == '?')
			return 2;
		if (c == 'm')
			model = optarg;
		if (c == 'o')
			dir = optarg;
	}
	if (!model || !dir || optind >= argc)
		return fail("data: expected -m MODEL -o DIR and text files%s%s", "", "");
	char err[ERRSZ];
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = model;
	mp.backend = getenv("BELT_BACKEND");
	mp.n_threads = (int)threads;
	struct belt_model *m;
	if (belt_model_load(&mp, &m, err, sizeof err))
		return fail("%s%s", err, "");
	double e = 0;
	belt_model_hparam(m, "n_embd", &e);
	uint32_t n_embd = (uint32_t)e;
	int32_t n_vocab = belt_model_n_vocab(m);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)(p + n);
	struct belt_session *s = NULL;
	struct out_files o = {0};
	float *hidden = malloc((size_t)(p + n) * n_embd * 4);
	float *logits = malloc((size_t)(p + n) * (size_t)n_vocab * 4);
	int32_t *seq = malloc((size_t)(p + n) * 4);
	int rc = 1;
	FILE *meta = NULL;
	if (!hidden || !logits || !seq) {
		fail("out of memory%s%s", "", "");
		goto out;
	}
	if (belt_session_create(m, &sp, &s, err, sizeof err)) {
		fail("%s%s", err, "");
		goto out;
	}
	if (!(o.hidden = open_in(dir, "hidden.f32")) || !(o.next = open_in(dir, "next.i32")) ||
	    !(o.seq = open_in(dir, "seq.i32")) || !(o.check = open_in(dir, "check.f32")) ||
	    !(meta = open_in(dir, "meta.txt")))
		goto out;
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = (uint32_t)n;
	int32_t window = 0;
	for (int a = optind; a < argc && o.rows < (uint64_t)max_rows; a++) {
		size_t len, nt;
		char *text = slurp(argv[a], &len);
		if (!text) {
			fail("%s: %s", argv[a], strerror(errno));
			goto out;
		}
		int32_t *ids = malloc((len + 2) * 4);
		if (!ids || belt_tok_encode(tok, text, len, false, ids, len + 2, &nt, err, sizeof err)) {
			fail("%s: %s", argv[a], ids ? err : "out of memory");
			free(text);
			free(ids);
			goto out;
		}
		free(text);
		size_t bos = belt_tok_add_bos(tok) ? 1 : 0;
		for (size_t at = 0; at + (size_t)p - bos <= nt && o.rows < (uint64_t)max_rows;
		     at += (size_t)stride) {
			size_t q = 0, from = at;
			if (bos)
				seq[q++] = belt_tok_bos(tok);
			while (q < (size_t)p)
				seq[q++] = ids[from++];
			struct collect col = {.ids = seq + p, .cap = (size_t)n};
			belt_session_reset(s);
			if (belt_generate(s, seq, (size_t)p, &gp, on_token, &col, err, sizeof err) ||
			    write_rows(s, seq, (size_t)p + col.n, (size_t)p, n_embd, n_vocab,
				       window++, hidden, logits, &o, err)) {
				free(ids);
				fail("%s: %s", argv[a], err);
				goto out;
			}
		}
		free(ids);
		fprintf(stderr, "belt-medusa: %s: %llu rows so far\n", argv[a],
			(unsigned long long)o.rows);
	}
	fprintf(meta, "n_embd %u\nn_vocab %d\nrows %llu\nnext_cols %d\ncheck_rows %llu\n", n_embd,
		n_vocab, (unsigned long long)o.rows, NEXT_COLS, (unsigned long long)o.check_rows);
	rc = write_output(m, dir, meta);
out:
	if (o.hidden && fclose(o.hidden))
		rc = 1;
	if (o.next && fclose(o.next))
		rc = 1;
	if (o.seq && fclose(o.seq))
		rc = 1;
	if (o.check && fclose(o.check))
		rc = 1;
	if (meta && fclose(meta))
		rc = 1;
	free(hidden);
	free(logits);
	free(seq);
	belt_session_free(s);
	belt_model_free(m);
	return rc;
}

static int cmd_pack(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *name = "medusa heads";
	long k = 0, e = 0, v = 0;
	static const struct option lo[] = {{"name", 1, 0, 'N'}, {0}};
	int c;
	while ((c = getopt_long(argc, argv, "i:o:k:e:v:", lo, NULL)) != -1) {
		if ((c == 'k' && num("-k", optarg, 1, 8, &k)) ||
		    (c == 'e' && num("-e", optarg, 1, 65536, &e)) ||
		    (c == 'v' && num("-v", optarg, 1, 1L << 24, &v)) || c == '?')
			return 2;
		if (c == 'i')
			in = optarg;
		if (c == 'o')
			out = optarg;
		if (c == 'N')
			name = optarg;
	}
	if (!in || !out || !k || !e || !v)
		return fail("pack: expected -i HEADS.f32 -o FILE.gguf -k K -e E -v V%s%s", "", "");
	size_t len;
	float *x = (float *)slurp(in, &len);
	size_t per = (size_t)(e * e + e), want = (size_t)k * per * 4;
	if (!x || len != want) {
		free(x);
		fprintf(stderr, "belt-medusa: %s: %zu bytes: expected %zu (%ld heads of %ld x %ld "
			"F32 and %ld biases)\n", in, x ? len : 0, want, k, e, e, e);
		return 1;
	}
	uint16_t *h = malloc((size_t)(e * e) * 2);
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	char err[ERRSZ];
	int rc = !h || !w || belt_gguf_writer_str(w, "general.architecture", "medusa") ||
		 belt_gguf_writer_str(w, "general.name", name) ||
		 belt_gguf_writer_u32(w, "medusa.head_count", (uint32_t)k) ||
		 belt_gguf_writer_u32(w, "medusa.embedding_length", (uint32_t)e) ||
		 belt_gguf_writer_u32(w, "medusa.vocab_size", (uint32_t)v);
	for (long i = 0; !rc && i < k; i++) {
		const float *W = x + (size_t)i * per;
		for (size_t j = 0; j < (size_t)(e * e); j++)
			h[j] = belt_f32_to_fp16(W[j]);
		char wn[64], bn[64];
		snprintf(wn, sizeof wn, "medusa.%ld.weight", i);
		snprintf(bn, sizeof bn, "medusa.%ld.bias", i);
		const int64_t wne[2] = {e, e}, bne[1] = {e};
		rc = belt_gguf_writer_tensor(w, wn, BELT_TYPE_F16, 2, wne, h) ||
		     belt_gguf_writer_tensor(w, bn, BELT_TYPE_F32, 1, bne, W + e * e);
	}
	if (rc)
		fail("pack: out of memory%s%s", "", "");
	else if (belt_gguf_writer_write(w, out, err, sizeof err))
		rc = fail("%s%s", err, "");
	belt_gguf_writer_free(w);
	free(h);
	free(x);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "data"))
		return cmd_data(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "pack"))
		return cmd_pack(argc - 1, argv + 1);
	fprintf(stderr, "usage: belt-medusa data -m MODEL -o DIR [-p N] [-n N] [--stride N] "
		"[--rows N] [-t N] FILE...\n"
		"       belt-medusa pack -i HEADS.f32 -o FILE.gguf -k K -e E -v V [--name S]\n");
	return 2;
}
