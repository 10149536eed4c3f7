/* Tests for core/gguf: writer -> reader round trips, the real model and
 * vocabulary files, and malformed images that must fail with a message
 * naming what is wrong. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/gguf_writer.h"

/* ---- helpers: files ---- */

static char *shared_path(const char *rel)
{
	const char *dir = getenv("BELT_SHARED_DIR");
	ck_assert_msg(dir && *dir, "BELT_SHARED_DIR is not set (run via make check)");
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	ck_assert_ptr_nonnull(p);
	snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

static uint8_t *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	uint8_t *b = malloc(n ? (size_t)n : 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* A fresh temporary path (the file exists, empty); caller frees. */
static char *temp_path(void)
{
	const char *dir = getenv("TMPDIR");
	char *p = malloc(4096);
	ck_assert_ptr_nonnull(p);
	snprintf(p, 4096, "%s/belt-gguf-test-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(p);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Write w to a temp file and return the image in memory. */
static uint8_t *image_of(const struct belt_gguf_writer *w, size_t *size)
{
	char err[BELT_ERR_SIZE];
	char *path = temp_path();
	ck_assert_msg(belt_gguf_writer_write(w, path, err, sizeof err) == 0,
		      "%s", err);
	uint8_t *img = read_all(path, size);
	unlink(path);
	free(path);
	return img;
}

/* ---- helpers: fields of a writer-made (valid) image ---- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void set32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void set64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t vsize(uint32_t t)
{
	static const size_t sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
	return sz[t];
}

/* Offset just past a value of type t stored at off. */
static size_t skip_value(const uint8_t *img, size_t off, uint32_t t)
{
	if (t == BELT_GGUF_STRING)
		return off + 8 + le64(img + off);
	if (t != BELT_GGUF_ARRAY)
		return off + vsize(t);
	uint32_t et = le32(img + off);
	uint64_t n = le64(img + off + 4);
	off += 12;
	for (uint64_t i = 0; i < n; i++)
		off = skip_value(img, off, et);
	return off;
}

/* Offset of kv i (its key length field). */
static size_t kv_at(const uint8_t *img, uint64_t i)
{
	size_t off = 24;
	for (uint64_t k = 0; k < i; k++) {
		off += 8 + le64(img + off);
		off = skip_value(img, off + 4, le32(img + off));
	}
	return off;
}

/* Offset of kv i's type field (the value follows it). */
static size_t kv_type_at(const uint8_t *img, uint64_t i)
{
	size_t off = kv_at(img, i);
	return off + 8 + le64(img + off);
}

/* Offset of tensor info i (its name length field). */
static size_t tensor_at(const uint8_t *img, uint64_t i)
{
	size_t off = kv_at(img, le64(img + 16));
	for (uint64_t k = 0; k < i; k++) {
		off += 8 + le64(img + off);
		off += 4 + 8 * le32(img + off) + 4 + 8;
	}
	return off;
}

/* Fields of tensor info i. */
static size_t t_ndims_at(const uint8_t *img, uint64_t i)
{
	size_t off = tensor_at(img, i);
	return off + 8 + le64(img + off);
}

static size_t t_ne_at(const uint8_t *img, uint64_t i, uint32_t d)
{
	return t_ndims_at(img, i) + 4 + 8 * d;
}

static size_t t_type_at(const uint8_t *img, uint64_t i)
{
	size_t off = t_ndims_at(img, i);
	return off + 4 + 8 * le32(img + off);
}

static size_t t_offset_at(const uint8_t *img, uint64_t i)
{
	return t_type_at(img, i) + 4;
}

/* ---- the standard test image ---- */

static const float data_a[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* kv: 0 general.alignment, 1 general.name, 2 t.i32, 3 t.f32, 4 t.bool,
 * 5 t.arr, 6 t.strs; tensors: 0 "a" f32 {4,2}, 1 "b" q8_0 {64},
 * 2 "c" f16 {8,2,2}. */
static uint8_t *std_image(size_t *size)
{
	static const uint32_t arr[3] = {1, 2, 3};
	static const char *const strs[2] = {"a", "bc"};
	uint8_t q8[2 * 34], f16[64];
	for (size_t i = 0; i < sizeof q8; i++)
		q8[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof f16; i++)
		f16[i] = (uint8_t)(255 - i);
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(belt_gguf_writer_u32(w, "general.alignment", 32), 0);
	ck_assert_int_eq(belt_gguf_writer_str(w, "general.name", "test"), 0);
	ck_assert_int_eq(belt_gguf_writer_i32(w, "t.i32", -5), 0);
	ck_assert_int_eq(belt_gguf_writer_f32(w, "t.f32", 1.5f), 0);
	ck_assert_int_eq(belt_gguf_writer_bool(w, "t.bool", true), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "t.arr", BELT_GGUF_UINT32, arr, 3), 0);
	ck_assert_int_eq(belt_gguf_writer_arr_str(w, "t.strs", strs, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "a", BELT_TYPE_F32, 2,
						 (int64_t[]){4, 2}, data_a), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "b", BELT_TYPE_Q8_0, 1,
						 (int64_t[]){64}, q8), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "c", BELT_TYPE_F16, 3,
						 (int64_t[]){8, 2, 2}, f16), 0);
	uint8_t *img = image_of(w, size);
	belt_gguf_writer_free(w);
	return img;
}

/* Open an image (copied to an exact-size buffer so that overreads show
 * under valgrind/ASan) that must fail with a message containing want. */
static void expect_fail(const uint8_t *img, size_t size, const char *want)
{
	char err[BELT_ERR_SIZE] = "";
	uint8_t *copy = malloc(size ? size : 1);
	ck_assert_ptr_nonnull(copy);
	if (size)
		memcpy(copy, img, size);
	struct belt_gguf *g = belt_gguf_open_mem(copy, size, "x.gguf", err,
						 sizeof err);
	belt_gguf_close(g);
	free(copy);
	ck_assert_msg(g == NULL, "expected failure containing \"%s\"", want);
	ck_assert_msg(!strncmp(err, "x.gguf: ", 8), "no file name in: %s", err);
	ck_assert_msg(strstr(err, want), "\"%s\" not in: %s", want, err);
	ck_assert_ptr_null(strchr(err, '\n'));
}

/* ---- round trips ---- */

START_TEST(test_std_image_reads)
{
	size_t size;
	char err[BELT_ERR_SIZE];
	uint8_t *img = std_image(&size);
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "std", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->version, 3);
	ck_assert_uint_eq(g->n_kv, 7);
	ck_assert_uint_eq(g->n_tensors, 3);
	ck_assert_uint_eq(g->alignment, 32);
	ck_assert_uint_eq(g->data_offset % 32, 0);
	ck_assert_str_eq(g->path, "std");
	const char *keys[] = {"general.alignment", "general.name", "t.i32",
			      "t.f32", "t.bool", "t.arr", "t.strs"};
	for (int i = 0; i < 7; i++) /* insertion order kept */
		ck_assert_str_eq(g->kv[i].key, keys[i]);
	const struct belt_gguf_tensor *a = belt_gguf_find_tensor(g, "a");
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->n_dims, 2);
	ck_assert_int_eq(a->ne[0], 4);
	ck_assert_int_eq(a->ne[1], 2);
	ck_assert_int_eq(a->ne[2], 1);
	ck_assert_int_eq(a->ne[3], 1);
	ck_assert_uint_eq(a->size, 32);
	ck_assert_int_eq(memcmp(a->data, data_a, 32), 0);
	const struct belt_gguf_tensor *c = belt_gguf_find_tensor(g, "c");
	ck_assert_uint_eq(c->size, 64);
	ck_assert_int_eq(c->ne[2], 2);
	ck_assert_ptr_eq(c->data, g->base + g->data_offset + c->offset);
	ck_assert_ptr_null(belt_gguf_find_tensor(g, "d"));
	belt_gguf_close(g);
	free(img);
}
END_TEST

