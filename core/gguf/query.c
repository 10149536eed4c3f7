/* GGUF lookups and typed getters over a parsed file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "gguf/gguf_priv.h"

static const char *const vtype_names[] = {
	[BELT_GGUF_UINT8] = "uint8",	 [BELT_GGUF_INT8] = "int8",
	[BELT_GGUF_UINT16] = "uint16",	 [BELT_GGUF_INT16] = "int16",
	[BELT_GGUF_UINT32] = "uint32",	 [BELT_GGUF_INT32] = "int32",
	[BELT_GGUF_FLOAT32] = "float32", [BELT_GGUF_BOOL] = "bool",
	[BELT_GGUF_STRING] = "string",	 [BELT_GGUF_ARRAY] = "array",
	[BELT_GGUF_UINT64] = "uint64",	 [BELT_GGUF_INT64] = "int64",
	[BELT_GGUF_FLOAT64] = "float64",
};

static const unsigned char vtype_sizes[] = {
	[BELT_GGUF_UINT8] = 1,	 [BELT_GGUF_INT8] = 1,	[BELT_GGUF_UINT16] = 2,
	[BELT_GGUF_INT16] = 2,	 [BELT_GGUF_UINT32] = 4, [BELT_GGUF_INT32] = 4,
	[BELT_GGUF_FLOAT32] = 4, [BELT_GGUF_BOOL] = 1,	[BELT_GGUF_STRING] = 0,
	[BELT_GGUF_ARRAY] = 0,	 [BELT_GGUF_UINT64] = 8, [BELT_GGUF_INT64] = 8,
	[BELT_GGUF_FLOAT64] = 8,
};

const char *belt_gguf_vtype_name(int t)
{
	if (t < 0 || t > BELT_GGUF_FLOAT64)
		return "?";
	return vtype_names[t];
}

size_t gguf_vtype_size(uint32_t t)
{
	return t <= BELT_GGUF_FLOAT64 ? vtype_sizes[t] : 0;
}

const char *gguf_quote(char buf[GGUF_QUOTE_SIZE], const char *s)
{
	size_t n = 0;
	for (; *s && n + 8 < GGUF_QUOTE_SIZE; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, 5, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	strcpy(buf + n, *s ? "..." : "");
	return buf;
}

uint16_t gguf_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t gguf_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t gguf_le64(const uint8_t *p)
{
	return (uint64_t)gguf_le32(p) | (uint64_t)gguf_le32(p + 4) << 32;
}

const struct belt_gguf_kv *belt_gguf_find(const struct belt_gguf *g,
					  const char *key)
{
	if (!g || !key)
		return NULL;
	const struct gguf_priv *pv = g->priv;
	uint64_t i = gguf_index_get(&pv->keys, key);
	return i == UINT64_MAX ? NULL : &g->kv[i];
}

const struct belt_gguf_tensor *belt_gguf_find_tensor(const struct belt_gguf *g,
						     const char *name)
{
	if (!g || !name)
		return NULL;
	const struct gguf_priv *pv = g->priv;
	uint64_t i = gguf_index_get(&pv->tensors, name);
	return i == UINT64_MAX ? NULL : &g->tensors[i];
}

static int is_uint(int t)
{
	return t == BELT_GGUF_UINT8 || t == BELT_GGUF_UINT16 ||
	       t == BELT_GGUF_UINT32 || t == BELT_GGUF_UINT64;
}

static int is_sint(int t)
{
	return t == BELT_GGUF_INT8 || t == BELT_GGUF_INT16 ||
	       t == BELT_GGUF_INT32 || t == BELT_GGUF_INT64;
}

static int is_float(int t)
{
	return t == BELT_GGUF_FLOAT32 || t == BELT_GGUF_FLOAT64;
}

static int type_err(const struct belt_gguf *g, const struct belt_gguf_kv *kv,
		    const char *expected, char *err, size_t errsz)
{
	char q[GGUF_QUOTE_SIZE];
	if (kv->type == BELT_GGUF_ARRAY)
		return belt_errf(err, errsz,
				 "%s: key '%s': type array of %s, expected %s",
				 g->path, gguf_quote(q, kv->key),
				 belt_gguf_vtype_name(kv->v.arr.type), expected);
	return belt_errf(err, errsz, "%s: key '%s': type %s, expected %s",
			 g->path, gguf_quote(q, kv->key),
			 belt_gguf_vtype_name(kv->type), expected);
}

int belt_gguf_get_int(const struct belt_gguf *g, const char *key,
		      int64_t *out, char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, key);
	if (!kv)
		return 0;
	if (is_sint(kv->type)) {
		*out = kv->v.i64;
		return 1;
	}
	if (!is_uint(kv->type))
		return type_err(g, kv, "an integer", err, errsz);
	char q[GGUF_QUOTE_SIZE];
	if (kv->v.u64 > INT64_MAX)
		return belt_errf(err, errsz,
				 "%s: key '%s': value %" PRIu64
				 " out of range for int64", g->path,
				 gguf_quote(q, key), kv->v.u64);
	*out = (int64_t)kv->v.u64;
	return 1;
}

int belt_gguf_get_float(const struct belt_gguf *g, const char *key,
			double *out, char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, key);
	if (!kv)
		return 0;
	if (is_float(kv->type))
		*out = kv->v.f64;
	else if (is_sint(kv->type))
		*out = (double)kv->v.i64;
	else if (is_uint(kv->type))
		*out = (double)kv->v.u64;
	else
		return type_err(g, kv, "a number", err, errsz);
	return 1;
}

int belt_gguf_get_bool(const struct belt_gguf *g, const char *key, bool *out,
		       char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, key);
	if (!kv)
		return 0;
	if (kv->type != BELT_GGUF_BOOL)
		return type_err(g, kv, "bool", err, errsz);
	*out = kv->v.b;
	return 1;
}

int belt_gguf_get_str(const struct belt_gguf *g, const char *key,
		      struct belt_gguf_str *out, char *err, size_t errsz)
{
	const struct belt_gguf_kv *kv = belt_gguf_find(g, key);
	if (!kv)
		return 0;
	if (kv->type != BELT_GGUF_STRING)
		return type_err(g, kv, "string", err, errsz);
	*out = kv->v.str;
	return 1;
}

/* Element i of a numeric array, widened: exactly one of *u, *s, *f is set
 * according to the returned kind (0 unsigned, 1 signed, 2 float, -1 none). */
