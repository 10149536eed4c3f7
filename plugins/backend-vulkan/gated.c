/* plugins/backend-vulkan/gated.c: gated runs (belt/backend.h
 * table_run_gated). Each token slot of a gated plan waits, before its
 * gate command (record.c), for an event the host sets: gate_ev[slot % 2].
 * A gated run submits slot i + 1 before it waits for slot i, so that the
 * device runs position i + 1's layers while the host, once slot i is
 * done, reads its results, decides and writes what the gate command
 * reads, then sets the event. A slot's submission signals a fence of its
 * own (two in flight at most). Plain runs of a gated plan open both
 * gates first. */
#include <time.h>

#include "belt/error.h"
#include "plan.h"

static int set_gate(struct vk_ctx *ctx, int e, bool set, char *err, size_t errsz)
{
	if (ctx->gate_set[e] == set)
		return 0;
	VkResult r = set ? vkSetEvent(ctx->dev, ctx->gate_ev[e])
			 : vkResetEvent(ctx->dev, ctx->gate_ev[e]);
	if (r != VK_SUCCESS)
		return belt_errf(err, errsz, "vulkan: %s: %s", set ? "vkSetEvent" : "vkResetEvent",
				 vk_result(r));
	ctx->gate_set[e] = set;
	return 0;
}

int vk_gates_open(struct vk_ctx *ctx, char *err, size_t errsz)
{
	return set_gate(ctx, 0, true, err, errsz) || set_gate(ctx, 1, true, err, errsz) ? -1 : 0;
}

static double ns_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e9 + (double)(t1.tv_nsec - t0->tv_nsec);
}

/* Submit token slot i at pos + i (the start barrier before slot 0, the
 * barrier to the host after each), signalling gate_fence[i % 2]. */
static int submit_slot(struct vk_ctx *ctx, struct plan *pl, uint32_t pos, uint32_t i, char *err,
		       size_t errsz)
{
	bool lng = pl->long_from && pos + i + 1 >= pl->long_from;
	VkCommandBuffer cbs[3];
	uint32_t k = 0;
	if (i == 0)
		cbs[k++] = pl->start;
	cbs[k++] = pl->submit[i + 1] = lng ? pl->full_long[i] : pl->full[i];
	cbs[k++] = i % 2 ? pl->tail2 : pl->tail;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = k,
		.pCommandBuffers = cbs,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->gate_fence[i % 2]), "vkQueueSubmit");
	return 0;
}

static int wait_slot(struct vk_ctx *ctx, uint32_t i, char *err, size_t errsz)
{
	VkFence f = ctx->gate_fence[i % 2];
	VKCHECK(vkWaitForFences(ctx->dev, 1, &f, VK_TRUE, UINT64_MAX), "vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &f), "vkResetFences");
	return 0;
}

/* After a failure: let whatever was submitted through its gates and
 * finish, so that nothing waits on the host any more. */
static int drain(struct vk_ctx *ctx)
{
	char e[8];
	vk_gates_open(ctx, e, sizeof e);
	vkQueueWaitIdle(ctx->queue);
	vkResetFences(ctx->dev, 2, ctx->gate_fence);
	return -1;
}

int vk_table_run_gated(void *vctx, struct belt_table *t, uint32_t pos, uint32_t n,
		       int (*gate_fn)(void *ud, uint32_t i), void *ud, char *err,
		       size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	struct plan *pl = t ? t->priv : NULL;
	if (!pl || !pl->gated || pl->rows > 1)
		return belt_errf(err, errsz, "vulkan: table_run_gated: %s",
				 !pl ? "table not prepared"
				     : "not a one-row table with a gate (belt_table.gate)");
	if (n > pl->max_run || (uint64_t)pos + n > pl->max_pos)
		return belt_errf(err, errsz,
				 "vulkan: table_run_gated: positions %u..%u: at most %u at once "
				 "and below %llu",
				 pos, pos + n - 1, pl->max_run, (unsigned long long)pl->max_pos);
	if (!n)
		return 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*(volatile uint32_t *)pl->meta->map = pos;
	/* a slot after one that picks an end-of-generation id is never
	 * wanted: its dispatches return at once (argmax's stop word) */
	((volatile uint32_t *)pl->meta->map)[1] = 1;
	pl->submit[0] = pl->start;
	if (set_gate(ctx, 0, false, err, errsz) || set_gate(ctx, 1, false, err, errsz) ||
	    submit_slot(ctx, pl, pos, 0, err, errsz))
		return drain(ctx);
	int r = gate_fn(ud, 0);
	if (set_gate(ctx, 0, true, err, errsz))
		return drain(ctx);
	uint32_t done = 0;
	for (uint32_t i = 0; done == i; i++) {
		/* slot i is submitted, its gate open */
		bool next = r == 0 && i + 1 < n;
		if ((next && submit_slot(ctx, pl, pos, i + 1, err, errsz)) ||
		    wait_slot(ctx, i, err, errsz))
			return drain(ctx);
		if (r == BELT_GATE_STOP)
			break; /* slot i ran to no purpose */
		done = i + 1;
		if (!next)
			break;
		/* slot i + 2 will wait on slot i's event; slot i + 1 runs its
		 * layers while the host decides */
		if (set_gate(ctx, (int)(i % 2), false, err, errsz))
			return drain(ctx);
		r = gate_fn(ud, i + 1);
		if (set_gate(ctx, (int)((i + 1) % 2), true, err, errsz))
			return drain(ctx);
	}
	if (pl->qpool) {
		pl->wall_ns += ns_since(&t0);
		vk_profile_collect(ctx, pl, done);
	}
	return vk_check_messages(ctx, "table_run_gated", err, errsz) ? -1 : (int)done;
}
