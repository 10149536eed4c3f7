/* plugins/sampler-gumbel: private declarations shared by its files. */
#ifndef BELT_SAMPLER_GUMBEL_H
#define BELT_SAMPLER_GUMBEL_H

#include "belt/sampler.h"

/* The sampler "gumbel" (cpu.c). */
extern const struct belt_sampler_ops gumbel_sampler_ops;

#endif
