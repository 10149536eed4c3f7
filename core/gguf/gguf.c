/* GGUF v2/v3 reader: maps a file read-only and validates every field
 * before anything is trusted. Strings stay in the mapping; only keys and
 * tensor names are copied (NUL-terminated). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "gguf/gguf_priv.h"

#define GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_HEADER_BYTES 24
/* Fewest bytes a kv can take: key length, 1-byte key, type, 1-byte value. */
#define GGUF_MIN_KV_BYTES 14
/* Fewest bytes a tensor info can take: name length, 1-byte name, n_dims,
 * one dimension, type, offset. */
#define GGUF_MIN_TENSOR_BYTES 33

struct parser {
	struct belt_gguf *g;
	const uint8_t *b;
	uint64_t size;
	uint64_t pos; /* always <= size */
	char *err;
	size_t errsz;
	char what[192]; /* what is being read, for messages: "key 'x'" */
};

/* ---- primitive reads ---- */

static int need(struct parser *ps, uint64_t n)
{
	if (n <= ps->size - ps->pos)
		return 0;
	return belt_errf(ps->err, ps->errsz,
			 "%s: truncated: %s needs %" PRIu64
			 " bytes at offset %" PRIu64 ", file has %" PRIu64,
			 ps->g->path, ps->what, n, ps->pos, ps->size);
}

static int rd_u32(struct parser *ps, uint32_t *v)
{
	if (need(ps, 4))
		return -1;
	*v = gguf_le32(ps->b + ps->pos);
	ps->pos += 4;
	return 0;
}

static int rd_u64(struct parser *ps, uint64_t *v)
{
	if (need(ps, 8))
		return -1;
	*v = gguf_le64(ps->b + ps->pos);
	ps->pos += 8;
	return 0;
}

/* A gguf string (u64 length + bytes) left in the mapping. */
static int rd_str(struct parser *ps, const char *kind, struct belt_gguf_str *s)
{
	uint64_t at = ps->pos;
	if (rd_u64(ps, &s->len))
		return -1;
	if (s->len > ps->size - ps->pos)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: %s length %" PRIu64
				 " exceeds file (at offset %" PRIu64 ")",
				 ps->g->path, ps->what, kind, s->len, at);
	s->ptr = (const char *)ps->b + ps->pos;
	ps->pos += s->len;
	return 0;
}

/* A key or tensor name: non-empty, no NUL inside, copied. */
static int rd_name(struct parser *ps, const char *kind, const char **out)
{
	struct belt_gguf_str s;
	uint64_t at = ps->pos;
	if (rd_str(ps, kind, &s))
		return -1;
	if (s.len == 0)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: empty %s (at offset %" PRIu64 ")",
				 ps->g->path, ps->what, kind, at);
	if (memchr(s.ptr, 0, s.len))
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: %s contains a NUL byte (at offset %" PRIu64
				 ")", ps->g->path, ps->what, kind, at);
	char *copy = malloc(s.len + 1);
	if (!copy)
		return belt_errf(ps->err, ps->errsz, "%s: out of memory",
				 ps->g->path);
	memcpy(copy, s.ptr, s.len);
	copy[s.len] = 0;
	*out = copy;
	return 0;
}

/* ---- header ---- */

static int parse_header(struct parser *ps, uint64_t *n_kv, uint64_t *n_t)
{
	const char *path = ps->g->path;
	uint32_t magic, version;
	snprintf(ps->what, sizeof ps->what, "header");
	if (rd_u32(ps, &magic))
		return -1;
	if (magic != GGUF_MAGIC)
		return belt_errf(ps->err, ps->errsz,
				 "%s: bad magic 0x%08" PRIx32 " (expected 'GGUF')",
				 path, magic);
	if (rd_u32(ps, &version))
		return -1;
	if (version != 2 && version != 3) {
		uint32_t sw = __builtin_bswap32(version);
		return belt_errf(ps->err, ps->errsz,
				 "%s: unsupported GGUF version %" PRIu32
				 " (expected 2 or 3)%s", path, version,
				 sw == 2 || sw == 3 ? "; big-endian files are not supported"
				 : version == 1 ? "; version 1 has 32-bit counts" : "");
	}
	ps->g->version = version;
	if (rd_u64(ps, n_t) || rd_u64(ps, n_kv))
		return -1;
	uint64_t left = ps->size - ps->pos;
	if (*n_kv > left / GGUF_MIN_KV_BYTES)
		return belt_errf(ps->err, ps->errsz,
				 "%s: metadata kv count %" PRIu64
				 " cannot fit in the file (%" PRIu64
				 " bytes left at offset %" PRIu64 ")",
				 path, *n_kv, left, ps->pos);
	if (*n_t > left / GGUF_MIN_TENSOR_BYTES ||
	    *n_kv * GGUF_MIN_KV_BYTES + *n_t * GGUF_MIN_TENSOR_BYTES > left)
		return belt_errf(ps->err, ps->errsz,
				 "%s: tensor count %" PRIu64 " (with %" PRIu64
				 " kv) cannot fit in the file (%" PRIu64
				 " bytes left at offset %" PRIu64 ")",
				 path, *n_t, *n_kv, left, ps->pos);
	return 0;
}