START_TEST(test_roundtrip_metadata)
{
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	static const uint8_t u8[] = {0, 1, 255};
	static const int8_t i8[] = {-128, 0, 127};
	static const uint16_t u16[] = {0, 65535};
	static const int16_t i16[] = {-32768, 32767};
	static const uint32_t u32[] = {0, 4294967295u};
	static const int32_t i32[] = {INT32_MIN, -1, INT32_MAX};
	static const float f32[] = {-1.25f, 3.5f};
	static const uint8_t bl[] = {1, 0, 1};
	static const uint64_t u64[] = {UINT64_MAX, 7};
	static const int64_t i64[] = {INT64_MIN, INT64_MAX};
	static const double f64[] = {1e300, -2.5};
	static const char *const strs[] = {"hello", "", "wörld", "x y"};
	ck_assert_int_eq(belt_gguf_writer_u32(w, "s.u32", 4000000000u), 0);
	ck_assert_int_eq(belt_gguf_writer_i32(w, "s.i32", -123456), 0);
	ck_assert_int_eq(belt_gguf_writer_f32(w, "s.f32", 0.1f), 0);
	ck_assert_int_eq(belt_gguf_writer_bool(w, "s.false", false), 0);
	ck_assert_int_eq(belt_gguf_writer_bool(w, "s.true", true), 0);
	ck_assert_int_eq(belt_gguf_writer_str(w, "s.str", "a string"), 0);
	ck_assert_int_eq(belt_gguf_writer_str(w, "s.empty", ""), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.u8", BELT_GGUF_UINT8, u8, 3), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.i8", BELT_GGUF_INT8, i8, 3), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.u16", BELT_GGUF_UINT16, u16, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.i16", BELT_GGUF_INT16, i16, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.u32", BELT_GGUF_UINT32, u32, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.i32", BELT_GGUF_INT32, i32, 3), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.f32", BELT_GGUF_FLOAT32, f32, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.bool", BELT_GGUF_BOOL, bl, 3), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.u64", BELT_GGUF_UINT64, u64, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.i64", BELT_GGUF_INT64, i64, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.f64", BELT_GGUF_FLOAT64, f64, 2), 0);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "a.none", BELT_GGUF_INT32, NULL, 0), 0);
	ck_assert_int_eq(belt_gguf_writer_arr_str(w, "a.str", strs, 4), 0);
	ck_assert_int_eq(belt_gguf_writer_arr_str(w, "a.str0", NULL, 0), 0);
	/* invalid element types are refused */
	ck_assert_int_eq(belt_gguf_writer_arr(w, "bad", BELT_GGUF_STRING, u8, 1), -1);
	ck_assert_int_eq(belt_gguf_writer_arr(w, "bad", BELT_GGUF_ARRAY, u8, 1), -1);
	ck_assert_int_eq(belt_gguf_writer_u32(w, "", 1), -1);

	size_t size;
	char err[BELT_ERR_SIZE];
	uint8_t *img = image_of(w, &size);
	belt_gguf_writer_free(w);
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "rt", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->n_kv, 21);
	ck_assert_uint_eq(g->n_tensors, 0);

	int64_t iv;
	double fv;
	bool bv;
	struct belt_gguf_str sv;
	ck_assert_int_eq(belt_gguf_get_int(g, "s.u32", &iv, err, sizeof err), 1);
	ck_assert_int_eq(iv, 4000000000ll);
	ck_assert_int_eq(belt_gguf_find(g, "s.u32")->type, BELT_GGUF_UINT32);
	ck_assert_int_eq(belt_gguf_get_int(g, "s.i32", &iv, err, sizeof err), 1);
	ck_assert_int_eq(iv, -123456);
	ck_assert_int_eq(belt_gguf_get_float(g, "s.f32", &fv, err, sizeof err), 1);
	ck_assert(fv == (double)0.1f);
	ck_assert_int_eq(belt_gguf_get_float(g, "s.i32", &fv, err, sizeof err), 1);
	ck_assert(fv == -123456.0);
	ck_assert_int_eq(belt_gguf_get_bool(g, "s.false", &bv, err, sizeof err), 1);
	ck_assert(!bv);
	ck_assert_int_eq(belt_gguf_get_bool(g, "s.true", &bv, err, sizeof err), 1);
	ck_assert(bv);
	ck_assert_int_eq(belt_gguf_get_str(g, "s.str", &sv, err, sizeof err), 1);
	ck_assert_uint_eq(sv.len, 8);
	ck_assert_int_eq(memcmp(sv.ptr, "a string", 8), 0);
	ck_assert_int_eq(belt_gguf_get_str(g, "s.empty", &sv, err, sizeof err), 1);
	ck_assert_uint_eq(sv.len, 0);

	const struct belt_gguf_kv *kv = belt_gguf_find(g, "a.u8");
	ck_assert_int_eq(kv->type, BELT_GGUF_ARRAY);
	ck_assert_int_eq(kv->v.arr.type, BELT_GGUF_UINT8);
	ck_assert_int_eq(belt_gguf_arr_int(kv, 2), 255);
	ck_assert_int_eq(belt_gguf_arr_int(kv, 3), 0); /* out of range */
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i8"), 0), -128);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.u16"), 1), 65535);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i16"), 0), -32768);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.u32"), 1), 4294967295ll);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i32"), 0), INT32_MIN);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i32"), 2), INT32_MAX);
	ck_assert(belt_gguf_arr_float(belt_gguf_find(g, "a.f32"), 0) == -1.25);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.f32"), 1), 3);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.bool"), 1), 0);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.bool"), 2), 1);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.u64"), 1), 7);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i64"), 0), INT64_MIN);
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "a.i64"), 1), INT64_MAX);
	ck_assert(belt_gguf_arr_float(belt_gguf_find(g, "a.f64"), 0) == 1e300);
	ck_assert(belt_gguf_arr_float(belt_gguf_find(g, "a.i32"), 1) == -1.0);
	ck_assert_uint_eq(belt_gguf_find(g, "a.none")->v.arr.n, 0);

	kv = belt_gguf_find(g, "a.str");
	ck_assert_int_eq(kv->v.arr.type, BELT_GGUF_STRING);
	ck_assert_uint_eq(kv->v.arr.n, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(kv->v.arr.strs[i].len, strlen(strs[i]));
		ck_assert_int_eq(memcmp(kv->v.arr.strs[i].ptr, strs[i],
					strlen(strs[i])), 0);
	}
	ck_assert_uint_eq(belt_gguf_find(g, "a.str0")->v.arr.n, 0);
	belt_gguf_close(g);
	free(img);
}
END_TEST

