/* Tests for core/tokenizer against independent references in
 * $BELT_SHARED_DIR: llama.cpp's vocab test cases and run.c's prompt ids
 * and greedy texts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"
#include "belt/tokenizer.h"

/* ---- helpers ---- */

static const char *shared_dir(void)
{
	const char *d = getenv("BELT_SHARED_DIR");
	ck_assert_msg(d && *d, "BELT_SHARED_DIR is not set");
	return d;
}

static void shared_path(char *buf, size_t n, const char *rel)
{
	snprintf(buf, n, "%s/%s", shared_dir(), rel);
}

/* Whole file, NUL-terminated; *len excludes the NUL. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert(buf);
	ck_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Load and close the GGUF at once: the tokenizer must own its copy. */
static struct belt_tokenizer *load_path(const char *path)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g, "%s", err);
	struct belt_tokenizer *t = NULL;
	int rc = belt_tok_load(g, &t, err, sizeof err);
	belt_gguf_close(g);
	ck_assert_msg(rc == 0 && t, "%s", err);
	return t;
}

static struct belt_tokenizer *load_shared(const char *rel)
{
	char path[1024];
	shared_path(path, sizeof path, rel);
	return load_path(path);
}

struct ids {
	int32_t *v;
	size_t n, cap;
};

static void ids_push(struct ids *a, int32_t id)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = realloc(a->v, a->cap * sizeof *a->v);
		ck_assert(a->v);
	}
	a->v[a->n++] = id;
}

/* Space-separated ids from s[0..len). */
static struct ids parse_ids(const char *s, size_t len)
{
	struct ids a = { 0 };
	char *tmp = strndup(s, len), *p = tmp, *end;
	for (;;) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		ids_push(&a, (int32_t)v);
		p = end;
	}
	free(tmp);
	return a;
}

/* Encode into a vector, exercising the "cap too small, call again" rule. */
static struct ids encode(const struct belt_tokenizer *t, const char *text,
			 size_t len, bool add_bos)
{
	char err[BELT_ERR_SIZE];
	size_t need = 0;
	int32_t one;
	ck_assert_msg(belt_tok_encode(t, text, len, add_bos, &one, 1, &need,
				      err, sizeof err) == 0, "%s", err);
	struct ids a = { malloc((need ? need : 1) * sizeof(int32_t)), 0, need };
	ck_assert(a.v);
	size_t n2 = 0;
	ck_assert_msg(belt_tok_encode(t, text, len, add_bos, a.v, need, &n2,
				      err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(n2, need);
	if (need > 0)
		ck_assert_int_eq(a.v[0], one);
	a.n = need;
	return a;
}

static bool ids_equal(const struct ids *a, const struct ids *b)
{
	return a->n == b->n &&
	       (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof *a->v) == 0);
}

static void print_ids(const char *label, const struct ids *a)
{
	fprintf(stderr, "  %s (%zu):", label, a->n);
	for (size_t i = 0; i < a->n; i++)
		fprintf(stderr, " %d", (int)a->v[i]);
	fprintf(stderr, "\n");
}

struct text {
	char *p;
	size_t n, cap;
};

static void text_add(struct text *s, const char *p, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = 2 * (s->n + n + 1);
		s->p = realloc(s->p, s->cap);
		ck_assert(s->p);
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

/* Decode a whole id sequence through one stream, then flush. */
static struct text decode_all(const struct belt_tokenizer *t,
			      const int32_t *ids, size_t n, bool strip)
{
	struct text s = { 0 };
	struct belt_tok_stream st;
	size_t cap = 32 + belt_tok_max_piece(t);
	char *buf = malloc(cap);
	ck_assert(buf);
	belt_tok_stream_init(&st, strip);
	text_add(&s, "", 0);
	for (size_t i = 0; i < n; i++)
		text_add(&s, buf, belt_tok_decode(t, &st, ids[i], buf, cap));
	text_add(&s, buf, belt_tok_flush(&st, buf, cap));
	free(buf);
	return s;
}

/* ---- llama.cpp vocab test cases ---- */

struct vocab_cases {
	char *inp, *out;
	const char *text[128];
	size_t text_len[128];
	const char *line[128];
	size_t line_len[128];
	int n;
};

static void read_cases(const char *name, struct vocab_cases *c)
{
	char path[1024];
	size_t n;
	memset(c, 0, sizeof *c);
	snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf.inp",
		 shared_dir(), name);
	c->inp = read_file(path, &n);
	static const char sep[] = "\n__ggml_vocab_test__\n";
	for (char *p = c->inp, *q; (q = strstr(p, sep)); p = q + strlen(sep)) {
		ck_assert(c->n < 128);
		c->text[c->n] = p;
		c->text_len[c->n++] = (size_t)(q - p);
	}
	snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf.out",
		 shared_dir(), name);
	c->out = read_file(path, &n);
	int k = 0;
	for (char *p = c->out; *p && k < c->n; k++) {
		char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		c->line[k] = p;
		c->line_len[k] = len;
		p += len + (e != NULL);
	}
	ck_assert_msg(k == c->n, "%s: %d texts but %d id lines", name, c->n, k);
}

