/* Reference-file helpers for the test suites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

const char *shared_path(const char *rel)
{
	static char buf[4][4096];
	static int next;
	const char *dir = getenv("BELT_SHARED_DIR");
	char *out = buf[next++ & 3];
	snprintf(out, sizeof buf[0], "%s/%s", dir ? dir : "../shared", rel);
	return out;
}

static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			char c = s[++i];
			*o++ = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
		} else
			*o++ = s[i];
	}
	*o = 0;
	return out;
}

/* Split one line into unescaped fields. */
static char **split(const char *line, size_t len, size_t *n)
{
	size_t cap = 8;
	char **f = malloc(cap * sizeof *f);
	*n = 0;
	const char *p = line, *end = line + len;
	for (;;) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		const char *stop = tab ? tab : end;
		if (*n == cap)
			f = realloc(f, (cap *= 2) * sizeof *f);
		f[(*n)++] = unescape(p, (size_t)(stop - p));
		if (!tab)
			break;
		p = tab + 1;
	}
	return f;
}

struct tsv *tsv_load(const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		perror(path);
		return NULL;
	}
	struct tsv *t = calloc(1, sizeof *t);
	char *line = NULL;
	size_t cap = 0, rows_cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, fp)) > 0) {
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		size_t n;
		char **f = split(line, (size_t)len, &n);
		if (!t->header) {
			t->header = f;
			t->n_cols = n;
			continue;
		}
		if (t->n_rows == rows_cap)
			t->rows = realloc(t->rows, (rows_cap = rows_cap * 2 + 16) * sizeof *t->rows);
		if (n < t->n_cols) { /* pad short rows with empty fields */
			f = realloc(f, t->n_cols * sizeof *f);
			while (n < t->n_cols)
				f[n++] = calloc(1, 1);
		}
		t->rows[t->n_rows++] = f;
	}
	free(line);
	fclose(fp);
	return t;
}

void tsv_free(struct tsv *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->n_rows; r++) {
		for (size_t c = 0; c < t->n_cols; c++)
			free(t->rows[r][c]);
		free(t->rows[r]);
	}
	for (size_t c = 0; c < t->n_cols; c++)
		free(t->header[c]);
	free(t->header);
	free(t->rows);
	free(t);
}

const char *tsv_get(const struct tsv *t, size_t r, const char *col)
{
	for (size_t c = 0; c < t->n_cols; c++)
		if (!strcmp(t->header[c], col))
			return t->rows[r][c];
	fprintf(stderr, "tsv: no column '%s'\n", col);
	abort();
}

int32_t *parse_ids(const char *s, size_t *n)
{
	size_t cap = 16;
	int32_t *ids = malloc(cap * sizeof *ids);
	*n = 0;
	char *end;
	for (;;) {
		long v = strtol(s, &end, 10);
		if (end == s)
			break;
		if (*n == cap)
			ids = realloc(ids, (cap *= 2) * sizeof *ids);
		ids[(*n)++] = (int32_t)v;
		s = end;
	}
	return ids;
}

void slurp_buf(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
}

long decoded(const char *text)
{
	const char *at = strstr(text, "belt: prompt ");
	at = at ? strstr(at, "; decode ") : NULL;
	return at ? strtol(at + 9, NULL, 10) : -1;
}