START_TEST(test_getters)
{
	size_t size;
	char err[BELT_ERR_SIZE];
	uint8_t *img = std_image(&size);
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "g.gguf", err, sizeof err);
	ck_assert_ptr_nonnull(g);
	int64_t iv = 42;
	double fv;
	bool bv;
	struct belt_gguf_str sv;
	ck_assert_int_eq(belt_gguf_get_int(g, "absent", &iv, err, sizeof err), 0);
	ck_assert_int_eq(iv, 42);
	ck_assert_int_eq(belt_gguf_get_float(g, "absent", &fv, err, sizeof err), 0);
	ck_assert_int_eq(belt_gguf_get_bool(g, "absent", &bv, err, sizeof err), 0);
	ck_assert_int_eq(belt_gguf_get_str(g, "absent", &sv, err, sizeof err), 0);
	ck_assert_int_eq(belt_gguf_get_int(g, "general.name", &iv, err, sizeof err), -1);
	ck_assert_str_eq(err, "g.gguf: key 'general.name': type string, expected an integer");
	ck_assert_int_eq(belt_gguf_get_int(g, "t.bool", &iv, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "type bool, expected an integer"));
	ck_assert_int_eq(belt_gguf_get_int(g, "t.f32", &iv, err, sizeof err), -1);
	ck_assert_int_eq(belt_gguf_get_float(g, "t.strs", &fv, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "key 't.strs': type array of string, expected a number"));
	ck_assert_int_eq(belt_gguf_get_bool(g, "t.i32", &bv, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "type int32, expected bool"));
	ck_assert_int_eq(belt_gguf_get_str(g, "t.arr", &sv, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "type array of uint32, expected string"));
	ck_assert_int_eq(belt_gguf_get_int(g, "general.alignment", &iv, NULL, 0), 1);
	ck_assert_int_eq(iv, 32);
	ck_assert_int_eq(belt_gguf_get_str(g, "general.name", &sv, NULL, 0), 1);
	ck_assert_int_eq(memcmp(sv.ptr, "test", 4), 0);
	ck_assert_ptr_null(belt_gguf_find(g, NULL));
	ck_assert_ptr_null(belt_gguf_find(NULL, "x"));
	ck_assert_str_eq(belt_gguf_vtype_name(BELT_GGUF_UINT32), "uint32");
	ck_assert_str_eq(belt_gguf_vtype_name(BELT_GGUF_FLOAT64), "float64");
	ck_assert_str_eq(belt_gguf_vtype_name(13), "?");
	ck_assert_str_eq(belt_gguf_vtype_name(-1), "?");
	belt_gguf_close(g);
	/* a uint64 above INT64_MAX is out of range for get_int */
	free(img);
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	static const uint64_t big[1] = {UINT64_MAX};
	ck_assert_int_eq(belt_gguf_writer_arr(w, "k", BELT_GGUF_UINT64, big, 1), 0);
	img = image_of(w, &size);
	belt_gguf_writer_free(w);
	/* turn "array of 1 uint64" (u32 type, u32 etype, u64 n, u64 value)
	 * into "uint64 scalar" by moving the value and keeping the length */
	uint8_t *v = img + kv_type_at(img, 0);
	set32(v, BELT_GGUF_UINT64);
	set64(v + 4, UINT64_MAX);
	memmove(v + 12, v + 24, size - (size_t)(v + 24 - img));
	size -= 12;
	g = belt_gguf_open_mem(img, size, "big", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_int_eq(belt_gguf_get_int(g, "k", &iv, err, sizeof err), -1);
	ck_assert_str_eq(err, "big: key 'k': value 18446744073709551615 out of range for int64");
	ck_assert_int_eq(belt_gguf_get_float(g, "k", &fv, err, sizeof err), 1);
	ck_assert(fv == 18446744073709551615.0);
	belt_gguf_close(g);
	free(img);
}
END_TEST