static void free_cases(struct vocab_cases *c)
{
	free(c->inp);
	free(c->out);
}

static void check_vocab(const char *name)
{
	char rel[256];
	snprintf(rel, sizeof rel, "vocab/ggml-vocab-%s.gguf", name);
	struct belt_tokenizer *t = load_shared(rel);
	struct vocab_cases c;
	read_cases(name, &c);
	int failed = 0;
	for (int i = 0; i < c.n; i++) {
		struct ids want = parse_ids(c.line[i], c.line_len[i]);
		struct ids got = encode(t, c.text[i], c.text_len[i], false);
		if (!ids_equal(&want, &got)) {
			fprintf(stderr, "%s case %d: text '%.*s'\n", name, i,
				(int)c.text_len[i], c.text[i]);
			print_ids("expected", &want);
			print_ids("got", &got);
			failed++;
		}
		free(want.v);
		free(got.v);
	}
	printf("vocab %s: %d/%d cases pass\n", name, c.n - failed, c.n);
	ck_assert_int_eq(c.n, 46);
	ck_assert_int_eq(failed, 0);
	free_cases(&c);
	belt_tok_free(t);
}

START_TEST(vocab_llama_spm)
{
	check_vocab("llama-spm");
}
END_TEST

/* phi-3 shares the Llama 2 vocabulary but marks </s> user-defined, so its
 * pieces take the partition path; llama.cpp gives the same ids. */
START_TEST(vocab_phi3)
{
	check_vocab("phi-3");
}
END_TEST

/* decode(encode(text)) == text with the dummy prefix stripped once. It is
 * lossless for every case here: the vocabulary has all 256 byte tokens and
 * no text holds U+2581 (which would come back as ' ') or invalid UTF-8. */
START_TEST(round_trip)
{
	struct belt_tokenizer *t = load_shared("vocab/ggml-vocab-llama-spm.gguf");
	struct vocab_cases c;
	read_cases("llama-spm", &c);
	int failed = 0;
	for (int i = 0; i < c.n; i++) {
		struct ids ids = encode(t, c.text[i], c.text_len[i], false);
		struct text s = decode_all(t, ids.v, ids.n, true);
		if (s.n != c.text_len[i] || memcmp(s.p, c.text[i], s.n) != 0) {
			fprintf(stderr, "round trip case %d: '%.*s' -> '%s'\n",
				i, (int)c.text_len[i], c.text[i], s.p);
			failed++;
		}
		free(ids.v);
		free(s.p);
	}
	printf("round trip: %d/%d cases pass\n", c.n - failed, c.n);
	ck_assert_int_eq(failed, 0);
	free_cases(&c);
	belt_tok_free(t);
}
END_TEST

/* ---- run.c reference rows ---- */

enum { COL_MODEL, COL_PROMPT, COL_STEPS, COL_TEXT, COL_EFF, COL_PIDS,
       COL_GIDS, COL_LOSSY, N_COLS };
static const char *const col_names[N_COLS] = {
	"model", "prompt", "n_steps", "greedy_text", "effective_steps",
	"prompt_ids", "generated_ids", "text_lossy"
};

struct row {
	char *f[N_COLS];
	size_t len[N_COLS];
};

