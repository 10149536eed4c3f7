/* Messages about a place in the grammar text: "LINE:COL: ...", with the
 * column in characters (the text is valid UTF-8 by the time a position
 * is named, or the position is the first byte that is not). */
#include <stdarg.h>
#include <stdio.h>

#include "gbnf.h"

void gb_where(const char *text, size_t len, size_t at, unsigned long *line, unsigned long *col)
{
	*line = *col = 1;
	for (size_t i = 0; i < at && i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n' || (c == '\r' && (i + 1 == len || text[i + 1] != '\n'))) {
			++*line;
			*col = 1;
		} else if ((c & 0xc0) != 0x80 && c != '\r') {
			++*col; /* a continuation byte is part of the last character */
		}
	}
}

int gb_fail(char *err, size_t errsz, const char *text, size_t len, size_t at,
	    const char *fmt, ...)
{
	if (!err || !errsz)
		return -1;
	unsigned long line, col;
	gb_where(text, len, at, &line, &col);
	int n = snprintf(err, errsz, "%lu:%lu: ", line, col);
	if (n < 0 || (size_t)n >= errsz)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + n, errsz - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

const char *gb_describe(const char *text, size_t len, size_t at, char *buf, size_t bufsz)
{
	if (at >= len)
		return "the end of the grammar";
	unsigned char c = (unsigned char)text[at];
	if (c == '\n' || c == '\r')
		return "the end of the line";
	if (c < 0x20 || c == 0x7f) {
		snprintf(buf, bufsz, "byte 0x%02x", c);
	} else if (c < 0x80) {
		snprintf(buf, bufsz, "'%c'", c);
	} else {
		/* a whole character; the text was checked to be UTF-8 */
		size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
		if (at + n > len)
			n = len - at;
		snprintf(buf, bufsz, "'%.*s'", (int)n, text + at);
	}
	return buf;
}
