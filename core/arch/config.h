/* conf/belt.yaml: defaults that a run may override. */
#ifndef BELT_ARCH_CONFIG_H
#define BELT_ARCH_CONFIG_H

#include <stddef.h>

#include "belt/backend.h"

#define BELT_CONFIG_SETTINGS 32

/* What belt.yaml says: kernel choices, and the settings of one backend. */
struct belt_config {
	char kernels[512];  /* "op=variant,op=variant" */
	char text[2048];    /* the settings' keys and values */
	struct belt_setting setting[BELT_CONFIG_SETTINGS];
	uint32_t n_setting;
};

/* Read the first belt.yaml found in dirs (':'-separated): its kernels:
 * mapping, and the mapping under backends: <backend> as key/value
 * settings. A missing file leaves c empty; a malformed one is an error
 * naming file:line:col. */
int belt_config_load(const char *dirs, const char *backend, struct belt_config *c,
		     char *err, size_t errsz);

#endif