/* Undo the TSV escapes \\ \t \n \r in place; returns the new length. */
static size_t unescape(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 == n) {
			s[o++] = s[i];
			continue;
		}
		char c = s[++i];
		s[o++] = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
	}
	s[o] = '\0';
	return o;
}

/* Split one line at tabs into fields (in place). */
static int split_tabs(char *line, char **f, int max)
{
	int n = 0;
	for (char *p = line;; ) {
		ck_assert(n < max);
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			return n;
		*tab = '\0';
		p = tab + 1;
	}
}

/* All rows of reference.tsv; *buf owns the storage. */
static struct row *read_reference(char **buf, int *n_rows)
{
	char path[1024];
	size_t n;
	shared_path(path, sizeof path, "models/reference.tsv");
	*buf = read_file(path, &n);
	char *lines[256];
	int nl = 0;
	for (char *p = *buf, *e; *p; p = e + 1) {
		e = strchr(p, '\n');
		ck_assert(e && nl < 256);
		*e = '\0';
		lines[nl++] = p;
	}
	char *hdr[32];
	int nh = split_tabs(lines[0], hdr, 32), idx[N_COLS];
	for (int c = 0; c < N_COLS; c++) {
		idx[c] = -1;
		for (int h = 0; h < nh; h++)
			if (strcmp(hdr[h], col_names[c]) == 0)
				idx[c] = h;
		ck_assert_msg(idx[c] >= 0, "reference.tsv: no column %s", col_names[c]);
	}
	struct row *rows = calloc((size_t)nl, sizeof *rows);
	for (int r = 1; r < nl; r++) {
		char *f[32];
		ck_assert_int_eq(split_tabs(lines[r], f, 32), nh);
		for (int c = 0; c < N_COLS; c++) {
			rows[r - 1].f[c] = f[idx[c]];
			rows[r - 1].len[c] = unescape(f[idx[c]], strlen(f[idx[c]]));
		}
	}
	*n_rows = nl - 1;
	return rows;
}

static const char *model_file(const char *model)
{
	if (strcmp(model, "stories260K") == 0)
		return "models/stories260K.f32.gguf";
	if (strcmp(model, "aidreams260K") == 0)
		return "models/aidreams260K.f32.gguf";
	if (strcmp(model, "pycoder29M") == 0)
		return "models/pycoder29M.f16.gguf";
	ck_abort_msg("reference.tsv: unknown model %s", model);
	return NULL;
}

static int check_prompts(const char *model, const char *file,
			 const struct row *rows, int n_rows)
{
	struct belt_tokenizer *t = load_shared(file);
	int checked = 0;
	for (int r = 0; r < n_rows; r++) {
		const struct row *w = &rows[r];
		if (strcmp(w->f[COL_MODEL], model) != 0)
			continue;
		struct ids want = parse_ids(w->f[COL_PIDS], w->len[COL_PIDS]);
		struct ids got = encode(t, w->f[COL_PROMPT], w->len[COL_PROMPT],
					belt_tok_add_bos(t));
		if (!ids_equal(&want, &got)) {
			fprintf(stderr, "%s row %d prompt '%s'\n", file, r,
				w->f[COL_PROMPT]);
			print_ids("expected", &want);
			print_ids("got", &got);
		}
		ck_assert_msg(ids_equal(&want, &got), "%s: prompt ids differ (row %d)",
			      file, r);
		free(want.v);
		free(got.v);
		checked++;
	}
	belt_tok_free(t);
	return checked;
}

START_TEST(reference_prompts)
{
	char *buf;
	int n_rows, total = 0;
	struct row *rows = read_reference(&buf, &n_rows);
	static const char *const models[] = { "stories260K", "aidreams260K",
					      "pycoder29M" };
	for (size_t m = 0; m < 3; m++)
		total += check_prompts(models[m], model_file(models[m]), rows,
				       n_rows);
	/* the reference holds for every GGUF of the model, even one written
	 * by llama.cpp's converter (with 0xFFFFFFFF special ids) */
	total += check_prompts("stories260K", "models/stories260K.ggml-org.gguf",
			       rows, n_rows);
	printf("reference prompts: %d encodings pass (%d rows, plus the 14 "
	       "stories260K rows on stories260K.ggml-org.gguf)\n", total, n_rows);
	ck_assert_int_eq(total, n_rows + 14);
	free(rows);
	free(buf);
}
END_TEST