/* ---- metadata values ---- */

static void set_scalar(struct belt_gguf_kv *kv, uint32_t t, const uint8_t *p)
{
	float f;
	double d;
	switch (t) {
	case BELT_GGUF_UINT8: kv->v.u64 = p[0]; break;
	case BELT_GGUF_INT8: kv->v.i64 = (int8_t)p[0]; break;
	case BELT_GGUF_UINT16: kv->v.u64 = gguf_le16(p); break;
	case BELT_GGUF_INT16: kv->v.i64 = (int16_t)gguf_le16(p); break;
	case BELT_GGUF_UINT32: kv->v.u64 = gguf_le32(p); break;
	case BELT_GGUF_INT32: kv->v.i64 = (int32_t)gguf_le32(p); break;
	case BELT_GGUF_UINT64: kv->v.u64 = gguf_le64(p); break;
	case BELT_GGUF_INT64: kv->v.i64 = (int64_t)gguf_le64(p); break;
	case BELT_GGUF_BOOL: kv->v.b = p[0] != 0; break;
	case BELT_GGUF_FLOAT32: {
		uint32_t u = gguf_le32(p);
		memcpy(&f, &u, 4);
		kv->v.f64 = f;
		break;
	}
	case BELT_GGUF_FLOAT64: {
		uint64_t u = gguf_le64(p);
		memcpy(&d, &u, 8);
		kv->v.f64 = d;
		break;
	}
	default: break;
	}
}

static int parse_scalar(struct parser *ps, struct belt_gguf_kv *kv, uint32_t t)
{
	size_t sz = gguf_vtype_size(t);
	if (need(ps, sz))
		return -1;
	set_scalar(kv, t, ps->b + ps->pos);
	ps->pos += sz;
	kv->type = t;
	return 0;
}

static int parse_str_array(struct parser *ps, struct belt_gguf_kv *kv,
			   uint64_t n, uint64_t at)
{
	if (n > (ps->size - ps->pos) / 8)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: array of %" PRIu64
				 " strings exceeds file (at offset %" PRIu64 ")",
				 ps->g->path, ps->what, n, at);
	struct belt_gguf_str *s = calloc(n ? n : 1, sizeof *s);
	if (!s)
		return belt_errf(ps->err, ps->errsz, "%s: out of memory",
				 ps->g->path);
	kv->type = BELT_GGUF_ARRAY; /* from here on close() frees s */
	kv->v.arr.type = BELT_GGUF_STRING;
	kv->v.arr.strs = s;
	kv->v.arr.data = ps->b + ps->pos;
	for (uint64_t i = 0; i < n; i++)
		if (rd_str(ps, "string", &s[i]))
			return -1;
	kv->v.arr.n = n;
	return 0;
}

static int parse_array(struct parser *ps, struct belt_gguf_kv *kv)
{
	uint32_t et;
	uint64_t n, at = ps->pos;
	if (rd_u32(ps, &et) || rd_u64(ps, &n))
		return -1;
	if (et == BELT_GGUF_ARRAY)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: nested arrays are not supported (at offset %"
				 PRIu64 ")", ps->g->path, ps->what, at);
	if (et == BELT_GGUF_STRING)
		return parse_str_array(ps, kv, n, at);
	size_t esz = gguf_vtype_size(et);
	if (!esz)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: unknown array element type %" PRIu32
				 " (at offset %" PRIu64 ")",
				 ps->g->path, ps->what, et, at);
	if (n > (ps->size - ps->pos) / esz)
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: array of %" PRIu64 " %s exceeds file (at offset %"
				 PRIu64 ")", ps->g->path, ps->what, n,
				 belt_gguf_vtype_name((int)et), at);
	kv->v.arr.type = et;
	kv->v.arr.n = n;
	kv->v.arr.data = ps->b + ps->pos;
	kv->v.arr.strs = NULL;
	kv->type = BELT_GGUF_ARRAY;
	ps->pos += n * esz;
	return 0;
}

