/* Sampling settings: defaults, validation, and what they turn on. */
#include <math.h>

#include "belt/error.h"
#include "belt/sampler.h"

void belt_sampling_default(struct belt_sampling *p)
{
	*p = (struct belt_sampling){
		.temp = 0.8f,
		.top_k = 40,
		.top_p = 0.95f,
		.min_p = 0.05f,
		.repeat_penalty = 1.0f,
		.repeat_last_n = 64,
		.presence_penalty = 0.0f,
		.frequency_penalty = 0.0f,
		.seed = BELT_SEED_RANDOM,
	};
}

int belt_sampling_check(const struct belt_sampling *p, char *err,
			size_t errsz)
{
	/* written so that NaN fails every test */
	if (!(p->temp >= 0) || isinf(p->temp))
		return belt_errf(err, errsz, "--temp: expected a finite number >= 0, got %g",
				 p->temp);
	if (!(p->top_p > 0 && p->top_p <= 1))
		return belt_errf(err, errsz, "--top-p: expected a number in (0, 1], got %g",
				 p->top_p);
	if (!(p->min_p >= 0 && p->min_p <= 1))
		return belt_errf(err, errsz, "--min-p: expected a number in [0, 1], got %g",
				 p->min_p);
	if (!(p->repeat_penalty > 0) || isinf(p->repeat_penalty))
		return belt_errf(err, errsz,
				 "--repeat-penalty: expected a finite number > 0, got %g",
				 p->repeat_penalty);
	if (p->repeat_last_n < -1)
		return belt_errf(err, errsz,
				 "--repeat-last-n: expected -1 (whole context), 0 (off) or a window, got %d",
				 (int)p->repeat_last_n);
	if (!isfinite(p->presence_penalty))
		return belt_errf(err, errsz, "--presence-penalty: expected a finite number, got %g",
				 p->presence_penalty);
	if (!isfinite(p->frequency_penalty))
		return belt_errf(err, errsz, "--frequency-penalty: expected a finite number, got %g",
				 p->frequency_penalty);
	return 0;
}

bool belt_sampling_penalties(const struct belt_sampling *p)
{
	return p->repeat_last_n != 0 &&
	       (p->repeat_penalty != 1.0f || p->presence_penalty != 0.0f ||
		p->frequency_penalty != 0.0f);
}

bool belt_sampling_greedy(const struct belt_sampling *p)
{
	return !belt_sampling_draws(p->temp) && !belt_sampling_penalties(p);
}
