/* GGUF v3 writer: metadata in insertion order, tensor data aligned to 32
 * bytes and streamed through a 1 MiB buffer, written to a temporary file
 * that is renamed over the path once complete. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf_writer.h"
#include "gguf/gguf_priv.h"

#define WRITER_ALIGNMENT 32
#define WRITER_BUF_BYTES (1u << 20)

struct wkv {
	char *key;
	enum belt_gguf_vtype type;  /* a scalar type, STRING or ARRAY */
	enum belt_gguf_vtype etype; /* ARRAY: element type */
	uint64_t n;		    /* ARRAY: element count */
	uint8_t scalar[4];	    /* scalars, little-endian */
	char *str;		    /* STRING */
	void *data;		    /* numeric ARRAY */
	char **strs;		    /* STRING ARRAY */
	uint8_t *raw;		    /* copy_kv: the value as it is serialized */
	size_t raw_len;
};

struct wtensor {
	char *name;
	enum belt_type type;
	uint32_t n_dims;
	int64_t ne[4];
	uint64_t size;
	void *data; /* copied bytes, or NULL when fill produces them */
	belt_gguf_fill_fn fill;
	void *ud;
};

struct belt_gguf_writer {
	struct wkv *kv;
	size_t n_kv, cap_kv;
	struct wtensor *t;
	size_t n_t, cap_t;
};

struct belt_gguf_writer *belt_gguf_writer_new(void)
{
	return calloc(1, sizeof(struct belt_gguf_writer));
}

static void free_kv(struct wkv *kv)
{
	free(kv->key);
	free(kv->str);
	free(kv->data);
	for (uint64_t i = 0; kv->strs && i < kv->n; i++)
		free(kv->strs[i]);
	free(kv->strs);
	free(kv->raw);
}

void belt_gguf_writer_free(struct belt_gguf_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n_kv; i++)
		free_kv(&w->kv[i]);
	for (size_t i = 0; i < w->n_t; i++) {
		free(w->t[i].name);
		free(w->t[i].data);
	}
	free(w->kv);
	free(w->t);
	free(w);
}

/* ---- metadata ---- */

/* Grow *arr (of *cap elements of sz bytes) to hold n + 1. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, c * sz);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

/* A new entry with a copy of key, or NULL. */
static struct wkv *add_kv(struct belt_gguf_writer *w, const char *key,
			  enum belt_gguf_vtype type)
{
	if (!w || !key || !*key ||
	    grow((void **)&w->kv, &w->cap_kv, w->n_kv, sizeof *w->kv))
		return NULL;
	struct wkv *kv = &w->kv[w->n_kv];
	memset(kv, 0, sizeof *kv);
	kv->key = strdup(key);
	if (!kv->key)
		return NULL;
	kv->type = type;
	w->n_kv++;
	return kv;
}

static int add_scalar32(struct belt_gguf_writer *w, const char *key,
			enum belt_gguf_vtype t, uint32_t bits)
{
	struct wkv *kv = add_kv(w, key, t);
	if (!kv)
		return -1;
	for (int i = 0; i < 4; i++)
		kv->scalar[i] = (uint8_t)(bits >> (8 * i));
	return 0;
}

int belt_gguf_writer_u32(struct belt_gguf_writer *w, const char *key, uint32_t v)
{
	return add_scalar32(w, key, BELT_GGUF_UINT32, v);
}

int belt_gguf_writer_i32(struct belt_gguf_writer *w, const char *key, int32_t v)
{
	return add_scalar32(w, key, BELT_GGUF_INT32, (uint32_t)v);
}

int belt_gguf_writer_f32(struct belt_gguf_writer *w, const char *key, float v)
{
	uint32_t bits;
	memcpy(&bits, &v, 4);
	return add_scalar32(w, key, BELT_GGUF_FLOAT32, bits);
}

int belt_gguf_writer_bool(struct belt_gguf_writer *w, const char *key, bool v)
{
	return add_scalar32(w, key, BELT_GGUF_BOOL, v ? 1 : 0);
}

int belt_gguf_writer_str(struct belt_gguf_writer *w, const char *key, const char *v)
{
	if (!v)
		return -1;
	char *copy = strdup(v);
	struct wkv *kv = copy ? add_kv(w, key, BELT_GGUF_STRING) : NULL;
	if (!kv) {
		free(copy);
		return -1;
	}
	kv->str = copy;
	return 0;
}

int belt_gguf_writer_arr(struct belt_gguf_writer *w, const char *key,
			 enum belt_gguf_vtype t, const void *data, uint64_t n)
{
	size_t esz = gguf_vtype_size((uint32_t)t);
	if (!esz || n > SIZE_MAX / esz || (n && !data))
		return -1;
	void *copy = malloc(n ? n * esz : 1);
	struct wkv *kv = copy ? add_kv(w, key, BELT_GGUF_ARRAY) : NULL;
	if (!kv) {
		free(copy);
		return -1;
	}
	if (n)
		memcpy(copy, data, n * esz);
	kv->etype = t;
	kv->n = n;
	kv->data = copy;
	return 0;
}

