/* Error messages into caller-owned buffers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "belt/error.h"

int belt_errf(char *err, size_t errsz, const char *fmt, ...)
{
	if (err && errsz) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int belt_err_prefix(char *err, size_t errsz, const char *prefix)
{
	if (!err || !errsz)
		return -1;
	char tmp[BELT_ERR_SIZE];
	snprintf(tmp, sizeof tmp, "%s", err);
	snprintf(err, errsz, "%s: %s", prefix, tmp);
	return -1;
}