struct fill_state {
	uint64_t calls, next, max_piece;
	int fail_at; /* fail on this call (1-based), 0 never */
};

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i * 2654435761u >> 13);
}

static int fill_pattern(void *ud, void *dst, uint64_t offset, uint64_t n)
{
	struct fill_state *s = ud;
	s->calls++;
	if (s->fail_at && s->calls == (uint64_t)s->fail_at)
		return -1;
	ck_assert_uint_eq(offset, s->next); /* consecutive pieces */
	s->next += n;
	if (n > s->max_piece)
		s->max_piece = n;
	for (uint64_t i = 0; i < n; i++)
		((uint8_t *)dst)[i] = pattern(offset + i);
	return 0;
}

START_TEST(test_roundtrip_tensors)
{
	float f[3 * 5];
	uint16_t h[32];
	uint8_t q4[2 * 3 * 18], i32[2 * 3 * 4 * 5 * 4];
	for (int i = 0; i < 15; i++)
		f[i] = (float)i * 0.5f;
	for (int i = 0; i < 32; i++)
		h[i] = belt_f32_to_fp16((float)i);
	for (size_t i = 0; i < sizeof q4; i++)
		q4[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof i32; i++)
		i32[i] = (uint8_t)(i * 13);
	const uint64_t big_n = 3 * 1048576 + 5; /* i8: several 1 MiB pieces */
	struct fill_state fs = {0};
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	ck_assert_int_eq(belt_gguf_writer_str(w, "general.architecture", "t"), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "f32.1d", BELT_TYPE_F32, 1,
						 (int64_t[]){15}, f), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "f16.2d", BELT_TYPE_F16, 2,
						 (int64_t[]){16, 2}, h), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "q4_0.3d", BELT_TYPE_Q4_0, 3,
						 (int64_t[]){64, 1, 3}, q4), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "i32.4d", BELT_TYPE_I32, 4,
						 (int64_t[]){2, 3, 4, 5}, i32), 0);
	ck_assert_int_eq(belt_gguf_writer_tensor_fn(w, "big", BELT_TYPE_I8, 1,
						    (int64_t[]){(int64_t)big_n},
						    fill_pattern, &fs), 0);
	/* invalid shapes and types are refused */
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", BELT_TYPE_Q8_0, 1,
						 (int64_t[]){33}, q4), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", BELT_TYPE_F32, 0,
						 (int64_t[]){1}, f), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", BELT_TYPE_F32, 5,
						 (int64_t[]){1, 1, 1, 1, 1}, f), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", BELT_TYPE_F32, 1,
						 (int64_t[]){-1}, f), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", (enum belt_type)5, 1,
						 (int64_t[]){1}, f), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "", BELT_TYPE_F32, 1,
						 (int64_t[]){1}, f), -1);
	ck_assert_int_eq(belt_gguf_writer_tensor(w, "x", BELT_TYPE_F32, 2,
						 (int64_t[]){INT64_MAX, 4}, f), -1);

	size_t size;
	char err[BELT_ERR_SIZE];
	uint8_t *img = image_of(w, &size);
	belt_gguf_writer_free(w);
	ck_assert_uint_eq(fs.next, big_n);
	ck_assert_uint_le(fs.max_piece, 1048576);
	ck_assert_uint_ge(fs.calls, 4);
	ck_assert_uint_eq(size % 32, 0);

	struct belt_gguf *g = belt_gguf_open_mem(img, size, "t", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->n_tensors, 5);
	const char *names[] = {"f32.1d", "f16.2d", "q4_0.3d", "i32.4d", "big"};
	const void *datas[] = {f, h, q4, i32};
	const uint64_t sizes[] = {sizeof f, sizeof h, sizeof q4, sizeof i32, big_n};
	const uint32_t dims[] = {1, 2, 3, 4, 1};
	for (int i = 0; i < 5; i++) {
		const struct belt_gguf_tensor *t = &g->tensors[i];
		ck_assert_str_eq(t->name, names[i]);
		ck_assert_ptr_eq(belt_gguf_find_tensor(g, names[i]), t);
		ck_assert_uint_eq(t->n_dims, dims[i]);
		ck_assert_uint_eq(t->size, sizes[i]);
		ck_assert_uint_eq(t->offset % 32, 0);
		if (i < 4)
			ck_assert_int_eq(memcmp(t->data, datas[i], t->size), 0);
	}
	ck_assert_int_eq(g->tensors[2].type, BELT_TYPE_Q4_0);
	ck_assert_int_eq(g->tensors[2].ne[2], 3);
	ck_assert_int_eq(g->tensors[3].ne[3], 5);
	const uint8_t *b = g->tensors[4].data;
	for (uint64_t i = 0; i < big_n; i++)
		if (b[i] != pattern(i))
			ck_abort_msg("big[%" PRIu64 "] differs", i);
	belt_gguf_close(g);
	free(img);
}
END_TEST

