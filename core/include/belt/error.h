/* belt/error.h: how library functions report errors.
 *
 * A function that can fail returns 0 on success and -1 on failure, and on
 * failure writes one line (no newline) into a caller-owned buffer
 * `char *err, size_t errsz` naming the file, key or argument and what was
 * expected. err may be NULL when the caller does not want the message. */
#ifndef BELT_ERROR_H
#define BELT_ERROR_H

#include <stddef.h>

/* A buffer size that holds any message belt writes. */
#define BELT_ERR_SIZE 512

/* printf into err (if not NULL); always returns -1 so callers can
 * `return belt_errf(err, errsz, ...)`. */
int belt_errf(char *err, size_t errsz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix an existing message in err with "prefix: "; returns -1. */
int belt_err_prefix(char *err, size_t errsz, const char *prefix);

#endif
