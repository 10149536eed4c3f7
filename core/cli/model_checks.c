/* Warnings about a model that loads but will not run as its file says. */
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "cli/cli.h"

/* One more than the highest N of the file's "blk.N." tensors; 0 if none. */
static long file_layers(const struct belt_gguf *g)
{
	long n = 0;
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		const char *name = g->tensors[i].name;
		if (strncmp(name, "blk.", 4) || name[4] < '0' || name[4] > '9')
			continue;
		char *end;
		long l = strtol(name + 4, &end, 10);
		if (*end == '.' && l >= n && l < 1L << 20)
			n = l + 1;
	}
	return n;
}

void cli_model_warnings(const char *cmd, const struct belt_model *m, uint32_t n_ctx)
{
	double n_layer;
	long in_file = file_layers(belt_model_gguf(m));
	/* more layers than tensors fails to load: only fewer gets here */
	if (belt_model_hparam(m, "n_layer", &n_layer) && in_file > (long)n_layer)
		cli_warn(cmd, "%s.block_count is %ld but the file has tensors of %ld layers (blk.0 .. blk.%ld): only the first %ld run",
			 belt_model_arch(m), (long)n_layer, in_file, in_file - 1, (long)n_layer);
	uint32_t train = belt_model_n_ctx_train(m);
	if (n_ctx && train && n_ctx > train)
		cli_warn(cmd, "-c %u is more than the model's training context of %u", n_ctx, train);
}
