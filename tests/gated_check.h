/* A gated run (belt/backend.h table_run_gated) on any backend that has
 * one: a one-row table add -> logit_mask -> argmax, gated at logit_mask.
 * Each position's pick obeys the mask that gate_fn writes for it, though
 * gate_fn sleeps before writing (a gate that did not hold would let the
 * pick read the mask of the position before); gate_fn is called once per
 * position, in order, after the pick before it is readable; a stop ends
 * the run there, a last position after it; a plain run of the gated table goes through its gate.
 * Included by the backend tests. */
#ifndef BELT_TESTS_GATED_CHECK_H
#define BELT_TESTS_GATED_CHECK_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "belt/backend.h"
#include "cmd.h"
#include "mask_check.h"

#define GATED_N 1000 /* logits */
#define GATED_WORDS ((GATED_N + 31) / 32)

struct gated_check {
	const struct belt_backend_ops *B;
	void *ctx;
	struct belt_buffer *mask, *ids;
	uint32_t pos, calls, stop_at, last_at;
	char bad[512]; /* the first thing that went wrong */
};

/* The token position p's mask allows: a different one each position. */
static inline int32_t gated_token(uint32_t p)
{
	return (int32_t)((p * 37u + 5u) % GATED_N);
}

static inline void gated_mask(struct gated_check *g, int32_t allow)
{
	uint32_t m[GATED_WORDS] = {0};
	char err[256];
	m[allow / 32] = 1u << (allow % 32);
	if (g->B->buffer_write(g->ctx, g->mask, 0, m, sizeof m, err, sizeof err) && !g->bad[0])
		snprintf(g->bad, sizeof g->bad, "buffer_write: %s", err);
}

static inline int gated_fn(void *ud, uint32_t i)
{
	struct gated_check *g = ud;
	char err[256];
	uint32_t p = g->pos + i;
	if (i != g->calls++ && !g->bad[0])
		snprintf(g->bad, sizeof g->bad, "gate_fn(%u) after %u calls", i, g->calls - 1);
	int32_t id = -1;
	if (i > 0 && g->B->buffer_read(g->ctx, g->ids, (uint64_t)p * 4, &id, 4, err, sizeof err) &&
	    !g->bad[0])
		snprintf(g->bad, sizeof g->bad, "buffer_read: %s", err);
	if (i > 0 && id != gated_token(p - 1) && !g->bad[0])
		snprintf(g->bad, sizeof g->bad, "gate_fn(%u): position %u picked %d, want %d", i,
			 p - 1, id, gated_token(p - 1));
	if (i == g->stop_at)
		return 1;
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL); /* the device gets to the gate first */
	gated_mask(g, gated_token(p));
	return i == g->last_at ? BELT_GATE_LAST : 0;
}

/* A gated run of n from pos, stopping before stop_at, or after last_at
 * (n or more: neither). */
static inline void gated_run(struct gated_check *g, struct belt_table *t, uint32_t pos,
			     uint32_t n, uint32_t stop_at, uint32_t last_at)
{
	char err[256];
	g->pos = pos;
	g->calls = 0;
	g->stop_at = stop_at;
	g->last_at = last_at;
	gated_mask(g, GATED_N - 1); /* what the first pick must not see */
	int k = g->B->table_run_gated(g->ctx, t, pos, n, gated_fn, g, err, sizeof err);
	ck_assert_msg(k >= 0, "table_run_gated: %s", err);
	ck_assert_msg(!g->bad[0], "%s", g->bad);
	uint32_t end = last_at + 1 < n ? last_at + 1 : n; /* the positions to run */
	uint32_t want = stop_at < end ? stop_at : end;
	ck_assert_msg((uint32_t)k == want, "table_run_gated ran %d positions, want %u", k, want);
	ck_assert_msg(g->calls == (stop_at < end ? stop_at + 1 : end),
		      "gate_fn called %u times (n %u, stop at %u, last %u)", g->calls, n, stop_at,
		      last_at);
	int32_t got[16];
	ck_assert(g->B->buffer_read(g->ctx, g->ids, (uint64_t)(pos + 1) * 4, got,
				    (uint64_t)k * 4, err, sizeof err) == 0);
	for (int i = 0; i < k; i++)
		ck_assert_msg(got[i] == gated_token(pos + (uint32_t)i),
			      "gated run at %u: position %u picked %d, want %d", pos,
			      pos + (uint32_t)i, got[i], gated_token(pos + (uint32_t)i));
}