static int parse_value(struct parser *ps, struct belt_gguf_kv *kv)
{
	uint32_t t;
	uint64_t at = ps->pos;
	if (rd_u32(ps, &t))
		return -1;
	if (t == BELT_GGUF_STRING) {
		if (rd_str(ps, "string", &kv->v.str))
			return -1;
		kv->type = BELT_GGUF_STRING;
		return 0;
	}
	if (t == BELT_GGUF_ARRAY)
		return parse_array(ps, kv);
	if (!gguf_vtype_size(t))
		return belt_errf(ps->err, ps->errsz,
				 "%s: %s: unknown value type %" PRIu32
				 " (at offset %" PRIu64 ")",
				 ps->g->path, ps->what, t, at);
	return parse_scalar(ps, kv, t);
}

static const char *kv_name(const void *arr, uint64_t i)
{
	return ((const struct belt_gguf_kv *)arr)[i].key;
}

static int parse_kv(struct parser *ps, uint64_t i)
{
	struct belt_gguf *g = ps->g;
	struct gguf_priv *pv = g->priv;
	struct belt_gguf_kv *kv = &g->kv[i];
	snprintf(ps->what, sizeof ps->what, "key %" PRIu64 " of %" PRIu64, i,
		 g->n_kv);
	if (rd_name(ps, "key", &kv->key))
		return -1;
	char q[GGUF_QUOTE_SIZE];
	if (gguf_index_add(&pv->keys, i) != UINT64_MAX)
		return belt_errf(ps->err, ps->errsz, "%s: duplicate key '%s'",
				 g->path, gguf_quote(q, kv->key));
	snprintf(ps->what, sizeof ps->what, "key '%s'", gguf_quote(q, kv->key));
	return parse_value(ps, kv);
}

/* general.alignment: an integer, a nonzero power of two. */
static int parse_alignment(struct parser *ps)
{
	struct belt_gguf *g = ps->g;
	uint64_t i = gguf_index_get(&((struct gguf_priv *)g->priv)->keys,
				    "general.alignment");
	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	if (i == UINT64_MAX)
		return 0;
	const struct belt_gguf_kv *kv = &g->kv[i];
	uint64_t a;
	switch (kv->type) {
	case BELT_GGUF_UINT8: case BELT_GGUF_UINT16:
	case BELT_GGUF_UINT32: case BELT_GGUF_UINT64:
		a = kv->v.u64;
		break;
	case BELT_GGUF_INT8: case BELT_GGUF_INT16:
	case BELT_GGUF_INT32: case BELT_GGUF_INT64:
		a = kv->v.i64 < 0 ? 0 : (uint64_t)kv->v.i64;
		break;
	default:
		return belt_errf(ps->err, ps->errsz,
				 "%s: key 'general.alignment': type %s, expected uint32",
				 g->path, belt_gguf_vtype_name(kv->type));
	}
	if (a == 0 || (a & (a - 1))) {
		char v[24];
		if (kv->type == BELT_GGUF_UINT8 || kv->type == BELT_GGUF_UINT16 ||
		    kv->type == BELT_GGUF_UINT32 || kv->type == BELT_GGUF_UINT64)
			snprintf(v, sizeof v, "%" PRIu64, kv->v.u64);
		else
			snprintf(v, sizeof v, "%" PRId64, kv->v.i64);
		return belt_errf(ps->err, ps->errsz,
				 "%s: key 'general.alignment': alignment %s"
				 " is not a nonzero power of two", g->path, v);
	}
	g->alignment = a;
	return 0;
}

/* ---- tensor infos ---- */