static bool has_id(const struct ids *a, int32_t id)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] == id)
			return true;
	return false;
}

/* run.c prints the prompt pieces after BOS, then the generated ones, with
 * the first piece's leading space removed: decode(prompt_ids[1:] +
 * generated_ids) with strip_space. Rows are skipped where run.c's text
 * cannot match by design: lossy rows (it drops non-ASCII byte pieces),
 * rows with EOS (it prints "\n</s>\n"), prompts longer than the steps. */
static bool text_comparable(const struct row *w, const struct ids *p,
			    const struct ids *g)
{
	return strcmp(w->f[COL_LOSSY], "0") == 0 && !has_id(g, 2) &&
	       (long)p->n <= atol(w->f[COL_EFF]);
}

START_TEST(reference_texts)
{
	char *buf;
	int n_rows, checked = 0, pycoder = 0;
	struct row *rows = read_reference(&buf, &n_rows);
	for (int r = 0; r < n_rows; r++) {
		const struct row *w = &rows[r];
		struct ids p = parse_ids(w->f[COL_PIDS], w->len[COL_PIDS]);
		struct ids g = parse_ids(w->f[COL_GIDS], w->len[COL_GIDS]);
		if (text_comparable(w, &p, &g)) {
			struct belt_tokenizer *t = load_shared(model_file(w->f[COL_MODEL]));
			struct ids all = { 0 };
			for (size_t i = 1; i < p.n; i++)
				ids_push(&all, p.v[i]);
			for (size_t i = 0; i < g.n; i++)
				ids_push(&all, g.v[i]);
			struct text s = decode_all(t, all.v, all.n, true);
			ck_assert_msg(s.n == w->len[COL_TEXT] &&
					      memcmp(s.p, w->f[COL_TEXT], s.n) == 0,
				      "row %d (%s '%s'): decoded text differs:\n%s\n---\n%s",
				      r, w->f[COL_MODEL], w->f[COL_PROMPT], s.p,
				      w->f[COL_TEXT]);
			checked++;
			pycoder += strcmp(w->f[COL_MODEL], "pycoder29M") == 0;
			free(s.p);
			free(all.v);
			belt_tok_free(t);
		}
		free(p.v);
		free(g.v);
	}
	printf("reference texts: %d rows decode exactly (%d pycoder29M)\n",
	       checked, pycoder);
	ck_assert_int_eq(pycoder, 16);
	free(rows);
	free(buf);
}
END_TEST

/* ---- streaming ---- */

/* Decode one id; return its text (static buffer) and length. */
static size_t dec1(const struct belt_tokenizer *t, struct belt_tok_stream *s,
		   int32_t id, char *buf)
{
	size_t n = belt_tok_decode(t, s, id, buf, 64);
	buf[n] = '\0';
	return n;
}

/* In the Llama 2 vocabulary byte b is id b + 3. */
#define BYTE(b) ((b) + 3)

START_TEST(stream_utf8)
{
	struct belt_tokenizer *t = load_shared("vocab/ggml-vocab-llama-spm.gguf");
	struct belt_tok_stream s;
	char buf[80];
	ck_assert_str_eq(belt_tok_piece(t, BYTE(0xF0)), "<0xF0>");
	size_t longest = 0;
	for (int32_t id = 0; id < belt_tok_n_vocab(t); id++)
		if (strlen(belt_tok_piece(t, id)) > longest)
			longest = strlen(belt_tok_piece(t, id));
	ck_assert_uint_eq(belt_tok_max_piece(t), longest);

	/* U+1F999 over four byte tokens: nothing until the last byte */
	belt_tok_stream_init(&s, false);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xF0), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0x9F), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, 1, buf), 0); /* BOS: no text, keeps state */
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xA6), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0x99), buf), 4);
	ck_assert_str_eq(buf, "\xf0\x9f\xa6\x99");
	ck_assert_uint_eq(belt_tok_flush(&s, buf, sizeof buf), 0);

	/* flush of an incomplete sequence gives U+FFFD */
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xE2), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0x82), buf), 0);
	ck_assert_uint_eq(belt_tok_flush(&s, buf, sizeof buf), 3);
	ck_assert(memcmp(buf, "\xef\xbf\xbd", 3) == 0);
	ck_assert_uint_eq(belt_tok_flush(&s, buf, sizeof buf), 0);

	/* a sequence cut short by a normal piece: U+FFFD, then the piece */
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xC3), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, 15043, buf), 9); /* "▁Hello" */
	ck_assert_str_eq(buf, "\xef\xbf\xbd Hello");
	/* lone continuation byte, and a surrogate lead */
	ck_assert_uint_eq(dec1(t, &s, BYTE(0x80), buf), 3);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xED), buf), 0);
	ck_assert_uint_eq(dec1(t, &s, BYTE(0xA0), buf), 6);
	ck_assert_str_eq(buf, "\xef\xbf\xbd\xef\xbf\xbd");
	/* control / unknown tokens: nothing */
	ck_assert_uint_eq(dec1(t, &s, 0, buf), 0);
	ck_assert_uint_eq(dec1(t, &s, 2, buf), 0);
	ck_assert_uint_eq(dec1(t, &s, -1, buf), 0);
	ck_assert_uint_eq(dec1(t, &s, 32000, buf), 0);
	belt_tok_free(t);
}
END_TEST