START_TEST(test_writer_errors)
{
	char err[BELT_ERR_SIZE];
	struct belt_gguf_writer *w = belt_gguf_writer_new();
	ck_assert_int_eq(belt_gguf_writer_u32(w, "k", 1), 0);
	const char *bad = "/nonexistent-dir-belt/x.gguf";
	ck_assert_int_eq(belt_gguf_writer_write(w, bad, err, sizeof err), -1);
	ck_assert_msg(!strncmp(err, bad, strlen(bad)), "%s", err);
	ck_assert_msg(strstr(err, strerror(ENOENT)), "%s", err);

	/* duplicates are refused at write time */
	char *path = temp_path();
	ck_assert_int_eq(belt_gguf_writer_u32(w, "k", 2), 0);
	ck_assert_int_eq(belt_gguf_writer_write(w, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "duplicate key 'k'"), "%s", err);
	belt_gguf_writer_free(w);

	/* a failing fill aborts the write and leaves the old file alone */
	struct fill_state fs = {.fail_at = 2};
	w = belt_gguf_writer_new();
	ck_assert_int_eq(belt_gguf_writer_tensor_fn(w, "t", BELT_TYPE_F32, 1,
						    (int64_t[]){600000},
						    fill_pattern, &fs), 0);
	ck_assert_int_eq(belt_gguf_writer_write(w, path, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "tensor 't': fill callback failed"), "%s", err);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	belt_gguf_writer_free(w);
	unlink(path);
	free(path);
	belt_gguf_writer_free(NULL);
}
END_TEST

/* ---- real files ---- */

static struct belt_gguf *open_shared(const char *rel)
{
	char err[BELT_ERR_SIZE];
	char *path = shared_path(rel);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_str_eq(g->path, path);
	free(path);
	return g;
}

static int64_t get_int(const struct belt_gguf *g, const char *key)
{
	char err[BELT_ERR_SIZE];
	int64_t v = -1;
	ck_assert_msg(belt_gguf_get_int(g, key, &v, err, sizeof err) == 1,
		      "%s: %s", key, err);
	return v;
}

static void assert_tensor(const struct belt_gguf *g, const char *name,
			  enum belt_type type, int64_t ne0, int64_t ne1)
{
	const struct belt_gguf_tensor *t = belt_gguf_find_tensor(g, name);
	ck_assert_msg(t != NULL, "no tensor %s", name);
	ck_assert_int_eq(t->type, type);
	ck_assert_int_eq(t->ne[0], ne0);
	ck_assert_int_eq(t->ne[1], ne1);
	ck_assert_uint_eq(t->size, belt_type_row_bytes(type, (uint64_t)ne0) * (uint64_t)ne1);
	ck_assert_ptr_eq(t->data, g->base + g->data_offset + t->offset);
}

static void assert_token(const struct belt_gguf_kv *kv, uint64_t i, const char *s)
{
	ck_assert_uint_eq(kv->v.arr.strs[i].len, strlen(s));
	ck_assert_int_eq(memcmp(kv->v.arr.strs[i].ptr, s, strlen(s)), 0);
}

static void assert_stories_common(const struct belt_gguf *g)
{
	ck_assert_uint_eq(g->version, 3);
	ck_assert_uint_eq(g->n_tensors, 48);
	assert_tensor(g, "token_embd.weight", BELT_TYPE_F32, 64, 512);
	assert_tensor(g, "blk.4.ffn_down.weight", BELT_TYPE_F32, 172, 64);
	assert_tensor(g, "output_norm.weight", BELT_TYPE_F32, 64, 1);
	ck_assert_int_eq(get_int(g, "llama.embedding_length"), 64);
	ck_assert_int_eq(get_int(g, "llama.block_count"), 5);
	ck_assert_int_eq(get_int(g, "llama.attention.head_count_kv"), 4);
	const struct belt_gguf_kv *kv = belt_gguf_find(g, "tokenizer.ggml.tokens");
	ck_assert_ptr_nonnull(kv);
	ck_assert_int_eq(kv->type, BELT_GGUF_ARRAY);
	ck_assert_int_eq(kv->v.arr.type, BELT_GGUF_STRING);
	ck_assert_uint_eq(kv->v.arr.n, 512);
	assert_token(kv, 0, "<unk>");
	assert_token(kv, 1, "<s>");
	assert_token(kv, 2, "</s>");
	kv = belt_gguf_find(g, "tokenizer.ggml.scores");
	ck_assert_int_eq(kv->v.arr.type, BELT_GGUF_FLOAT32);
	ck_assert_uint_eq(kv->v.arr.n, 512);
	double eps;
	ck_assert_int_eq(belt_gguf_get_float(g, "llama.attention.layer_norm_rms_epsilon",
					     &eps, NULL, 0), 1);
	ck_assert(fabs(eps - 1e-5) < 1e-9);
}

START_TEST(test_real_stories_f32)
{
	struct belt_gguf *g = open_shared("models/stories260K.f32.gguf");
	assert_stories_common(g);
	ck_assert_uint_eq(g->n_kv, 26);
	ck_assert_int_eq(get_int(g, "llama.context_length"), 512);
	double fb;
	ck_assert_int_eq(belt_gguf_get_float(g, "llama.rope.freq_base", &fb, NULL, 0), 1);
	ck_assert(fb == 10000.0);
	struct belt_gguf_str s;
	ck_assert_int_eq(belt_gguf_get_str(g, "general.architecture", &s, NULL, 0), 1);
	ck_assert_uint_eq(s.len, 5);
	ck_assert_int_eq(memcmp(s.ptr, "llama", 5), 0);
	belt_gguf_close(g);
}
END_TEST

START_TEST(test_real_stories_ggml_org)
{
	struct belt_gguf *g = open_shared("models/stories260K.ggml-org.gguf");
	struct belt_gguf *f = open_shared("models/stories260K.f32.gguf");
	assert_stories_common(g);
	ck_assert_uint_eq(g->n_kv, 19);
	ck_assert_str_eq(g->kv[0].key, "tokenizer.ggml.tokens"); /* arrays first */
	ck_assert_int_eq(get_int(g, "llama.context_length"), 2048);
	double fb;
	ck_assert_int_eq(belt_gguf_get_float(g, "llama.rope.freq_base", &fb, NULL, 0), 0);
	ck_assert_int_eq(get_int(g, "tokenizer.ggml.padding_token_id"), 0xFFFFFFFFll);
	/* same weights as the f32 file, bit for bit */
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		const struct belt_gguf_tensor *a = &f->tensors[i];
		const struct belt_gguf_tensor *b = belt_gguf_find_tensor(g, a->name);
		ck_assert_msg(b != NULL, "%s", a->name);
		ck_assert_uint_eq(a->size, b->size);
		ck_assert_int_eq(memcmp(a->data, b->data, a->size), 0);
	}
	belt_gguf_close(f);
	belt_gguf_close(g);
}
END_TEST

