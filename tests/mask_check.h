/* The logit_mask op (doc/ops.md) on any backend: a one-row table of
 * logit_mask then argmax over logits of several sizes and masks (none
 * allowed in a word, all, one bit, random bits): every logit the mask
 * leaves out becomes -inf, the others stay, and the argmax is the masked
 * one's (lowest index on ties). Included by the backend tests. */
#ifndef BELT_TESTS_MASK_CHECK_H
#define BELT_TESTS_MASK_CHECK_H

#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "belt/backend.h"
#include "cmd.h"

static inline struct belt_buffer *mask_check_buf(const struct belt_backend_ops *B, void *ctx,
						 enum belt_buffer_usage u, const void *data,
						 uint64_t size)
{
	char err[256];
	struct belt_buffer *b;
	ck_assert_msg(B->buffer_create(ctx, u, size, &b, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(B->buffer_write(ctx, b, 0, data, size, err, sizeof err) == 0, "%s", err);
	return b;
}

static inline void check_logit_mask(const struct belt_backend_ops *B, void *ctx)
{
	static const int ns[] = {1, 31, 33, 1000, 128256};
	char err[256];
	unsigned seed = 7;
	for (int s = 0; s < 5; s++) {
		int n = ns[s], words = (n + 31) / 32;
		float *l = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
		uint32_t *mask = calloc((size_t)words, 4);
		ck_assert(l && got && mask);
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			l[i] = (float)(seed >> 8 & 0xffff) / 4096.0f - 8.0f;
		}
		for (int w = 0; w < words; w++) {
			seed = seed * 1103515245u + 12345u;
			mask[w] = w % 4 == 0 ? 0 : w % 4 == 1 ? UINT32_MAX : w % 4 == 2 ? 1u << (seed % 32) : seed;
		}
		mask[words - 1] |= 1u << ((n - 1) % 32); /* one allowed at least */
		int want = -1;
		for (int i = 0; i < n; i++)
			if ((mask[i / 32] >> (i % 32) & 1) && (want < 0 || l[i] > l[want]))
				want = i;
		struct belt_buffer *bl = mask_check_buf(B, ctx, BELT_BUFFER_IO, l, (uint64_t)n * 4);
		struct belt_buffer *bm =
			mask_check_buf(B, ctx, BELT_BUFFER_IO, mask, (uint64_t)words * 4);
		int32_t ids[3] = {-1, -1, -1};
		struct belt_buffer *bi = mask_check_buf(B, ctx, BELT_BUFFER_IO, ids, sizeof ids);
		struct belt_cmd c[2];
		memset(c, 0, sizeof c);
		c[0].kernel = B->kernel_find(ctx, "logit_mask", "default", BELT_TYPE_ANY);
		c[1].kernel = B->kernel_find(ctx, "argmax", "default", BELT_TYPE_ANY);
		ck_assert(c[0].kernel && c[1].kernel);
		c[0].label = "logit_mask";
		c[1].label = "argmax";
		c[0].head = c[1].head = true;
		c[0].layer = c[1].layer = -1;
		c[1].patch = BELT_PATCH_ARGMAX_OUTPUT;
		bind(&c[0], bl, 0, (uint64_t)n * 4, BELT_TYPE_F32);
		bind(&c[0], bm, 0, (uint64_t)words * 4, BELT_TYPE_I32);
		pi(&c[0], n);
		bind(&c[1], bl, 0, (uint64_t)n * 4, BELT_TYPE_F32);
		bind(&c[1], bi, 0, sizeof ids, BELT_TYPE_I32);
		pi(&c[1], n);
		struct belt_table tab;
		table_init(&tab, c, 2, 2, bi, 0);
		ck_assert_msg(B->table_prepare(ctx, &tab, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(B->table_run(ctx, &tab, 0, 1, 0, err, sizeof err) == 0, "%s", err);
		ck_assert(B->buffer_read(ctx, bi, 0, ids, sizeof ids, err, sizeof err) == 0);
		ck_assert(B->buffer_read(ctx, bl, 0, got, (uint64_t)n * 4, err, sizeof err) == 0);
		ck_assert_msg(ids[1] == want, "logit_mask n=%d: argmax %d, want %d", n, ids[1], want);
		for (int i = 0; i < n; i++) {
			bool on = mask[i / 32] >> (i % 32) & 1;
			ck_assert_msg(on ? got[i] == l[i] : isinf(got[i]) && got[i] < 0,
				      "logit_mask n=%d: logit %d is %g (bit %d, was %g)", n, i, got[i],
				      on, l[i]);
		}
		B->table_release(ctx, &tab);
		B->buffer_destroy(ctx, bl);
		B->buffer_destroy(ctx, bm);
		B->buffer_destroy(ctx, bi);
		free(l);
		free(got);
		free(mask);
	}
}

#endif
