/* Error and warning lines on stderr. What they quote comes from files and
 * the command line, so bytes that could move the cursor, clear the
 * screen or break the line are written as \xNN. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes) encoding a
 * printable character; 0 if there is none (a control character, C1
 * included, or a bad byte). */
static size_t printable_at(const unsigned char *s, size_t n)
{
	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (!len || len > n || s[0] > 0xf4)
		return 0;
	uint32_t cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0)
		return 0;
	return len;
}

static void put_escaped(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text);
	for (size_t i = 0; i < n;) {
		size_t len = printable_at(s + i, n - i);
		if (len) {
			fwrite(s + i, 1, len, stderr);
			i += len;
		} else {
			fprintf(stderr, "\\x%02x", s[i++]);
		}
	}
}

/* "belt[ cmd]: [what]" and the formatted message, escaped, on one line. */
static void vline(const char *cmd, const char *what, const char *fmt, va_list ap,
		  const char *tail)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
	fprintf(stderr, "belt%s%s: %s", cmd ? " " : "", cmd ? cmd : "", what);
	if (msg) {
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		put_escaped(msg);
		free(msg);
	} else {
		put_escaped(fmt);
	}
	fprintf(stderr, "%s\n", tail);
}

int cli_fail(const char *msg)
{
	return cli_error(NULL, "%s", msg);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(cmd, "", fmt, ap, "");
	va_end(ap);
	return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char tail[64];
	snprintf(tail, sizeof tail, " (see belt %s --help)", cmd);
	va_list ap;
	va_start(ap, fmt);
	vline(cmd, "", fmt, ap, tail);
	va_end(ap);
	return CLI_USAGE;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(cmd, "warning: ", fmt, ap, "");
	va_end(ap);
}