START_TEST(test_real_pycoder_q8_0)
{
	struct belt_gguf *g = open_shared("models/pycoder29M.q8_0.gguf");
	ck_assert_uint_eq(g->n_tensors, 38);
	ck_assert_uint_eq(g->n_kv, 26);
	assert_tensor(g, "token_embd.weight", BELT_TYPE_Q8_0, 512, 32000);
	assert_tensor(g, "blk.3.ffn_down.weight", BELT_TYPE_Q8_0, 1536, 512);
	assert_tensor(g, "output_norm.weight", BELT_TYPE_F32, 512, 1);
	ck_assert_uint_eq(belt_gguf_find_tensor(g, "token_embd.weight")->size, 17408000);
	ck_assert_int_eq(get_int(g, "llama.embedding_length"), 512);
	ck_assert_int_eq(get_int(g, "general.file_type"), 7);
	ck_assert_uint_eq(belt_gguf_find(g, "tokenizer.ggml.tokens")->v.arr.n, 32000);
	/* the last tensor ends inside the file */
	const struct belt_gguf_tensor *last = &g->tensors[g->n_tensors - 1];
	ck_assert_uint_le(g->data_offset + last->offset + last->size, g->size);
	belt_gguf_close(g);
}
END_TEST

START_TEST(test_real_vocab_only)
{
	struct belt_gguf *g = open_shared("vocab/ggml-vocab-llama-spm.gguf");
	ck_assert_uint_eq(g->n_tensors, 0);
	ck_assert_uint_eq(g->n_kv, 22);
	ck_assert_uint_le(g->data_offset, g->size);
	const struct belt_gguf_kv *kv = belt_gguf_find(g, "tokenizer.ggml.tokens");
	ck_assert_uint_eq(kv->v.arr.n, 32000);
	assert_token(kv, 1, "<s>");
	ck_assert_int_eq(belt_gguf_arr_int(belt_gguf_find(g, "tokenizer.ggml.token_type"), 0), 2);
	bool b;
	ck_assert_int_eq(belt_gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b, NULL, 0), 1);
	ck_assert(b);
	belt_gguf_close(g);
}
END_TEST

/* Every sixteenth of a real file's length fails cleanly. */
START_TEST(test_truncated_real)
{
	const char *files[] = {"models/stories260K.f32.gguf",
			       "vocab/ggml-vocab-llama-spm.gguf"};
	for (int f = 0; f < 2; f++) {
		char *path = shared_path(files[f]);
		size_t size;
		uint8_t *img = read_all(path, &size);
		free(path);
		for (int k = 0; k < 16; k++) {
			size_t n = size * (size_t)k / 16;
			char err[BELT_ERR_SIZE] = "";
			uint8_t *copy = malloc(n ? n : 1);
			memcpy(copy, img, n);
			struct belt_gguf *g = belt_gguf_open_mem(copy, n, "x.gguf",
								 err, sizeof err);
			ck_assert_msg(g == NULL, "%s cut to %zu bytes opened", files[f], n);
			ck_assert_msg(strstr(err, "truncated") ||
				      strstr(err, "past end") ||
				      strstr(err, "exceeds file") ||
				      strstr(err, "cannot fit"), "%zu: %s", n, err);
			free(copy);
		}
		free(img);
	}
	/* the standard image cut at every byte */
	size_t size;
	uint8_t *img = std_image(&size);
	for (size_t n = 0; n < size; n++) {
		char err[BELT_ERR_SIZE] = "";
		struct belt_gguf *g = belt_gguf_open_mem(img, n, "x.gguf", err, sizeof err);
		ck_assert_msg(g == NULL, "cut to %zu bytes opened", n);
	}
	free(img);
}
END_TEST

/* ---- malformed images ---- */

START_TEST(test_bad_header)
{
	size_t size;
	uint8_t *img = std_image(&size);
	set32(img, 0x12345678);
	expect_fail(img, size, "x.gguf: bad magic 0x12345678 (expected 'GGUF')");
	set32(img, 0x46554747);
	set32(img + 4, 7);
	expect_fail(img, size, "x.gguf: unsupported GGUF version 7 (expected 2 or 3)");
	set32(img + 4, 1);
	expect_fail(img, size, "unsupported GGUF version 1");
	set32(img + 4, 0x03000000);
	expect_fail(img, size, "big-endian");
	set32(img + 4, 2); /* v2 has the same layout */
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "v2", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->version, 2);
	belt_gguf_close(g);
	set32(img + 4, 3);
	expect_fail(img, 3, "truncated: header needs 4 bytes at offset 0, file has 3");
	expect_fail(img, 20, "truncated: header needs 8 bytes at offset 16, file has 20");
	expect_fail(NULL, 0, "truncated");
	free(img);
}
END_TEST

START_TEST(test_huge_counts)
{
	size_t size;
	uint8_t *img = std_image(&size);
	set64(img + 16, (uint64_t)1 << 40);
	expect_fail(img, size, "metadata kv count 1099511627776 cannot fit in the file");
	set64(img + 16, UINT64_MAX);
	expect_fail(img, size, "metadata kv count 18446744073709551615 cannot fit");
	set64(img + 16, 7);
	set64(img + 8, (uint64_t)1 << 40);
	expect_fail(img, size, "tensor count 1099511627776 (with 7 kv) cannot fit in the file");
	set64(img + 8, UINT64_MAX);
	expect_fail(img, size, "tensor count 18446744073709551615");
	/* fits the size check, but runs out while reading */
	set64(img + 8, 3 + 10);
	expect_fail(img, size, "tensor info 3 of 13");
	/* the kvs run out where the tensor infos begin */
	size_t end_kv = tensor_at(img, 0);
	set64(img + 8, 0);
	set64(img + 16, 8);
	expect_fail(img, end_kv, "truncated: key 7 of 8 needs 8 bytes");
	free(img);
}
END_TEST