START_TEST(stream_strip_space)
{
	struct belt_tokenizer *t = load_shared("vocab/ggml-vocab-llama-spm.gguf");
	struct belt_tok_stream s;
	char buf[80];
	belt_tok_stream_init(&s, true);
	ck_assert_uint_eq(dec1(t, &s, 1, buf), 0); /* BOS keeps the flag */
	ck_assert_uint_eq(dec1(t, &s, 15043, buf), 5);
	ck_assert_str_eq(buf, "Hello");
	ck_assert_uint_eq(dec1(t, &s, 3186, buf), 6);
	ck_assert_str_eq(buf, " world");
	/* "▁▁" loses one space only */
	belt_tok_stream_init(&s, true);
	ck_assert_uint_eq(dec1(t, &s, 259, buf), 1);
	ck_assert_str_eq(buf, " ");
	/* a zeroed stream strips nothing */
	memset(&s, 0, sizeof s);
	ck_assert_uint_eq(dec1(t, &s, 15043, buf), 6);
	belt_tok_free(t);
}
END_TEST

/* ---- synthetic vocabularies and bad input ---- */

struct tmp_gguf {
	char path[64];
	struct belt_gguf_writer *w;
};

static void tmp_begin(struct tmp_gguf *g)
{
	snprintf(g->path, sizeof g->path, "/tmp/belt-tok-test-%ld.gguf",
		 (long)getpid());
	g->w = belt_gguf_writer_new();
	ck_assert(g->w);
}

/* Write it out and try to load; returns the load status, message in err. */
static int tmp_load(struct tmp_gguf *g, struct belt_tokenizer **t,
		    char *err, size_t errsz)
{
	ck_assert_msg(belt_gguf_writer_write(g->w, g->path, err, errsz) == 0,
		      "%s", err);
	belt_gguf_writer_free(g->w);
	g->w = NULL;
	struct belt_gguf *f = belt_gguf_open(g->path, err, errsz);
	ck_assert_msg(f, "%s", err);
	*t = NULL;
	int rc = belt_tok_load(f, t, err, errsz);
	belt_gguf_close(f);
	unlink(g->path);
	return rc;
}

static const char *const small_tokens[] = {
	"<unk>", "<s>", "</s>", "<0x41>", "<0xC3>", "<0xA9>", "\xe2\x96\x81",
	"a", "b", "\xe2\x96\x81" "a", "ab", "\xe2\x96\x81" "ab", "<x>",
	"\xe2\x96\x81" "b"
};
#define N_SMALL 14
static const float small_scores[N_SMALL] = { 0, 0, 0, 0, 0, 0, -5, -3, -3,
					     -2, -1, -1, 0, -2 };
static const int32_t small_types[N_SMALL] = { 2, 3, 3, 6, 6, 6, 1, 1, 1, 1,
					      1, 1, 4, 1 };

