/* The arena every compile and render allocates from, the growing buffers
 * in it, and the error exit that unwinds to the public entry point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/tpl.h"

struct tpl_chunk {
	struct tpl_chunk *next;
	size_t size, used;
	max_align_t data[];
};

#define CHUNK_MIN (64 * 1024)

_Noreturn void tpl_fail(struct tpl_ctx *c, int line, int col, const char *fmt, ...)
{
	if (c->err && c->errsz) {
		int k = line > 0 ? snprintf(c->err, c->errsz, "%d:%d: ", line, col) : 0;
		if (k < 0 || (size_t)k >= c->errsz)
			k = 0;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err + k, c->errsz - k, fmt, ap);
		va_end(ap);
		for (char *p = c->err; *p; p++) /* one line, whatever a message quotes */
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	longjmp(c->jb, 1);
}

void *tpl_alloc(struct tpl_ctx *c, size_t n)
{
	const size_t align = sizeof(max_align_t);
	n = (n + align - 1) / align * align;
	struct tpl_chunk *h = c->chunks;
	if (!h || h->size - h->used < n) {
		size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
		if (n > c->cap || c->used > c->cap - size)
			tpl_fail(c, 0, 0, "the template needs more than %zu MiB of memory",
				 c->cap >> 20);
		h = malloc(sizeof *h + size);
		if (!h)
			tpl_fail(c, 0, 0, "out of memory");
		h->size = size;
		h->used = 0;
		h->next = c->chunks;
		c->chunks = h;
		c->used += size;
	}
	void *p = (char *)h->data + h->used;
	h->used += n;
	memset(p, 0, n);
	return p;
}

char *tpl_strndup(struct tpl_ctx *c, const char *s, size_t n)
{
	char *p = tpl_alloc(c, n + 1);
	memcpy(p, s, n);
	return p;
}

void tpl_arena_free(struct tpl_ctx *c)
{
	while (c->chunks) {
		struct tpl_chunk *next = c->chunks->next;
		free(c->chunks);
		c->chunks = next;
	}
	c->used = 0;
}

void tpl_buf_put(struct tpl_ctx *c, struct tpl_buf *b, const char *s, size_t n)
{
	if (b->max && n > b->max - b->n)
		tpl_fail(c, 0, 0, "the rendered text exceeds %zu bytes", b->max);
	if (b->cap - b->n <= n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->n <= n)
			cap *= 2;
		char *p = tpl_alloc(c, cap);
		if (b->n)
			memcpy(p, b->p, b->n);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

void tpl_buf_puts(struct tpl_ctx *c, struct tpl_buf *b, const char *s)
{
	tpl_buf_put(c, b, s, strlen(s));
}

void tpl_buf_printf(struct tpl_ctx *c, struct tpl_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k > 0)
		tpl_buf_put(c, b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}