START_TEST(test_bad_strings)
{
	size_t size;
	uint8_t *img = std_image(&size);
	size_t v = kv_type_at(img, 1) + 4; /* general.name's value */
	char want[160];
	snprintf(want, sizeof want,
		 "x.gguf: key 'general.name': string length 18446744073709551615 "
		 "exceeds file (at offset %zu)", v);
	set64(img + v, UINT64_MAX);
	expect_fail(img, size, want);
	set64(img + v, size);
	expect_fail(img, size, "key 'general.name': string length");
	set64(img + v, 4);
	/* key length */
	size_t k = kv_at(img, 2);
	set64(img + k, (uint64_t)1 << 50);
	expect_fail(img, size, "key 2 of 7: key length 1125899906842624 exceeds file");
	set64(img + k, 0);
	expect_fail(img, size, "key 2 of 7: empty key");
	set64(img + k, 5);
	img[k + 9] = 0;
	expect_fail(img, size, "key 2 of 7: key contains a NUL byte");
	img[k + 9] = '.';
	/* an element of a string array */
	size_t s = kv_type_at(img, 6) + 4 + 12;
	set64(img + s, UINT64_MAX - 1);
	expect_fail(img, size, "key 't.strs': string length 18446744073709551614 exceeds file");
	set64(img + s, 1);
	set64(img + s - 8, (uint64_t)1 << 61);
	expect_fail(img, size, "key 't.strs': array of 2305843009213693952 strings exceeds file");
	set64(img + s - 8, 2);
	/* tensor name */
	size_t t = tensor_at(img, 1);
	set64(img + t, UINT64_MAX);
	expect_fail(img, size, "tensor info 1 of 3: tensor name length 18446744073709551615 exceeds file");
	set64(img + t, 0);
	expect_fail(img, size, "tensor info 1 of 3: empty tensor name");
	free(img);
}
END_TEST

START_TEST(test_bad_value_types)
{
	size_t size;
	uint8_t *img = std_image(&size);
	size_t t = kv_type_at(img, 2);
	set32(img + t, 13);
	expect_fail(img, size, "key 't.i32': unknown value type 13");
	set32(img + t, 0x80000000u);
	expect_fail(img, size, "unknown value type 2147483648");
	/* control bytes in a key are escaped: the message stays one line */
	img[kv_at(img, 2) + 9] = '\n';
	expect_fail(img, size, "key 't\\x0ai32': unknown value type 2147483648");
	img[kv_at(img, 2) + 9] = '.';
	set32(img + t, BELT_GGUF_INT32);
	size_t a = kv_type_at(img, 5) + 4; /* t.arr element type */
	set32(img + a, BELT_GGUF_ARRAY);
	expect_fail(img, size, "key 't.arr': nested arrays are not supported");
	set32(img + a, 99);
	expect_fail(img, size, "key 't.arr': unknown array element type 99");
	set32(img + a, BELT_GGUF_UINT32);
	set64(img + a + 4, (uint64_t)1 << 62);
	expect_fail(img, size, "key 't.arr': array of 4611686018427387904 uint32 exceeds file");
	set64(img + a + 4, UINT64_MAX / 2);
	expect_fail(img, size, "exceeds file");
	set64(img + a + 4, 3);
	/* an int32 value cut short (with counts that fit the cut) */
	set64(img + 8, 0);
	set64(img + 16, 3);
	expect_fail(img, kv_type_at(img, 2) + 6,
		    "truncated: key 't.i32' needs 4 bytes");
	free(img);
}
END_TEST

START_TEST(test_bad_alignment)
{
	size_t size;
	uint8_t *img = std_image(&size);
	size_t v = kv_type_at(img, 0) + 4;
	set32(img + v, 24);
	expect_fail(img, size, "key 'general.alignment': alignment 24 is not a nonzero power of two");
	set32(img + v, 0);
	expect_fail(img, size, "alignment 0 is not a nonzero power of two");
	set32(img + v, 32);
	set32(img + v - 4, BELT_GGUF_FLOAT32);
	expect_fail(img, size, "key 'general.alignment': type float32, expected uint32");
	set32(img + v - 4, BELT_GGUF_INT32);
	set32(img + v, (uint32_t)-32);
	expect_fail(img, size, "alignment -32 is not");
	/* a larger power of two: the data offsets (multiples of 32) no
	 * longer all align */
	set32(img + v - 4, BELT_GGUF_UINT32);
	set32(img + v, 1u << 20);
	expect_fail(img, size, "not aligned to 1048576");
	set32(img + v, 8); /* smaller divides: still valid */
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "a8", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->alignment, 8);
	belt_gguf_close(g);
	free(img);
}
END_TEST