static void small_vocab(struct tmp_gguf *g, const char *model, int n_scores,
			bool types)
{
	tmp_begin(g);
	if (model)
		ck_assert(!belt_gguf_writer_str(g->w, "tokenizer.ggml.model", model));
	ck_assert(!belt_gguf_writer_arr_str(g->w, "tokenizer.ggml.tokens",
					    small_tokens, N_SMALL));
	if (n_scores)
		ck_assert(!belt_gguf_writer_arr(g->w, "tokenizer.ggml.scores",
						BELT_GGUF_FLOAT32, small_scores,
						(uint64_t)n_scores));
	if (types)
		ck_assert(!belt_gguf_writer_arr(g->w, "tokenizer.ggml.token_type",
						BELT_GGUF_INT32, small_types,
						N_SMALL));
}

static void expect_ids(const struct belt_tokenizer *t, const char *text,
		       bool bos, const int32_t *want, size_t n)
{
	struct ids got = encode(t, text, strlen(text), bos);
	struct ids w = { (int32_t *)want, n, n };
	if (!ids_equal(&w, &got)) {
		fprintf(stderr, "text '%s'\n", text);
		print_ids("expected", &w);
		print_ids("got", &got);
	}
	ck_assert_msg(ids_equal(&w, &got), "ids differ for '%s'", text);
	free(got.v);
}

START_TEST(small_vocab_semantics)
{
	struct tmp_gguf g;
	struct belt_tokenizer *t;
	char err[BELT_ERR_SIZE];
	small_vocab(&g, "llama", N_SMALL, true);
	ck_assert(!belt_gguf_writer_u32(g.w, "tokenizer.ggml.eot_token_id", 12));
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(belt_tok_n_vocab(t), N_SMALL);
	ck_assert_int_eq(belt_tok_bos(t), 1); /* llama defaults */
	ck_assert_int_eq(belt_tok_eos(t), 2);
	ck_assert(belt_tok_add_bos(t));
	ck_assert(belt_tok_is_eog(t, 2) && belt_tok_is_eog(t, 12));
	ck_assert(!belt_tok_is_eog(t, 1) && !belt_tok_is_eog(t, -1));
	ck_assert_ptr_null(belt_tok_piece(t, N_SMALL));

	/* highest score merges first: "▁ab" (-1) beats "▁a"+"b" */
	expect_ids(t, "ab", false, (const int32_t[]){ 11 }, 1);
	/* empty text: BOS only, no dummy prefix */
	expect_ids(t, "", true, (const int32_t[]){ 1 }, 1);
	expect_ids(t, "", false, NULL, 0);
	/* byte fallback, a missing byte token becomes <unk>, NUL is a byte */
	expect_ids(t, "\xc3\xa9", false, (const int32_t[]){ 6, 4, 5 }, 3);
	expect_ids(t, "A\xc3", false, (const int32_t[]){ 6, 3, 4 }, 3);
	struct ids nul = encode(t, "a\0b", 3, false); /* ▁a <unk> b */
	ck_assert(nul.n == 3 && nul.v[0] == 9 && nul.v[1] == 0 && nul.v[2] == 8);
	free(nul.v);
	/* a user-defined piece is cut out and the dummy prefix follows it */
	expect_ids(t, "a<x>b", true, (const int32_t[]){ 1, 9, 12, 13 }, 4);
	expect_ids(t, "<x><x>", false, (const int32_t[]){ 12, 12 }, 2);

	/* user-defined pieces decode verbatim, byte A as 'A' */
	struct text s = decode_all(t, (const int32_t[]){ 1, 9, 12, 13, 3 }, 5,
				   true);
	ck_assert_str_eq(s.p, "a<x> bA");
	free(s.p);
	belt_tok_free(t);
}
END_TEST