static int tensor_err(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int tensor_err(struct parser *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return belt_errf(ps->err, ps->errsz, "%s: %s: %s", ps->g->path,
			 ps->what, msg);
}

static int parse_dims(struct parser *ps, struct belt_gguf_tensor *t)
{
	if (rd_u32(ps, &t->n_dims))
		return -1;
	if (t->n_dims < 1 || t->n_dims > 4)
		return tensor_err(ps, "n_dims %" PRIu32 " out of range 1..4",
				  t->n_dims);
	int64_t prod = 1; /* of the nonzero dimensions */
	for (uint32_t d = 0; d < 4; d++) {
		uint64_t u = 1;
		if (d < t->n_dims && rd_u64(ps, &u))
			return -1;
		if (u > INT64_MAX)
			return tensor_err(ps, "dimension %" PRIu32
					  " is negative (%" PRId64 ")",
					  d, (int64_t)u);
		t->ne[d] = (int64_t)u;
		if (!u)
			continue;
		if (prod > INT64_MAX / t->ne[d])
			return tensor_err(ps, "dimension product overflows");
		prod *= t->ne[d];
	}
	return 0;
}

/* Type known, ne[0] whole blocks, size = row bytes * rows without overflow. */
static int tensor_size(struct parser *ps, struct belt_gguf_tensor *t,
		       uint32_t type)
{
	if (!belt_type_known((int)type))
		return tensor_err(ps, "unknown type %" PRIu32, type);
	t->type = (enum belt_type)type;
	uint64_t blk = belt_type_block(t->type);
	uint64_t bytes = belt_type_block_bytes(t->type);
	uint64_t ne0 = (uint64_t)t->ne[0];
	if (ne0 % blk)
		return tensor_err(ps, "ne[0] = %" PRIu64
				  " is not a multiple of the %s block size %" PRIu64,
				  ne0, belt_type_name(t->type), blk);
	/* ne[1..3] multiply without overflow: parse_dims checked it */
	uint64_t rows = (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
	uint64_t row_bytes = ne0 / blk;
	if (row_bytes && bytes > UINT64_MAX / row_bytes)
		return tensor_err(ps, "size overflows");
	row_bytes *= bytes;
	if (rows && row_bytes > UINT64_MAX / rows)
		return tensor_err(ps, "size overflows");
	t->size = row_bytes * rows;
	return 0;
}

static const char *tensor_name(const void *arr, uint64_t i)
{
	return ((const struct belt_gguf_tensor *)arr)[i].name;
}

static int parse_tensor_info(struct parser *ps, uint64_t i)
{
	struct belt_gguf *g = ps->g;
	struct gguf_priv *pv = g->priv;
	struct belt_gguf_tensor *t = &g->tensors[i];
	uint32_t type;
	snprintf(ps->what, sizeof ps->what, "tensor info %" PRIu64 " of %" PRIu64,
		 i, g->n_tensors);
	if (rd_name(ps, "tensor name", &t->name))
		return -1;
	char q[GGUF_QUOTE_SIZE];
	if (gguf_index_add(&pv->tensors, i) != UINT64_MAX)
		return belt_errf(ps->err, ps->errsz,
				 "%s: duplicate tensor name '%s'", g->path,
				 gguf_quote(q, t->name));
	snprintf(ps->what, sizeof ps->what, "tensor '%s'", gguf_quote(q, t->name));
	if (parse_dims(ps, t) || rd_u32(ps, &type) || tensor_size(ps, t, type) ||
	    rd_u64(ps, &t->offset))
		return -1;
	if (t->offset % g->alignment)
		return tensor_err(ps, "offset %" PRIu64 " not aligned to %" PRIu64,
				  t->offset, g->alignment);
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Each tensor's bytes lie inside the file. */
static int place_tensors(struct parser *ps)
{
	struct belt_gguf *g = ps->g;
	uint64_t pad = (g->alignment - ps->pos % g->alignment) % g->alignment;
	g->data_offset = sat_add(ps->pos, pad);
	if (!g->n_tensors && g->data_offset > ps->size)
		g->data_offset = ps->size; /* vocab-only files end unpadded */
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		struct belt_gguf_tensor *t = &g->tensors[i];
		uint64_t start = sat_add(g->data_offset, t->offset);
		uint64_t end = sat_add(start, t->size);
		char q[GGUF_QUOTE_SIZE];
		if (end > ps->size)
			return belt_errf(ps->err, ps->errsz,
					 "%s: tensor '%s': data [%" PRIu64
					 "..%" PRIu64 ") extends past end of file (size %"
					 PRIu64 ")", g->path, gguf_quote(q, t->name),
					 start, end, ps->size);
		t->data = ps->b + start;
	}
	return 0;
}

/* ---- whole file ---- */

static int parse_tables(struct parser *ps, uint64_t n_kv, uint64_t n_t)
{
	struct belt_gguf *g = ps->g;
	struct gguf_priv *pv = g->priv;
	g->kv = calloc(n_kv ? n_kv : 1, sizeof *g->kv);
	g->tensors = calloc(n_t ? n_t : 1, sizeof *g->tensors);
	if (!g->kv || !g->tensors ||
	    gguf_index_init(&pv->keys, n_kv, g->kv, kv_name) ||
	    gguf_index_init(&pv->tensors, n_t, g->tensors, tensor_name))
		return belt_errf(ps->err, ps->errsz, "%s: out of memory", g->path);
	g->n_kv = n_kv;
	g->n_tensors = n_t;
	for (uint64_t i = 0; i < n_kv; i++)
		if (parse_kv(ps, i))
			return -1;
	if (parse_alignment(ps))
		return -1;
	for (uint64_t i = 0; i < n_t; i++)
		if (parse_tensor_info(ps, i))
			return -1;
	return place_tensors(ps);
}

static struct belt_gguf *parse(const void *data, uint64_t size, const char *name,
			       char *err, size_t errsz)
{
	struct belt_gguf *g = calloc(1, sizeof *g);
	struct gguf_priv *pv = calloc(1, sizeof *pv);
	char *path = strdup(name);
	if (!g || !pv || !path) {
		free(g);
		free(pv);
		free(path);
		belt_errf(err, errsz, "%s: out of memory", name);
		return NULL;
	}
	g->path = path;
	g->priv = pv;
	g->base = data;
	g->size = size;
	struct parser ps = {.g = g, .b = data, .size = size, .err = err,
			    .errsz = errsz};
	uint64_t n_kv, n_t;
	if (parse_header(&ps, &n_kv, &n_t) || parse_tables(&ps, n_kv, n_t)) {
		belt_gguf_close(g);
		return NULL;
	}
	return g;
}

struct belt_gguf *belt_gguf_open_mem(const void *data, size_t size,
				     const char *name, char *err, size_t errsz)
{
	if (!name)
		name = "<memory>";
	if (!data && size)
		return belt_errf(err, errsz, "%s: no data", name), NULL;
	return parse(data ? data : "", size, name, err, errsz);
}

/* Map path read-only; *len 0 and NULL for an empty file. */
static int map_file(const char *path, void **map, size_t *len, char *err,
		    size_t errsz)
{
	struct stat st;
	*map = NULL;
	*len = 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer before the
	 * regular-file check below refuses it */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return belt_errf(err, errsz, "%s: cannot open: %s", path,
				 strerror(errno));
	int rc = -1;
	if (fstat(fd, &st))
		belt_errf(err, errsz, "%s: cannot stat: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		belt_errf(err, errsz, "%s: not a regular file", path);
	else if ((uint64_t)st.st_size > SIZE_MAX)
		belt_errf(err, errsz, "%s: too large to map (%jd bytes)", path,
			  (intmax_t)st.st_size);
	else
		rc = 0;
	*len = rc ? 0 : (size_t)st.st_size;
	if (!rc && *len) {
		*map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (*map == MAP_FAILED) {
			*map = NULL;
			rc = belt_errf(err, errsz, "%s: cannot map: %s", path,
				       strerror(errno));
		} else if (fstat(fd, &st) || (uint64_t)st.st_size < *len) {
			/* shrunk between the size check and the map: reading
			 * past its new end would fault (doc/architecture.md) */
			munmap(*map, *len);
			*map = NULL;
			rc = belt_errf(err, errsz, "%s: the file changed size while it was opened",
				       path);
		}
	}
	close(fd);
	return rc;
}

struct belt_gguf *belt_gguf_open(const char *path, char *err, size_t errsz)
{
	void *map;
	size_t len;
	if (!path)
		return belt_errf(err, errsz, "(null): no path"), NULL;
	if (map_file(path, &map, &len, err, errsz))
		return NULL;
	struct belt_gguf *g = parse(map ? map : "", len, path, err, errsz);
	if (!g) {
		if (map)
			munmap(map, len);
		return NULL;
	}
	struct gguf_priv *pv = g->priv;
	pv->map = map;
	pv->map_len = len;
	return g;
}

static void free_kv(struct belt_gguf_kv *kv)
{
	free((void *)kv->key);
	if (kv->type == BELT_GGUF_ARRAY && kv->v.arr.type == BELT_GGUF_STRING)
		free((void *)kv->v.arr.strs);
}

void belt_gguf_close(struct belt_gguf *g)
{
	if (!g)
		return;
	struct gguf_priv *pv = g->priv;
	for (uint64_t i = 0; g->kv && i < g->n_kv; i++)
		free_kv(&g->kv[i]);
	for (uint64_t i = 0; g->tensors && i < g->n_tensors; i++)
		free((void *)g->tensors[i].name);
	free(g->kv);
	free(g->tensors);
	if (pv) {
		gguf_index_free(&pv->keys);
		gguf_index_free(&pv->tensors);
		if (pv->map)
			munmap(pv->map, pv->map_len);
		free(pv);
	}
	free((void *)g->path);
	free(g);
}
