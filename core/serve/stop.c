/* Stop strings across token boundaries. The text not yet emitted is held;
 * after each piece, a complete stop string ends generation (what precedes
 * it is emitted, it and the rest are not), and otherwise everything is
 * emitted but the longest end of the held text that is the beginning of
 * some stop string. A match cannot start in emitted text: its start would
 * have been such an end. Stop strings are valid UTF-8 (jansson checks) and
 * pieces are whole characters, so what is held back starts a character. */
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int serve_stop_init(struct serve_stop *st, const char *const *strs, size_t n)
{
	*st = (struct serve_stop){0};
	if (!n)
		return 0;
	if (!(st->strs = calloc(n, sizeof *st->strs)))
		return -1;
	st->n = n;
	for (size_t i = 0; i < n; i++)
		if (!(st->strs[i] = strdup(strs[i]))) {
			serve_stop_free(st);
			return -1;
		}
	return 0;
}

void serve_stop_free(struct serve_stop *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->strs[i]);
	free(st->strs);
	free(st->held);
	*st = (struct serve_stop){0};
}

/* Length of the longest end of h[0..n) that is a proper beginning of s. */
static size_t partial(const char *h, size_t n, const char *s)
{
	size_t ls = strlen(s);
	for (size_t k = ls - 1 < n ? ls - 1 : n; k > 0; k--)
		if (!memcmp(h + n - k, s, k))
			return k;
	return 0;
}

int serve_stop_feed(struct serve_stop *st, const char *text, size_t len, serve_emit_fn emit,
		    void *ud)
{
	if (!st->n) {
		if (len)
			emit(ud, text, len);
		return 0;
	}
	if (st->n_held + len + 1 > st->cap) {
		size_t cap = (st->n_held + len + 1) * 2;
		char *h = realloc(st->held, cap);
		if (!h)
			return -1;
		st->held = h;
		st->cap = cap;
	}
	memcpy(st->held + st->n_held, text, len);
	st->n_held += len;
	size_t first = st->n_held; /* where the earliest complete stop string starts */
	for (size_t i = 0; i < st->n; i++) {
		const char *at = memmem(st->held, st->n_held, st->strs[i], strlen(st->strs[i]));
		if (at && (size_t)(at - st->held) < first)
			first = (size_t)(at - st->held);
	}
	if (first < st->n_held) {
		if (first)
			emit(ud, st->held, first);
		st->n_held = 0;
		return 1;
	}
	size_t keep = 0;
	for (size_t i = 0; i < st->n; i++) {
		size_t k = partial(st->held, st->n_held, st->strs[i]);
		if (k > keep)
			keep = k;
	}
	if (st->n_held > keep) {
		emit(ud, st->held, st->n_held - keep);
		memmove(st->held, st->held + st->n_held - keep, keep);
		st->n_held = keep;
	}
	return 0;
}

void serve_stop_flush(struct serve_stop *st, serve_emit_fn emit, void *ud)
{
	if (st->n_held)
		emit(ud, st->held, st->n_held);
	st->n_held = 0;
}