static int arr_elem(const struct belt_gguf_kv *kv, uint64_t i, uint64_t *u,
		    int64_t *s, double *f)
{
	if (!kv || kv->type != BELT_GGUF_ARRAY || i >= kv->v.arr.n)
		return -1;
	int t = kv->v.arr.type;
	size_t sz = gguf_vtype_size((uint32_t)t);
	if (!sz)
		return -1;
	const uint8_t *p = (const uint8_t *)kv->v.arr.data + i * sz;
	uint64_t raw = sz == 1 ? p[0] : sz == 2 ? gguf_le16(p)
			: sz == 4 ? gguf_le32(p) : gguf_le64(p);
	if (t == BELT_GGUF_FLOAT32) {
		float v;
		uint32_t r32 = (uint32_t)raw;
		memcpy(&v, &r32, 4);
		*f = v;
		return 2;
	}
	if (t == BELT_GGUF_FLOAT64) {
		memcpy(f, &raw, 8);
		return 2;
	}
	if (!is_sint(t)) { /* unsigned or bool */
		*u = raw;
		return 0;
	}
	*s = sz == 1 ? (int8_t)raw : sz == 2 ? (int16_t)raw
	     : sz == 4 ? (int32_t)raw : (int64_t)raw;
	return 1;
}

double belt_gguf_arr_float(const struct belt_gguf_kv *kv, uint64_t i)
{
	uint64_t u = 0;
	int64_t s = 0;
	double f = 0;
	switch (arr_elem(kv, i, &u, &s, &f)) {
	case 0: return (double)u;
	case 1: return (double)s;
	case 2: return f;
	default: return 0;
	}
}

/* Truncated toward zero, saturated; NaN gives 0. */
static int64_t float_to_int(double f)
{
	if (f != f)
		return 0;
	if (f >= 9223372036854775807.0)
		return INT64_MAX;
	if (f <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)f;
}

int64_t belt_gguf_arr_int(const struct belt_gguf_kv *kv, uint64_t i)
{
	uint64_t u = 0;
	int64_t s = 0;
	double f = 0;
	switch (arr_elem(kv, i, &u, &s, &f)) {
	case 0: return (int64_t)u;
	case 1: return s;
	case 2: return float_to_int(f);
	default: return 0;
	}
}