START_TEST(no_token_types)
{
	struct tmp_gguf g;
	struct belt_tokenizer *t;
	char err[BELT_ERR_SIZE];
	small_vocab(&g, "llama", 0, false);
	ck_assert(!belt_gguf_writer_bool(g.w, "tokenizer.ggml.add_space_prefix",
					 false));
	ck_assert(!belt_gguf_writer_bool(g.w, "tokenizer.ggml.add_bos_token",
					 false));
	ck_assert(!belt_gguf_writer_u32(g.w, "tokenizer.ggml.bos_token_id",
					0xFFFFFFFFu));
	ck_assert_msg(tmp_load(&g, &t, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(belt_tok_bos(t), -1);
	ck_assert(!belt_tok_add_bos(t));
	/* no prefix, all scores 0: leftmost pair first */
	expect_ids(t, "ab", true, (const int32_t[]){ 10 }, 1);
	/* "<0xNN>" pieces still decode as bytes, </s> as nothing */
	struct text s = decode_all(t, (const int32_t[]){ 4, 5, 2, 3, 12 }, 5,
				   false);
	ck_assert_str_eq(s.p, "\xc3\xa9" "A<x>");
	free(s.p);
	belt_tok_free(t);
}
END_TEST

static void expect_load_error(struct tmp_gguf *g, const char *want)
{
	static char dummy;
	struct belt_tokenizer *t = (struct belt_tokenizer *)(void *)&dummy;
	char err[BELT_ERR_SIZE] = "";
	ck_assert_int_eq(tmp_load(g, &t, err, sizeof err), -1);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err, want) && strstr(err, g->path),
		      "error '%s' should name the file and say '%s'", err, want);
}

START_TEST(bad_input)
{
	struct tmp_gguf g;
	small_vocab(&g, "gpt2", N_SMALL, true);
	expect_load_error(&g, "tokenizer model 'gpt2' needs tokenizer.ggml.merges, which is missing");

	small_vocab(&g, "rwkv", N_SMALL, true);
	expect_load_error(&g, "unsupported tokenizer model 'rwkv' (supported: llama, gpt2, bert)");

	small_vocab(&g, NULL, N_SMALL, true);
	expect_load_error(&g, "missing tokenizer.ggml.model");

	small_vocab(&g, "llama", N_SMALL - 1, true);
	expect_load_error(&g, "tokenizer.ggml.scores has 13 entries but tokenizer.ggml.tokens has 14");

	tmp_begin(&g);
	ck_assert(!belt_gguf_writer_str(g.w, "tokenizer.ggml.model", "llama"));
	expect_load_error(&g, "missing tokenizer.ggml.tokens");

	tmp_begin(&g);
	ck_assert(!belt_gguf_writer_str(g.w, "tokenizer.ggml.model", "llama"));
	ck_assert(!belt_gguf_writer_arr(g.w, "tokenizer.ggml.tokens",
					BELT_GGUF_INT32, small_types, N_SMALL));
	expect_load_error(&g, "tokenizer.ggml.tokens must be an array of strings");

	small_vocab(&g, "llama", N_SMALL, false);
	ck_assert(!belt_gguf_writer_arr(g.w, "tokenizer.ggml.token_type",
					BELT_GGUF_INT32, small_types, 3));
	expect_load_error(&g, "tokenizer.ggml.token_type has 3 entries");

	small_vocab(&g, "llama", 0, false);
	ck_assert(!belt_gguf_writer_u32(g.w, "tokenizer.ggml.add_bos_token", 1));
	expect_load_error(&g, "tokenizer.ggml.add_bos_token");

	char err[BELT_ERR_SIZE];
	struct belt_tokenizer *t = NULL;
	ck_assert_int_eq(belt_tok_load(NULL, &t, err, sizeof err), -1);
	ck_assert_int_eq(belt_tok_load(NULL, NULL, NULL, 0), -1);
	belt_tok_free(NULL);
}
END_TEST

/* ---- random bytes ---- */

/* The bytes ids stand for before decoding: pieces as they are (with U+2581
 * for ' '), byte tokens as their byte. */
static struct text raw_bytes(const struct belt_tokenizer *t, const struct ids *a)
{
	struct text s = { 0 };
	text_add(&s, "", 0);
	for (size_t i = 0; i < a->n; i++) {
		const char *p = belt_tok_piece(t, a->v[i]);
		unsigned b;
		if (strlen(p) == 6 && sscanf(p, "<0x%02X>", &b) == 1) {
			char c = (char)b;
			text_add(&s, &c, 1);
			continue;
		}
		text_add(&s, p, strlen(p));
	}
	return s;
}

/* Strict UTF-8 check (no overlongs, surrogates or values > U+10FFFF). */
static bool valid_utf8(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2
				       : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
		if (len == 0 || i + len > n)
			return false;
		unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
		for (unsigned k = 1; k < len; k++) {
			unsigned d = p[i + k];
			if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
				return false;
		}
		i += len;
	}
	return true;
}

