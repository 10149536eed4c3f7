/* buffer_copy (belt/backend.h, ABI 7) on any backend: regions applied in
 * order, each seeing what the ones before it wrote (the moves of a tree's
 * accepted path: slot 3 to 1, then 5 to 2, then 2 to 4, across two
 * buffers), bytes outside the regions untouched, and bad regions refused
 * with a message naming them. Included by the backend tests. */
#ifndef BELT_TESTS_COPY_CHECK_H
#define BELT_TESTS_COPY_CHECK_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "belt/backend.h"
#include "belt/plugin.h"

static inline void check_buffer_copy(const struct belt_backend_ops *B, void *ctx)
{
	ck_assert(BELT_ABI_HAS(B, 7) && B->buffer_copy);
	enum { ROW = 20, ROWS = 8 };
	uint8_t a[ROW * ROWS], b[ROW * ROWS], want_a[ROW * ROWS], want_b[ROW * ROWS];
	for (int i = 0; i < ROW * ROWS; i++) {
		a[i] = (uint8_t)(i * 7 + 1);
		b[i] = (uint8_t)(i * 13 + 5);
	}
	char err[256];
	struct belt_buffer *ba, *bb;
	ck_assert_msg(B->buffer_create(ctx, BELT_BUFFER_KV, sizeof a, &ba, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_msg(B->buffer_create(ctx, BELT_BUFFER_KV, sizeof b, &bb, err, sizeof err) == 0,
		      "%s", err);
	ck_assert(B->buffer_write(ctx, ba, 0, a, sizeof a, err, sizeof err) == 0);
	ck_assert(B->buffer_write(ctx, bb, 0, b, sizeof b, err, sizeof err) == 0);
	/* row moves in each buffer, interleaved as the core orders them */
	static const int from[3] = {3, 5, 2}, to[3] = {1, 2, 4};
	struct belt_copy r[6];
	for (int i = 0; i < 3; i++) {
		r[2 * i] = (struct belt_copy){ba, ba, (uint64_t)from[i] * ROW, (uint64_t)to[i] * ROW, ROW};
		r[2 * i + 1] = (struct belt_copy){bb, bb, (uint64_t)from[i] * ROW, (uint64_t)to[i] * ROW,
						  ROW};
	}
	memcpy(want_a, a, sizeof a);
	memcpy(want_b, b, sizeof b);
	for (int i = 0; i < 3; i++) {
		memmove(want_a + to[i] * ROW, want_a + from[i] * ROW, ROW);
		memmove(want_b + to[i] * ROW, want_b + from[i] * ROW, ROW);
	}
	ck_assert_msg(B->buffer_copy(ctx, r, 6, err, sizeof err) == 0, "%s", err);
	uint8_t got[ROW * ROWS];
	ck_assert(B->buffer_read(ctx, ba, 0, got, sizeof got, err, sizeof err) == 0);
	ck_assert_msg(!memcmp(got, want_a, sizeof got), "%s: buffer_copy, first buffer", B->name);
	ck_assert(B->buffer_read(ctx, bb, 0, got, sizeof got, err, sizeof err) == 0);
	ck_assert_msg(!memcmp(got, want_b, sizeof got), "%s: buffer_copy, second buffer", B->name);
	/* across buffers, and nothing at all */
	struct belt_copy x = {ba, bb, 0, 7 * ROW, ROW};
	memcpy(want_b + 7 * ROW, want_a, ROW);
	ck_assert_msg(B->buffer_copy(ctx, &x, 1, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(B->buffer_copy(ctx, NULL, 0, err, sizeof err) == 0, "%s", err);
	ck_assert(B->buffer_read(ctx, bb, 0, got, sizeof got, err, sizeof err) == 0);
	ck_assert_msg(!memcmp(got, want_b, sizeof got), "%s: buffer_copy across buffers", B->name);
	/* out of range, either side; a source overlapping its destination */
	struct belt_copy bad[3] = {{ba, bb, (uint64_t)1 << 40, 0, 8},
				   {ba, bb, 0, UINT64_MAX - 4, 8},
				   {ba, ba, 0, 4, 8}};
	for (int i = 0; i < 3; i++) {
		struct belt_copy two[2] = {x, bad[i]};
		err[0] = 0;
		ck_assert_int_eq(B->buffer_copy(ctx, two, 2, err, sizeof err), -1);
		ck_assert_msg(strstr(err, "buffer_copy") && (i == 2 ? strstr(err, "overlap") != NULL
								    : strstr(err, "outside") != NULL),
			      "%s: bad region %d: %s", B->name, i, err);
	}
	/* a refused call copies nothing (checked before any region runs) */
	ck_assert(B->buffer_read(ctx, bb, 0, got, sizeof got, err, sizeof err) == 0);
	ck_assert_msg(!memcmp(got, want_b, sizeof got), "%s: a refused buffer_copy wrote", B->name);
	B->buffer_destroy(ctx, ba);
	B->buffer_destroy(ctx, bb);
}

#endif
