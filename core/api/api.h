/* Internal side of the api layer. */
#ifndef BELT_API_API_H
#define BELT_API_API_H

#include "model/model.h"

/* The architecture plugins of the registry, for belt_model_open
 * (archs.c). */
extern const struct model_arch_plugins api_arch_plugins;

#endif