static inline void check_gated_run(const struct belt_backend_ops *B, void *ctx)
{
	ck_assert_msg(B->abi >= 5 && B->table_run_gated, "%s: no table_run_gated", B->name);
	char err[256];
	float l[GATED_N], zero[GATED_N] = {0};
	for (int i = 0; i < GATED_N; i++)
		l[i] = (float)((i * 7919) % 1013) / 100.0f;
	int32_t ids[65] = {0};
	struct gated_check g = {.B = B, .ctx = ctx};
	struct belt_buffer *bl = mask_check_buf(B, ctx, BELT_BUFFER_SCRATCH, l, sizeof l);
	struct belt_buffer *bz = mask_check_buf(B, ctx, BELT_BUFFER_SCRATCH, zero, sizeof zero);
	struct belt_buffer *bo = mask_check_buf(B, ctx, BELT_BUFFER_SCRATCH, zero, sizeof zero);
	g.mask = mask_check_buf(B, ctx, BELT_BUFFER_IO, zero, GATED_WORDS * 4);
	g.ids = mask_check_buf(B, ctx, BELT_BUFFER_IO, ids, sizeof ids);
	struct belt_cmd c[3];
	memset(c, 0, sizeof c);
	static const char *ops[] = {"add", "logit_mask", "argmax"};
	for (int i = 0; i < 3; i++) {
		c[i].kernel = B->kernel_find(ctx, ops[i], "default", BELT_TYPE_ANY);
		ck_assert(c[i].kernel);
		c[i].label = ops[i];
		c[i].layer = -1;
		c[i].head = i > 0;
	}
	/* the logits afresh each position (logit_mask writes -inf into them) */
	bind(&c[0], bl, 0, sizeof l, BELT_TYPE_F32);
	bind(&c[0], bz, 0, sizeof l, BELT_TYPE_F32);
	bind(&c[0], bo, 0, sizeof l, BELT_TYPE_F32);
	pi(&c[0], GATED_N);
	bind(&c[1], bo, 0, sizeof l, BELT_TYPE_F32);
	bind(&c[1], g.mask, 0, GATED_WORDS * 4, BELT_TYPE_I32);
	pi(&c[1], GATED_N);
	bind(&c[2], bo, 0, sizeof l, BELT_TYPE_F32);
	bind(&c[2], g.ids, 0, sizeof ids, BELT_TYPE_I32);
	pi(&c[2], GATED_N);
	c[2].patch = BELT_PATCH_ARGMAX_OUTPUT;
	struct belt_table tab;
	table_init(&tab, c, 3, 64, g.ids, 16);
	tab.gate = 1;
	ck_assert_msg(B->table_prepare(ctx, &tab, err, sizeof err) == 0, "%s", err);
	gated_run(&g, &tab, 0, 6, 99, 99);
	gated_run(&g, &tab, 6, 5, 3, 99);
	gated_run(&g, &tab, 9, 16, 0, 99);
	gated_run(&g, &tab, 9, 1, 99, 99);
	gated_run(&g, &tab, 10, 8, 99, 2);
	gated_run(&g, &tab, 13, 8, 99, 0);
	/* a plain run goes through the gate, with the mask as it is */
	gated_mask(&g, 123);
	ck_assert_msg(B->table_run(ctx, &tab, 20, 3, 0, err, sizeof err) == 0, "%s", err);
	ck_assert(B->buffer_read(ctx, g.ids, 21 * 4, ids, 12, err, sizeof err) == 0);
	ck_assert_msg(ids[0] == 123 && ids[1] == 123 && ids[2] == 123,
		      "plain run of a gated table picked %d %d %d, want 123", ids[0], ids[1],
		      ids[2]);
	gated_run(&g, &tab, 30, 16, 99, 99);
	B->table_release(ctx, &tab);
	struct belt_buffer *bufs[] = {bl, bz, bo, g.mask, g.ids};
	for (int i = 0; i < 5; i++)
		B->buffer_destroy(ctx, bufs[i]);
}

#endif