static char **copy_strs(const char *const *v, uint64_t n)
{
	if (n > SIZE_MAX / sizeof(char *) || (n && !v))
		return NULL;
	char **s = calloc(n ? n : 1, sizeof *s);
	for (uint64_t i = 0; s && i < n; i++) {
		s[i] = v[i] ? strdup(v[i]) : NULL;
		if (!s[i]) {
			while (i--)
				free(s[i]);
			free(s);
			return NULL;
		}
	}
	return s;
}

int belt_gguf_writer_arr_str(struct belt_gguf_writer *w, const char *key,
			     const char *const *v, uint64_t n)
{
	char **s = copy_strs(v, n);
	struct wkv *kv = s ? add_kv(w, key, BELT_GGUF_ARRAY) : NULL;
	if (!kv) {
		for (uint64_t i = 0; s && i < n; i++)
			free(s[i]);
		free(s);
		return -1;
	}
	kv->etype = BELT_GGUF_STRING;
	kv->n = n;
	kv->strs = s;
	return 0;
}

/* Growable byte buffer for a serialized value; err set on overflow. */
struct blob {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void blob_put(struct blob *b, const void *src, size_t n)
{
	if (b->err || n > SIZE_MAX - b->len) {
		b->err = 1;
		return;
	}
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 64;
		while (c < b->len + n)
			c = c > SIZE_MAX / 2 ? b->len + n : c * 2;
		uint8_t *q = realloc(b->p, c);
		if (!q) {
			b->err = 1;
			return;
		}
		b->p = q;
		b->cap = c;
	}
	if (n)
		memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void blob_le(struct blob *b, uint64_t v, size_t n)
{
	uint8_t le[8];
	for (size_t i = 0; i < n; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	blob_put(b, le, n);
}

static void blob_str(struct blob *b, const struct belt_gguf_str *s)
{
	blob_le(b, s->len, 8);
	if (s->len > SIZE_MAX)
		b->err = 1;
	else
		blob_put(b, s->ptr, (size_t)s->len);
}

/* A scalar of type t from the reader's decoded value. */
static void blob_scalar(struct blob *b, enum belt_gguf_vtype t, const struct belt_gguf_kv *kv)
{
	switch (t) {
	case BELT_GGUF_FLOAT32: {
		float f = (float)kv->v.f64;
		uint32_t u;
		memcpy(&u, &f, 4);
		blob_le(b, u, 4);
		break;
	}
	case BELT_GGUF_FLOAT64: {
		uint64_t u;
		memcpy(&u, &kv->v.f64, 8);
		blob_le(b, u, 8);
		break;
	}
	case BELT_GGUF_BOOL: blob_le(b, kv->v.b ? 1 : 0, 1); break;
	case BELT_GGUF_STRING: blob_str(b, &kv->v.str); break;
	default: blob_le(b, kv->v.u64, gguf_vtype_size(t)); break;
	}
}

int belt_gguf_writer_copy_kv(struct belt_gguf_writer *w, const struct belt_gguf_kv *kv)
{
	if (!kv || !kv->key)
		return -1;
	struct blob b = {0};
	if (kv->type == BELT_GGUF_ARRAY) {
		enum belt_gguf_vtype et = kv->v.arr.type;
		blob_le(&b, (uint32_t)et, 4);
		blob_le(&b, kv->v.arr.n, 8);
		if (et == BELT_GGUF_STRING) {
			for (uint64_t i = 0; i < kv->v.arr.n && !b.err; i++)
				blob_str(&b, &kv->v.arr.strs[i]);
		} else {
			size_t esz = gguf_vtype_size((uint32_t)et);
			if (!esz || kv->v.arr.n > SIZE_MAX / esz)
				b.err = 1;
			else
				blob_put(&b, kv->v.arr.data, (size_t)kv->v.arr.n * esz);
		}
	} else if (kv->type <= BELT_GGUF_FLOAT64 && kv->type != BELT_GGUF_ARRAY &&
		   (kv->type == BELT_GGUF_STRING || gguf_vtype_size(kv->type))) {
		blob_scalar(&b, kv->type, kv);
	} else {
		b.err = 1;
	}
	struct wkv *x = b.err ? NULL : add_kv(w, kv->key, kv->type);
	if (!x) {
		free(b.p);
		return -1;
	}
	x->raw = b.p ? b.p : malloc(1);
	x->raw_len = b.len;
	return x->raw ? 0 : -1;
}

/* ---- tensors ---- */

/* Bytes of a tensor of this type and shape, or 0 if it is invalid. */
static uint64_t tensor_bytes(enum belt_type t, uint32_t n_dims,
			     const int64_t *ne)
{
	if (!belt_type_known(t) || n_dims < 1 || n_dims > 4 || !ne)
		return 0;
	uint64_t rows = 1;
	for (uint32_t d = 0; d < n_dims; d++)
		if (ne[d] <= 0)
			return 0;
	for (uint32_t d = 1; d < n_dims; d++) {
		if (rows > UINT64_MAX / (uint64_t)ne[d])
			return 0;
		rows *= (uint64_t)ne[d];
	}
	uint64_t blk = belt_type_block(t), bytes = belt_type_block_bytes(t);
	uint64_t ne0 = (uint64_t)ne[0];
	if (ne0 % blk || ne0 / blk > UINT64_MAX / bytes / rows)
		return 0;
	return ne0 / blk * bytes * rows;
}

static struct wtensor *add_tensor(struct belt_gguf_writer *w, const char *name,
				  enum belt_type t, uint32_t n_dims,
				  const int64_t *ne)
{
	uint64_t size = tensor_bytes(t, n_dims, ne);
	if (!w || !name || !*name || !size ||
	    grow((void **)&w->t, &w->cap_t, w->n_t, sizeof *w->t))
		return NULL;
	struct wtensor *x = &w->t[w->n_t];
	memset(x, 0, sizeof *x);
	x->name = strdup(name);
	if (!x->name)
		return NULL;
	x->type = t;
	x->n_dims = n_dims;
	for (uint32_t d = 0; d < 4; d++)
		x->ne[d] = d < n_dims ? ne[d] : 1;
	x->size = size;
	w->n_t++;
	return x;
}

int belt_gguf_writer_tensor(struct belt_gguf_writer *w, const char *name,
			    enum belt_type t, uint32_t n_dims,
			    const int64_t *ne, const void *data)
{
	uint64_t size = tensor_bytes(t, n_dims, ne);
	if (!size || !data || size > SIZE_MAX)
		return -1;
	void *copy = malloc((size_t)size);
	struct wtensor *x = copy ? add_tensor(w, name, t, n_dims, ne) : NULL;
	if (!x) {
		free(copy);
		return -1;
	}
	memcpy(copy, data, (size_t)size);
	x->data = copy;
	return 0;
}

int belt_gguf_writer_tensor_fn(struct belt_gguf_writer *w, const char *name,
			       enum belt_type t, uint32_t n_dims,
			       const int64_t *ne, belt_gguf_fill_fn fill,
			       void *ud)
{
	if (!fill)
		return -1;
	struct wtensor *x = add_tensor(w, name, t, n_dims, ne);
	if (!x)
		return -1;
	x->fill = fill;
	x->ud = ud;
	return 0;
}

/* ---- output ---- */

struct out {
	int fd;
	uint8_t *buf;
	size_t len;
	uint64_t total; /* bytes emitted so far */
	int err;	/* first errno, or 0 */
};

static void flush(struct out *o)
{
	size_t done = 0;
	while (!o->err && done < o->len) {
		ssize_t r = write(o->fd, o->buf + done, o->len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			o->err = r < 0 ? errno : EIO;
		else
			done += (size_t)r;
	}
	o->len = 0;
}

static void put(struct out *o, const void *p, size_t n)
{
	const uint8_t *s = p;
	o->total += n;
	while (n) {
		if (o->len == WRITER_BUF_BYTES)
			flush(o);
		size_t k = WRITER_BUF_BYTES - o->len;
		k = k < n ? k : n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void put_u32(struct out *o, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(o, b, 4);
}

static void put_u64(struct out *o, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(o, b, 8);
}

static void put_str(struct out *o, const char *s)
{
	size_t n = strlen(s);
	put_u64(o, n);
	put(o, s, n);
}

static void put_pad(struct out *o)
{
	static const uint8_t zero[WRITER_ALIGNMENT];
	put(o, zero, (WRITER_ALIGNMENT - o->total % WRITER_ALIGNMENT) %
			     WRITER_ALIGNMENT);
}

static uint64_t align_up(uint64_t x)
{
	return (x + WRITER_ALIGNMENT - 1) / WRITER_ALIGNMENT * WRITER_ALIGNMENT;
}

static void put_kv(struct out *o, const struct wkv *kv)
{
	put_str(o, kv->key);
	put_u32(o, kv->type);
	if (kv->raw) {
		put(o, kv->raw, kv->raw_len);
	} else if (kv->type == BELT_GGUF_STRING) {
		put_str(o, kv->str);
	} else if (kv->type == BELT_GGUF_ARRAY) {
		put_u32(o, kv->etype);
		put_u64(o, kv->n);
		for (uint64_t i = 0; kv->strs && i < kv->n; i++)
			put_str(o, kv->strs[i]);
		if (kv->data)
			put(o, kv->data, kv->n * gguf_vtype_size(kv->etype));
	} else {
		put(o, kv->scalar, gguf_vtype_size(kv->type));
	}
}

static void put_tensor_info(struct out *o, const struct wtensor *t,
			    uint64_t offset)
{
	put_str(o, t->name);
	put_u32(o, t->n_dims);
	for (uint32_t d = 0; d < t->n_dims; d++)
		put_u64(o, (uint64_t)t->ne[d]);
	put_u32(o, (uint32_t)t->type);
	put_u64(o, offset);
}

/* Stream a tensor's bytes; -1 if its fill callback fails. */
static int put_tensor_data(struct out *o, const struct wtensor *t)
{
	if (t->data) {
		put(o, t->data, t->size);
		return 0;
	}
	for (uint64_t off = 0; off < t->size && !o->err;) {
		if (o->len == WRITER_BUF_BYTES)
			flush(o);
		uint64_t k = WRITER_BUF_BYTES - o->len;
		k = k < t->size - off ? k : t->size - off;
		if (t->fill(t->ud, o->buf + o->len, off, k))
			return -1;
		o->len += k;
		o->total += k;
		off += k;
	}
	return 0;
}

/* Everything but the file handling; -1 with a message. */
static int emit(const struct belt_gguf_writer *w, struct out *o,
		const char *path, char *err, size_t errsz)
{
	put_u32(o, 0x46554747u); /* "GGUF" */
	put_u32(o, 3);
	put_u64(o, w->n_t);
	put_u64(o, w->n_kv);
	for (size_t i = 0; i < w->n_kv; i++)
		put_kv(o, &w->kv[i]);
	uint64_t offset = 0;
	for (size_t i = 0; i < w->n_t; i++) {
		put_tensor_info(o, &w->t[i], offset);
		offset = align_up(offset + w->t[i].size);
	}
	for (size_t i = 0; i < w->n_t && !o->err; i++) {
		put_pad(o);
		char q[GGUF_QUOTE_SIZE];
		if (put_tensor_data(o, &w->t[i]))
			return belt_errf(err, errsz,
					 "%s: tensor '%s': fill callback failed",
					 path, gguf_quote(q, w->t[i].name));
	}
	if (w->n_t)
		put_pad(o);
	flush(o);
	if (o->err)
		return belt_errf(err, errsz, "%s: write failed: %s", path,
				 strerror(o->err));
	return 0;
}

/* Duplicate keys or tensor names would make the file unreadable. */
static int check_unique(const struct belt_gguf_writer *w, const char *path,
			char *err, size_t errsz)
{
	char q[GGUF_QUOTE_SIZE];
	for (size_t i = 0; i < w->n_kv; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(w->kv[i].key, w->kv[j].key))
				return belt_errf(err, errsz, "%s: duplicate key '%s'",
						 path, gguf_quote(q, w->kv[i].key));
	for (size_t i = 0; i < w->n_t; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(w->t[i].name, w->t[j].name))
				return belt_errf(err, errsz,
						 "%s: duplicate tensor name '%s'", path,
						 gguf_quote(q, w->t[i].name));
	return 0;
}

static int write_tmp(const struct belt_gguf_writer *w, const char *tmp,
		     const char *path, char *err, size_t errsz)
{
	struct out o = {.fd = -1};
	o.buf = malloc(WRITER_BUF_BYTES);
	if (!o.buf)
		return belt_errf(err, errsz, "%s: out of memory", path);
	o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (o.fd < 0) {
		free(o.buf);
		return belt_errf(err, errsz, "%s: cannot create %s: %s", path,
				 tmp, strerror(errno));
	}
	int rc = emit(w, &o, path, err, errsz);
	free(o.buf);
	if (close(o.fd) && !rc)
		rc = belt_errf(err, errsz, "%s: write failed: %s", path,
			       strerror(errno));
	return rc;
}

int belt_gguf_writer_write(const struct belt_gguf_writer *w, const char *path,
			   char *err, size_t errsz)
{
	if (!w || !path)
		return belt_errf(err, errsz, "%s: no writer or path",
				 path ? path : "(null)");
	if (check_unique(w, path, err, errsz))
		return -1;
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	if (!tmp)
		return belt_errf(err, errsz, "%s: out of memory", path);
	snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
	int rc = write_tmp(w, tmp, path, err, errsz);
	if (!rc && rename(tmp, path))
		rc = belt_errf(err, errsz, "%s: cannot rename %s: %s", path, tmp,
			       strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
