/* The sampling flags that belt run and belt chat share (llama.cpp's
 * names): parsed into a struct belt_sampling. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "belt/sampler.h"
#include "cli/cli.h"

int cli_sampling_option(const char *cmd, int c, const char *arg, struct belt_sampling *s,
			bool *seed_given)
{
	long lv;
	char *end;
	switch (c) {
	case CLI_OPT_TEMP: return cli_float(cmd, "--temp", arg, &s->temp) ? 1 : -1;
	case CLI_OPT_TOP_P: return cli_float(cmd, "--top-p", arg, &s->top_p) ? 1 : -1;
	case CLI_OPT_MIN_P: return cli_float(cmd, "--min-p", arg, &s->min_p) ? 1 : -1;
	case CLI_OPT_REPEAT:
		return cli_float(cmd, "--repeat-penalty", arg, &s->repeat_penalty) ? 1 : -1;
	case CLI_OPT_PRESENCE:
		return cli_float(cmd, "--presence-penalty", arg, &s->presence_penalty) ? 1 : -1;
	case CLI_OPT_FREQUENCY:
		return cli_float(cmd, "--frequency-penalty", arg, &s->frequency_penalty) ? 1 : -1;
	case CLI_OPT_TOP_K:
		if (!cli_int(cmd, "--top-k", arg, 0, INT32_MAX, &lv))
			return -1;
		s->top_k = (int32_t)lv;
		return 1;
	case CLI_OPT_LAST_N:
		if (!cli_int(cmd, "--repeat-last-n", arg, -1, INT32_MAX, &lv))
			return -1;
		s->repeat_last_n = (int32_t)lv;
		return 1;
	case CLI_OPT_SEED:
		errno = 0;
		s->seed = strtoull(arg, &end, 0);
		if (errno || end == arg || *end || *arg == '-') {
			cli_usage_error(cmd, "--seed: expected an integer in 0..%llu, got '%s'",
					(unsigned long long)UINT64_MAX, arg);
			return -1;
		}
		*seed_given = true;
		return 1;
	}
	return 0;
}

void cli_sampling_seed(struct belt_sampling *s, bool given)
{
	if (given)
		return;
	s->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (!belt_sampling_greedy(s))
		fprintf(stderr, "belt: seed %llu\n", (unsigned long long)s->seed);
}
