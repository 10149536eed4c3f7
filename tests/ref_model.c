/* The test helpers that load shared models and plugins (ref.h), apart
 * from ref.c so that suites that do not link libbelt can use the rest. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "belt/belt.h"
#include "ref.h"

struct belt_model *ref_load_model(const char *file)
{
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	char rel[256];
	snprintf(rel, sizeof rel, "models/%s", file);
	mp.path = shared_path(rel);
	mp.n_threads = 2;
	/* the same references hold for every backend */
	if (getenv("BELT_TEST_BACKEND"))
		mp.backend = getenv("BELT_TEST_BACKEND");
	struct belt_model *m;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	return m;
}

bool ref_use_test_plugins(const char *prog)
{
	const char *tp = getenv("BELT_TEST_PLUGINS"), *pp = getenv("BELT_PLUGIN_PATH");
	if (!tp) {
		fprintf(stderr, "%s: set BELT_TEST_PLUGINS to the test plugins' folder\n", prog);
		return false;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s%s%s", pp ? pp : "", pp ? ":" : "", tp);
	setenv("BELT_PLUGIN_PATH", path, 1);
	return true;
}