/* Any bytes (NUL, invalid UTF-8, spaces) encode losslessly, and the stream
 * turns any id sequence into valid UTF-8. */
START_TEST(random_bytes)
{
	struct belt_tokenizer *t = load_shared("vocab/ggml-vocab-llama-spm.gguf");
	static const char alphabet[] = "ab \n\xc3\xa9\xe2\x96\x81\xf0\x9f\xa6\x99\x80\xff";
	unsigned seed = 12345;
	for (int iter = 0; iter < 2000; iter++) {
		char text[64];
		size_t n = (size_t)(iter % 40) + 1;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = (seed >> 16) & 0x7fff;
			text[i] = r % 3 ? alphabet[r % (sizeof alphabet - 1)]
					: (char)(r >> 4);
		}
		struct ids a = encode(t, text, n, false);
		struct text raw = raw_bytes(t, &a), esc = { 0 };
		text_add(&esc, "\xe2\x96\x81", 3);
		for (size_t i = 0; i < n; i++)
			text_add(&esc, text[i] == ' ' ? "\xe2\x96\x81" : &text[i],
				 text[i] == ' ' ? 3 : 1);
		ck_assert(raw.n == esc.n && memcmp(raw.p, esc.p, esc.n) == 0);
		free(esc.p);
		struct text s = decode_all(t, a.v, a.n, true);
		ck_assert(valid_utf8((const unsigned char *)s.p, s.n));
		for (size_t i = 0; i < a.n; i++) /* arbitrary ids too */
			a.v[i] = (int32_t)((a.v[i] * 7919u + (unsigned)iter) % 32000u);
		struct text u = decode_all(t, a.v, a.n, false);
		ck_assert(valid_utf8((const unsigned char *)u.p, u.n));
		free(a.v);
		free(raw.p);
		free(s.p);
		free(u.p);
	}
	belt_tok_free(t);
}
END_TEST

/* ---- speed ---- */

START_TEST(encode_speed)
{
	struct belt_tokenizer *t = load_shared("vocab/ggml-vocab-llama-spm.gguf");
	struct vocab_cases c;
	read_cases("llama-spm", &c);
	struct text big = { 0 };
	while (big.n < (1u << 20))
		for (int i = 0; i < c.n; i++) {
			text_add(&big, c.text[i], c.text_len[i]);
			text_add(&big, "\n", 1);
		}
	/* at most one token per byte, plus BOS and the dummy prefix */
	struct ids ids = { malloc((big.n + 2) * sizeof(int32_t)), 0, big.n + 2 };
	char err[BELT_ERR_SIZE];
	struct timespec a, b;
	ck_assert(ids.v);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_msg(belt_tok_encode(t, big.p, big.n, true, ids.v, ids.cap,
				      &ids.n, err, sizeof err) == 0, "%s", err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert(ids.n <= ids.cap);
	double s = (double)(b.tv_sec - a.tv_sec) +
		   1e-9 * (double)(b.tv_nsec - a.tv_nsec);
	printf("encode speed: %zu bytes -> %zu tokens in %.3f s: "
	       "%.0f tokens/s, %.2f MB/s\n", big.n, ids.n, s,
	       (double)ids.n / s, (double)big.n / s / 1e6);
	struct text back = decode_all(t, ids.v, ids.n, true);
	ck_assert(back.n == big.n && memcmp(back.p, big.p, big.n) == 0);
	free(back.p);
	free(ids.v);
	free(big.p);
	free_cases(&c);
	belt_tok_free(t);
}
END_TEST

static Suite *tokenizer_suite(void)
{
	Suite *s = suite_create("tokenizer");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, vocab_llama_spm);
	tcase_add_test(tc, vocab_phi3);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, reference_prompts);
	tcase_add_test(tc, reference_texts);
	tcase_add_test(tc, stream_utf8);
	tcase_add_test(tc, stream_strip_space);
	tcase_add_test(tc, small_vocab_semantics);
	tcase_add_test(tc, no_token_types);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, random_bytes);
	tcase_add_test(tc, encode_speed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tokenizer_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
