/* plugins/backend-vulkan/profile.c: profiling (BELT_BACKEND_PROFILE, or
 * the profile setting): timestamp queries after every dispatch, summed
 * per command after each run, and the table of GPU time per command kind
 * printed to stderr at table_release. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "plan.h"

/* ---- profile ---- */

void vk_profile_print(const struct plan *pl)
{
	if (!pl->runs)
		return;
	char (*kind)[40] = calloc(pl->n_cmds, sizeof *kind);
	uint64_t *tk = calloc(pl->n_cmds, sizeof *tk);
	uint64_t *cl = calloc(pl->n_cmds, sizeof *cl);
	uint32_t nk = 0;
	if (!kind || !tk || !cl)
		goto out;
	uint64_t total = 0;
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		uint32_t k = 0;
		while (k < nk && strcmp(kind[k], pl->cmds[i].kind))
			k++;
		if (k == nk)
			memcpy(kind[nk++], pl->cmds[i].kind, sizeof kind[0]);
		tk[k] += pl->ticks[i];
		cl[k] += pl->calls[i];
		total += pl->ticks[i];
	}
	/* by time, largest first */
	for (uint32_t a = 0; a < nk; a++)
		for (uint32_t b = a + 1; b < nk; b++)
			if (tk[b] > tk[a]) {
				char kk[40];
				memcpy(kk, kind[a], 40);
				memcpy(kind[a], kind[b], 40);
				memcpy(kind[b], kk, 40);
				uint64_t x = tk[a];
				tk[a] = tk[b];
				tk[b] = x;
				x = cl[a];
				cl[a] = cl[b];
				cl[b] = x;
			}
	double tok = pl->tokens ? (double)pl->tokens : 1;
	double us = pl->ns_per_tick / 1000.0;
	fprintf(stderr,
		"belt vulkan profile: %" PRIu64 " runs, %" PRIu64
		" tokens, %u dispatches per token (%u commands in the core's "
		"table)\n",
		pl->runs, pl->tokens, pl->n_cmds, pl->n_orig);
	fprintf(stderr, "%-32s %10s %12s %10s %6s\n", "kind", "calls",
		"total us", "us/token", "%");
	for (uint32_t k = 0; k < nk; k++)
		fprintf(stderr, "%-32s %10" PRIu64 " %12.1f %10.2f %5.1f%%\n",
			kind[k], cl[k], tk[k] * us, tk[k] * us / tok,
			total ? 100.0 * (double)tk[k] / (double)total : 0.0);
	fprintf(stderr,
		"GPU time per token %.2f us (dispatches %.2f us, slot total "
		"%.2f us); host wall per run %.1f us, per token %.2f us; "
		"host submission per run (meta, command list, vkQueueSubmit) "
		"%.1f us\n",
		total * us / tok, total * us / tok, pl->slot_ticks * us / tok,
		pl->wall_ns / 1000.0 / (double)pl->runs,
		pl->wall_ns / 1000.0 / tok,
		pl->submit_ns / 1000.0 / (double)pl->runs);
out:
	free(kind);
	free(tk);
	free(cl);
}

int vk_profile_setup(struct vk_ctx *ctx, struct plan *pl, char *err,
			 size_t errsz)
{
	VkQueueFamilyProperties qf[32];
	uint32_t nq = vk_queue_families(ctx, qf, 32);
	uint32_t bits = ctx->qfamily < nq ? qf[ctx->qfamily].timestampValidBits
					  : 0;
	if (!bits || !(ctx->props.limits.timestampComputeAndGraphics ||
		       ctx->props.limits.timestampPeriod > 0)) {
		fprintf(stderr, "belt vulkan: BELT_VK_PROFILE: the queue has no "
				"timestamps; not profiling\n");
		return 0;
	}
	pl->ts_mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	pl->ns_per_tick = ctx->props.limits.timestampPeriod;
	pl->qbuf = calloc(pl->n_cmds + 1, sizeof *pl->qbuf);
	pl->ticks = calloc(pl->n_cmds + 1, sizeof *pl->ticks);
	pl->calls = calloc(pl->n_cmds + 1, sizeof *pl->calls);
	if (!pl->qbuf || !pl->ticks || !pl->calls)
		return belt_errf(err, errsz, "vulkan: out of memory");
	VkQueryPoolCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		/* slots twice (four times with long-context kernels), or a
		 * batched table's three variants */
		.queryCount = (pl->rows > 1 ? 3 : (pl->long_from ? 4 : 2) * pl->max_run) *
			      (pl->n_cmds + 1),
	};
	VKCHECK(vkCreateQueryPool(ctx->dev, &qci, NULL, &pl->qpool),
		"vkCreateQueryPool");
	return 0;
}

void vk_profile_add(struct vk_ctx *ctx, struct plan *pl, uint32_t qbase,
		    bool nohead)
{
	uint32_t nq = pl->n_cmds + 1;
	if (vkGetQueryPoolResults(ctx->dev, pl->qpool, qbase, nq,
				  nq * sizeof *pl->qbuf, pl->qbuf,
				  sizeof *pl->qbuf,
				  VK_QUERY_RESULT_64_BIT |
					  VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
		return;
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		if (nohead && pl->cmds[i].head)
			continue;
		pl->ticks[i] += (pl->qbuf[i + 1] - pl->qbuf[i]) & pl->ts_mask;
		pl->calls[i]++;
	}
	pl->slot_ticks += (pl->qbuf[nq - 1] - pl->qbuf[0]) & pl->ts_mask;
}

/* After a run of a one-row table: add the slots' timestamps up. */
void vk_profile_collect(struct vk_ctx *ctx, struct plan *pl, uint32_t n)
{
	uint32_t nq = pl->n_cmds + 1;
	for (uint32_t s = 0; s < n; s++) {
		VkCommandBuffer cb = pl->submit[s + 1];
		bool lng = pl->long_from && (cb == pl->full_long[s] ||
					     cb == pl->nohead_long[s]);
		bool nohead = cb != (lng ? pl->full_long[s] : pl->full[s]);
		vk_profile_add(ctx, pl,
			       ((lng ? 2 * pl->max_run : 0) +
				(nohead ? pl->max_run : 0) + s) * nq,
			       nohead);
	}
	pl->runs++;
	pl->tokens += n;
}
