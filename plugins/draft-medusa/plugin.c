/* Draft "medusa": Medusa heads on the target's hidden state (medusa.h,
 * doc/drafting.md). The heads run as the drafter's commands at the
 * "hidden" tap, on the backend, after every pass; propose() turns their
 * candidates into a tree. Options: heads=FILE (the side file, required;
 * `belt --draft-heads FILE`), topk=N (candidates per head, 1..8, default
 * 4), min=P (the joint probability a path needs, default 0.05). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "medusa.h"

struct drafter {
	struct medusa_heads h;
	struct medusa_tree tree;
	float min_joint;
};

/* Parse "heads=FILE,topk=N,min=P" (any order; FILE without commas). */
static int parse_options(const char *options, char *path, size_t pathsz, int *topk,
			 float *min_joint, char *err, size_t errsz)
{
	for (const char *p = options; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *e = NULL;
		if (!strncmp(p, "heads=", 6) && len > 6 && len - 6 < pathsz) {
			memcpy(path, p + 6, len - 6);
			path[len - 6] = '\0';
		} else if (!strncmp(p, "topk=", 5)) {
			long v = strtol(p + 5, &e, 10);
			if (e != p + len || v < 1 || v > MEDUSA_TOPK_MAX)
				e = NULL;
			*topk = (int)v;
		} else if (!strncmp(p, "min=", 4)) {
			double v = strtod(p + 4, &e);
			if (e != p + len || !(v >= 0 && v <= 1))
				e = NULL;
			*min_joint = (float)v;
		}
		if (strncmp(p, "heads=", 6) && !e)
			return belt_errf(err, errsz,
					 "draft 'medusa': option '%.*s': expected heads=FILE, "
					 "topk=N (1..%d) or min=P (0..1)",
					 (int)len, p, MEDUSA_TOPK_MAX);
		if (!strncmp(p, "heads=", 6) && !(len > 6 && len - 6 < pathsz))
			return belt_errf(err, errsz, "draft 'medusa': option '%.*s': expected "
					 "heads=FILE", (int)len, p);
		p = end ? end + 1 : p + len;
	}
	if (!path[0])
		return belt_errf(err, errsz, "draft 'medusa': no heads file: give --draft-heads "
				 "FILE (option heads=FILE)");
	return 0;
}

static int create(int32_t n_vocab, uint32_t n_embd, const char *options, void **ctx, char *err,
		  size_t errsz)
{
	char path[4096] = "";
	int topk = 4;
	float min_joint = 0.05f;
	if (parse_options(options, path, sizeof path, &topk, &min_joint, err, errsz))
		return -1;
	struct drafter *d = calloc(1, sizeof *d);
	if (!d)
		return belt_errf(err, errsz, "draft 'medusa': out of memory");
	if (medusa_heads_open(&d->h, path, n_vocab, n_embd, (uint32_t)topk, err, errsz)) {
		free(d);
		return belt_err_prefix(err, errsz, "draft 'medusa'");
	}
	d->min_joint = min_joint;
	*ctx = d;
	return 0;
}

static void dfree(void *ctx)
{
	struct drafter *d = ctx;
	if (!d)
		return;
	medusa_heads_close(&d->h);
	free(d);
}

static int propose(void *ctx, const int32_t *history, size_t n_hist, const float *hidden,
		   struct belt_draft_node *nodes, int max, char *err, size_t errsz)
{
	(void)history;
	(void)n_hist;
	(void)err;
	(void)errsz;
	struct drafter *d = ctx;
	if (!hidden || max < 1)
		return 0; /* no tap here: nothing to go on */
	return medusa_tree_build(&d->tree, hidden, d->h.n_heads, d->h.topk, d->min_joint, nodes,
				 max);
}

static void accept(void *ctx, const int32_t *path, int n)
{
	(void)ctx;
	(void)path;
	(void)n;
}

static int tap(void *ctx, int out_type, struct belt_draft_tap *t, char *err, size_t errsz)
{
	(void)out_type;
	(void)err;
	(void)errsz;
	struct drafter *d = ctx;
	medusa_heads_tap(&d->h, t);
	return 0;
}

static const struct belt_draft_ops medusa_draft = {
	.abi = BELT_DRAFT_ABI,
	.name = "medusa",
	.description = "Medusa heads on the hidden state after the final norm (--draft-heads FILE)",
	.create = create,
	.free = dfree,
	.propose = propose,
	.accept = accept,
	.tap = tap,
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_draft(r, &medusa_draft, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "draft-medusa",
	.description = "Medusa draft heads (a GGUF side file) run at the hidden tap",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