START_TEST(test_bad_tensor_infos)
{
	size_t size;
	uint8_t *img = std_image(&size);
	uint8_t *orig = malloc(size);
	memcpy(orig, img, size);
	/* tensor 1 is "b" q8_0 {64}; tensor 0 is "a" f32 {4,2} */
	set32(img + t_type_at(img, 1), 99);
	expect_fail(img, size, "x.gguf: tensor 'b': unknown type 99");
	set32(img + t_type_at(img, 1), 4); /* removed Q4_2 */
	expect_fail(img, size, "x.gguf: tensor 'b': unknown type 4");
	memcpy(img, orig, size);
	set32(img + t_type_at(img, 0), BELT_TYPE_Q8_0);
	expect_fail(img, size, "tensor 'a': ne[0] = 4 is not a multiple of the q8_0 block size 32");
	memcpy(img, orig, size);
	set32(img + t_ndims_at(img, 1), 0);
	expect_fail(img, size, "x.gguf: tensor 'b': n_dims 0 out of range 1..4");
	set32(img + t_ndims_at(img, 1), 5);
	expect_fail(img, size, "x.gguf: tensor 'b': n_dims 5 out of range 1..4");
	memcpy(img, orig, size);
	set64(img + t_ne_at(img, 0, 0), (uint64_t)1 << 40);
	set64(img + t_ne_at(img, 0, 1), (uint64_t)1 << 40);
	expect_fail(img, size, "x.gguf: tensor 'a': dimension product overflows");
	set64(img + t_ne_at(img, 0, 1), 0); /* zero rows: no overflow, size 0 */
	char err[BELT_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open_mem(img, size, "z", err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_uint_eq(g->tensors[0].size, 0);
	belt_gguf_close(g);
	set64(img + t_ne_at(img, 0, 0), (uint64_t)1 << 62); /* f32: 2^64 bytes */
	set64(img + t_ne_at(img, 0, 1), 1);
	expect_fail(img, size, "x.gguf: tensor 'a': size overflows");
	set64(img + t_ne_at(img, 0, 1), UINT64_MAX);
	expect_fail(img, size, "x.gguf: tensor 'a': dimension 1 is negative (-1)");
	memcpy(img, orig, size);
	set64(img + t_ne_at(img, 0, 1), 1000);
	expect_fail(img, size, "tensor 'a': data [");
	expect_fail(img, size, "extends past end of file (size");
	memcpy(img, orig, size);
	size_t off = t_offset_at(img, 2);
	set64(img + off, 17);
	expect_fail(img, size, "x.gguf: tensor 'c': offset 17 not aligned to 32");
	set64(img + off, (uint64_t)1 << 40);
	char want[200];
	uint64_t start = (uint64_t)1 << 40;
	/* data: a 32 bytes at 0, b 68 at 32, c 64 at 128, end 192 */
	const uint64_t data_offset = size - 192;
	start += data_offset;
	snprintf(want, sizeof want,
		 "x.gguf: tensor 'c': data [%" PRIu64 "..%" PRIu64
		 ") extends past end of file (size %zu)", start, start + 64, size);
	expect_fail(img, size, want);
	set64(img + off, UINT64_MAX - 31);
	expect_fail(img, size, "extends past end of file");
	memcpy(img, orig, size);
	/* cut inside the data section */
	expect_fail(img, size - 1, "tensor 'c': data [");
	free(orig);
	free(img);
}
END_TEST

START_TEST(test_duplicates)
{
	size_t size;
	uint8_t *img = std_image(&size);
	/* tensor "b" -> "a" */
	size_t t = tensor_at(img, 1);
	img[t + 8] = 'a';
	expect_fail(img, size, "x.gguf: duplicate tensor name 'a'");
	img[t + 8] = 'b';
	/* key "t.i32" (5 bytes) -> "t.f32" */
	size_t k = kv_at(img, 2);
	memcpy(img + k + 8, "t.f32", 5);
	expect_fail(img, size, "x.gguf: duplicate key 't.f32'");
	free(img);
}
END_TEST

/* ---- files ---- */

START_TEST(test_open_files)
{
	char err[BELT_ERR_SIZE];
	const char *missing = "/nonexistent-belt-dir/model.gguf";
	ck_assert_ptr_null(belt_gguf_open(missing, err, sizeof err));
	char want[256];
	snprintf(want, sizeof want, "%s: cannot open: %s", missing, strerror(ENOENT));
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(belt_gguf_open("/", err, sizeof err));
	ck_assert_str_eq(err, "/: not a regular file");
	ck_assert_ptr_null(belt_gguf_open(missing, NULL, 0)); /* no buffer */

	size_t size;
	uint8_t *img = std_image(&size);
	char *path = temp_path();
	ck_assert_ptr_null(belt_gguf_open(path, err, sizeof err)); /* empty */
	ck_assert_msg(strstr(err, "truncated: header needs 4 bytes at offset 0, file has 0"),
		      "%s", err);
	write_file(path, img, size);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_str_eq(g->path, path);
	ck_assert_uint_eq(g->size, size);
	ck_assert_int_eq(memcmp(belt_gguf_find_tensor(g, "a")->data, data_a, 32), 0);
	belt_gguf_close(g);
	set32(img + kv_type_at(img, 2), 42);
	write_file(path, img, size);
	ck_assert_ptr_null(belt_gguf_open(path, err, sizeof err));
	snprintf(want, sizeof want, "%s: key 't.i32': unknown value type 42", path);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	unlink(path);
	free(path);
	free(img);
	belt_gguf_close(NULL);
}
END_TEST

static Suite *gguf_suite(void)
{
	Suite *s = suite_create("gguf");
	TCase *rt = tcase_create("roundtrip");
	tcase_add_test(rt, test_std_image_reads);
	tcase_add_test(rt, test_roundtrip_metadata);
	tcase_add_test(rt, test_getters);
	tcase_add_test(rt, test_roundtrip_tensors);
	tcase_add_test(rt, test_writer_errors);
	suite_add_tcase(s, rt);
	TCase *real = tcase_create("real");
	tcase_add_test(real, test_real_stories_f32);
	tcase_add_test(real, test_real_stories_ggml_org);
	tcase_add_test(real, test_real_pycoder_q8_0);
	tcase_add_test(real, test_real_vocab_only);
	tcase_add_test(real, test_truncated_real);
	suite_add_tcase(s, real);
	TCase *bad = tcase_create("malformed");
	tcase_add_test(bad, test_bad_header);
	tcase_add_test(bad, test_huge_counts);
	tcase_add_test(bad, test_bad_strings);
	tcase_add_test(bad, test_bad_value_types);
	tcase_add_test(bad, test_bad_alignment);
	tcase_add_test(bad, test_bad_tensor_infos);
	tcase_add_test(bad, test_duplicates);
	tcase_add_test(bad, test_open_files);
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(gguf_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
