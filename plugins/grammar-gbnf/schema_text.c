/* Text for the schema converter: a growing buffer, GBNF literals and
 * class characters, and JSON text written as llama.cpp writes it (the
 * keys and the enum and const values are literals of the grammar, so the
 * way they are written is part of the language). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

static bool reserve(struct sc_buf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void sc_putn(struct sc_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

void sc_puts(struct sc_buf *b, const char *s)
{
	sc_putn(b, s, strlen(s));
}

void sc_printf(struct sc_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

char *sc_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	return d ? memcpy(d, s, n) : NULL;
}

void sc_buf_free(struct sc_buf *b)
{
	free(b->s);
	*b = (struct sc_buf){0};
}

void sc_lit(struct sc_buf *b, const char *s, size_t n)
{
	sc_putn(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sc_printf(b, "\\%c", c);
		else if (c == '\n')
			sc_puts(b, "\\n");
		else if (c == '\r')
			sc_puts(b, "\\r");
		else if (c == '\t')
			sc_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			sc_printf(b, "\\x%02X", c);
		else
			sc_putn(b, (const char *)&s[i], 1);
	}
	sc_putn(b, "\"", 1);
}

void sc_class_cp(struct sc_buf *b, uint32_t cp)
{
	if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9'))
		sc_printf(b, "%c", (char)cp);
	else if (cp < 0x100)
		sc_printf(b, "\\x%02X", cp);
	else if (cp < 0x10000)
		sc_printf(b, "\\u%04X", cp);
	else
		sc_printf(b, "\\U%08X", cp);
}

void sc_json_string(struct sc_buf *b, const char *s, size_t n)
{
	sc_putn(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
			: c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
		if (esc)
			sc_puts(b, esc);
		else if (c < 0x20)
			sc_printf(b, "\\u%04x", c);
		else
			sc_putn(b, (const char *)&s[i], 1);
	}
	sc_putn(b, "\"", 1);
}

/* The shortest of %.15g .. %.17g that reads back as d, with ".0" when it
 * looks like an integer. */
static void real(struct sc_buf *b, double d)
{
	char t[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(t, sizeof t, "%.*g", prec, d);
		if (strtod(t, NULL) == d)
			break;
	}
	sc_puts(b, t);
	if (!strpbrk(t, ".eEn"))
		sc_puts(b, ".0");
}

void sc_json_dump(struct sc_buf *b, const json_t *v)
{
	size_t i;
	const char *key;
	json_t *x;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		sc_puts(b, "{");
		i = 0;
		json_object_foreach((json_t *)v, key, x) {
			if (i++)
				sc_puts(b, ",");
			sc_json_string(b, key, strlen(key));
			sc_puts(b, ":");
			sc_json_dump(b, x);
		}
		sc_puts(b, "}");
		break;
	case JSON_ARRAY:
		sc_puts(b, "[");
		json_array_foreach(v, i, x) {
			if (i)
				sc_puts(b, ",");
			sc_json_dump(b, x);
		}
		sc_puts(b, "]");
		break;
	case JSON_STRING:
		sc_json_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		sc_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		real(b, json_real_value(v));
		break;
	case JSON_TRUE:
		sc_puts(b, "true");
		break;
	case JSON_FALSE:
		sc_puts(b, "false");
		break;
	case JSON_NULL:
		sc_puts(b, "null");
		break;
	}
}

uint32_t sc_utf8_next(const char *s, size_t n, size_t *i)
{
	unsigned char c = (unsigned char)s[*i];
	size_t k = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
	uint32_t cp = k == 0 ? c : k == 1 ? c & 0x1fu : k == 2 ? c & 0x0fu : c & 0x07u;
	(*i)++;
	for (; k && *i < n; k--, (*i)++)
		cp = cp << 6 | ((unsigned char)s[*i] & 0x3fu);
	return cp;
}
