/* conf/belt.yaml: defaults that a run may override. */
#ifndef BELT_ARCH_CONFIG_H
#define BELT_ARCH_CONFIG_H

#include <stddef.h>

/* Read the kernels: mapping of the first belt.yaml found in dirs
 * (':'-separated) as "op=variant,op=variant" into out. A missing file
 * leaves out empty; a malformed one is an error naming file:line:col. */
int belt_config_kernels(const char *dirs, char *out, size_t outsz, char *err,
			size_t errsz);

#endif
