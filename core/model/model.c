/* Loading a model: GGUF, then the architecture YAML it names, then the
 * hyperparameters and tensor shapes checked against each other, then the
 * backend and the weights. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/config.h"
#include "belt/arch.h"
#include "model/model.h"
#include "util/paths.h"

void belt_model_params_default(struct belt_model_params *p)
{
	*p = (struct belt_model_params){.backend = "cpu", .device = -1};
}

void belt_subst_layer(const char *name, int layer, char *out, size_t outsz)
{
	size_t o = 0;
	for (const char *s = name; *s && o + 1 < outsz; s++) {
		if (!strncmp(s, "{l}", 3)) {
			o += (size_t)snprintf(out + o, outsz - o, "%d", layer);
			s += 2;
		} else
			out[o++] = *s;
	}
	out[o < outsz ? o : outsz - 1] = 0;
}

/* Replace "{arch}" in a key template by the architecture name. */
static void subst_arch(const char *tmpl, const char *arch, char *out, size_t outsz)
{
	const char *p = strstr(tmpl, "{arch}");
	if (!p)
		snprintf(out, outsz, "%s", tmpl);
	else
		snprintf(out, outsz, "%.*s%s%s", (int)(p - tmpl), tmpl, arch, p + 6);
}

static const struct arch_tensor *arch_tensor_for(const struct belt_arch *a,
						 const char *name, int *layer)
{
	for (unsigned i = 0; i < a->n_tensors; i++) {
		const struct arch_tensor *t = &a->tensors[i];
		if (!t->per_layer) {
			if (!strcmp(t->name, name))
				return t;
			continue;
		}
		/* match "prefix{l}suffix" against name */
		const char *l = strstr(t->name, "{l}");
		size_t pre = (size_t)(l - t->name), suf = strlen(l + 3), n = strlen(name);
		if (n <= pre + suf || strncmp(name, t->name, pre) || strcmp(name + n - suf, l + 3))
			continue;
		char *end;
		long v = strtol(name + pre, &end, 10);
		if (end == name + n - suf && v >= 0) {
			*layer = (int)v;
			return t;
		}
	}
	return NULL;
}

bool belt_model_declares(const struct belt_model *m, const char *name)
{
	int layer;
	return arch_tensor_for(m->arch, name, &layer) != NULL;
}

const struct belt_gguf_tensor *belt_model_tensor(const struct belt_model *m,
						 const char *name)
{
	int layer = -1;
	const struct arch_tensor *t = arch_tensor_for(m->arch, name, &layer);
	if (!t)
		return NULL;
	const struct belt_gguf_tensor *gt = belt_gguf_find_tensor(m->g, name);
	if (!gt && t->fallback) {
		char fb[256];
		belt_subst_layer(t->fallback, layer, fb, sizeof fb);
		gt = belt_gguf_find_tensor(m->g, fb);
	}
	return gt;
}

/* Names of architectures, for a message. */
struct arch_names {
	char name[64][64];
	int n;
};

static void add_name(const char *name, const char *file, void *ud)
{
	(void)file;
	struct arch_names *an = ud;
	for (int i = 0; i < an->n; i++)
		if (!strcmp(an->name[i], name))
			return; /* a YAML file and a plugin of one name */
	if (an->n < 64)
		snprintf(an->name[an->n++], sizeof an->name[0], "%s", name);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The architecture's description: <arch>.yaml on the arch path, else the
 * one its plugin registers. The plugin is loaded where there is one either
 * way, so a YAML file on the path may use its ops. */
static int load_arch(const struct belt_model_params *p, const struct model_arch_plugins *ap,
		     const char *arch, struct belt_arch **out, char *err, size_t errsz)
{
	char dirs[4096], path[4096];
	belt_search_dirs(dirs, sizeof dirs, p->arch_dir, "BELT_ARCH_PATH", BELT_ARCH_DIR,
			 BELT_SRC_ARCH_DIR);
	const struct belt_arch_ops *plug = NULL;
	if (ap && ap->find(arch, &plug, err, errsz) < 0)
		return -1;
	if (belt_arch_find(arch, dirs, path, sizeof path) == 0)
		return belt_arch_load(path, out, err, errsz);
	if (plug)
		return belt_arch_load_text(plug->source, plug->yaml, out, err, errsz);
	struct arch_names an = {.n = 0};
	belt_arch_list(dirs, add_name, &an);
	if (ap)
		ap->list(add_name, &an);
	qsort(an.name, (size_t)an.n, sizeof an.name[0], cmp_name);
	char known[1024] = "";
	for (int i = 0; i < an.n; i++)
		if (strlen(known) + strlen(an.name[i]) + 3 < sizeof known)
			snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
				 i ? ", " : "", an.name[i]);
	return belt_errf(err, errsz,
			 "key 'general.architecture': unknown architecture '%s' (supported: %s; "
			 "no %s.yaml in %s, no plugin arch-%s)",
			 arch, *known ? known : "none", arch, dirs, arch);
}

/* A string key's value through the hparam's values: 1 and *v when the
 * key is present, 0 when absent, -1 (naming the key, its value and the
 * ones this architecture knows) otherwise. */
static int string_value(struct belt_model *m, const struct arch_hparam *h, const char *key,
			double *v, char *err, size_t errsz)
{
	struct belt_gguf_str str;
	int found = belt_gguf_get_str(m->g, key, &str, err, errsz);
	if (found <= 0)
		return found;
	for (const char *p = h->values; *p;) {
		size_t n = strcspn(p, "="), w = strcspn(p, " ");
		if (n == str.len && !memcmp(p, str.ptr, n)) {
			char num[64], msg[BELT_ERR_SIZE];
			snprintf(num, sizeof num, "%.*s", (int)(w - n - 1), p + n + 1);
			if (belt_expr_eval(num, &m->vars, v, msg, sizeof msg))
				return belt_errf(err, errsz, "%s:%u:%u: hparam '%s' values: %s",
						 m->arch->path, h->pos.line, h->pos.col, h->name, msg);
			return 1;
		}
		p += w + (p[w] == ' ');
	}
	char known[256] = "";
	for (const char *p = h->values; *p;) {
		size_t n = strcspn(p, "="), w = strcspn(p, " ");
		snprintf(known + strlen(known), sizeof known - strlen(known), "%s'%.*s'",
			 *known ? ", " : "", (int)n, p);
		p += w + (p[w] == ' ');
	}
	return belt_errf(err, errsz,
			 "key '%s' is '%.*s': this build's %s architecture takes %s (%s:%u:%u)",
			 key, (int)(str.len > 64 ? 64 : str.len), str.ptr, m->arch_name, known,
			 m->arch->path, h->pos.line, h->pos.col);
}

static int resolve_hparams(struct belt_model *m, char *err, size_t errsz)
{
	const struct belt_arch *a = m->arch;
	for (unsigned i = 0; i < a->n_hparams; i++) {
		const struct arch_hparam *h = &a->hparams[i];
		double v = 0;
		char key[256] = "";
		int found = 0;
		if (h->key) {
			subst_arch(h->key, m->arch_name, key, sizeof key);
			found = h->values ? string_value(m, h, key, &v, err, errsz)
					  : belt_gguf_get_float(m->g, key, &v, err, errsz);
			if (found < 0)
				return -1;
		}
		if (!found && h->tensor) {
			const struct belt_gguf_tensor *t = belt_gguf_find_tensor(m->g, h->tensor);
			if (!t)
				return belt_errf(err, errsz,
						 "missing tensor '%s' (gives hparam '%s', %s:%u:%u)",
						 h->tensor, h->name, a->path, h->pos.line, h->pos.col);
			v = (double)t->ne[h->dim];
			found = 1;
		}
		if (!found && h->def) {
			char msg[BELT_ERR_SIZE];
			if (belt_expr_eval(h->def, &m->vars, &v, msg, sizeof msg))
				return belt_errf(err, errsz, "%s:%u:%u: hparam '%s' default: %s",
						 a->path, h->pos.line, h->pos.col, h->name, msg);
			found = 1;
		}
		if (!found)
			return belt_errf(err, errsz, "missing key '%s' (hparam '%s', %s:%u:%u)",
					 key, h->name, a->path, h->pos.line, h->pos.col);
		if ((!(v > 0) && !(h->values && v == 0)) || !isfinite(v))
			return belt_errf(err, errsz, "hparam '%s' = %g%s%s: expected a positive number",
					 h->name, v, *key ? " from key " : "", key);
		if (belt_vars_set(&m->vars, h->name, v))
			return belt_errf(err, errsz, "%s: too many hparams", a->path);
	}
	for (unsigned i = 0; i < a->n_derived; i++) {
		const struct arch_named_expr *d = &a->derived[i];
		double v;
		char msg[BELT_ERR_SIZE];
		if (belt_expr_eval(d->expr, &m->vars, &v, msg, sizeof msg))
			return belt_errf(err, errsz, "%s:%u:%u: derived '%s': %s", a->path,
					 d->pos.line, d->pos.col, d->name, msg);
		if (belt_vars_set(&m->vars, d->name, v))
			return belt_errf(err, errsz, "%s: too many derived values", a->path);
	}
	return 0;
}

/* Integral hparam used as a count; checked against a sane bound. */
static int count_var(struct belt_model *m, const char *name, uint32_t max,
		     uint32_t *out, char *err, size_t errsz)
{
	double v;
	if (!belt_vars_get(&m->vars, name, &v))
		return belt_errf(err, errsz, "%s: architecture defines no '%s'", m->arch->path, name);
	if (v != floor(v) || v < 1 || v > max)
		return belt_errf(err, errsz, "hparam '%s' = %g: expected an integer in 1..%u",
				 name, v, max);
	*out = (uint32_t)v;
	return 0;
}

static int check_tensor(struct belt_model *m, const struct arch_tensor *t,
			int layer, char *err, size_t errsz)
{
	char name[256];
	belt_subst_layer(t->name, layer, name, sizeof name);
	const struct belt_gguf_tensor *gt = belt_model_tensor(m, name);
	if (!gt && t->optional)
		return 0;
	if (!gt)
		return belt_errf(err, errsz, "missing tensor '%s'%s%s (required by %s:%u:%u)",
				 name, t->fallback ? " and its fallback " : "",
				 t->fallback ? t->fallback : "", m->arch->path, t->pos.line, t->pos.col);
	int64_t want[4] = {1, 1, 1, 1};
	for (unsigned d = 0; d < t->n_dims; d++) {
		double v;
		char msg[BELT_ERR_SIZE];
		if (belt_expr_eval(t->shape[d], &m->vars, &v, msg, sizeof msg))
			return belt_errf(err, errsz, "%s:%u:%u: tensor '%s' shape: %s", m->arch->path,
					 t->pos.line, t->pos.col, t->name, msg);
		want[d] = (int64_t)v;
	}
	for (unsigned d = 0; d < 4; d++) {
		if (gt->ne[d] != want[d])
			return belt_errf(err, errsz,
					 "tensor '%s' has shape [%lld, %lld, %lld, %lld] but the hyperparameters give [%lld, %lld, %lld, %lld] (%s:%u:%u)",
					 gt->name, (long long)gt->ne[0], (long long)gt->ne[1],
					 (long long)gt->ne[2], (long long)gt->ne[3], (long long)want[0],
					 (long long)want[1], (long long)want[2], (long long)want[3],
					 m->arch->path, t->pos.line, t->pos.col);
	}
	return 0;
}

static int check_tensors(struct belt_model *m, char *err, size_t errsz)
{
	for (unsigned i = 0; i < m->arch->n_tensors; i++) {
		const struct arch_tensor *t = &m->arch->tensors[i];
		for (int l = 0; l < (t->per_layer ? (int)m->n_layer : 1); l++)
			if (check_tensor(m, t, t->per_layer ? l : -1, err, errsz))
				return -1;
	}
	return 0;
}

/* Weight buffers hold at most this much (1 GiB, or $BELT_WEIGHT_PIECE_MAX
 * bytes, which tests lower), so no allocation exceeds what GPU drivers
 * grant at once (4 GiB on NVIDIA's Vulkan); a single larger tensor gets a
 * buffer of its own. */
static uint64_t piece_max(void)
{
	const char *env = getenv("BELT_WEIGHT_PIECE_MAX");
	long long v = env ? atoll(env) : 0;
	return v > 0 ? (uint64_t)v : 1ull << 30;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct belt_gguf_tensor *x = *(const struct belt_gguf_tensor *const *)a;
	const struct belt_gguf_tensor *y = *(const struct belt_gguf_tensor *const *)b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Weight upload progress on stderr, when it is a terminal: at most ten
 * lines a second, none for an upload that takes less than 0.1 s, and the
 * line erased at the end (tests capture stderr, which is then no tty). */
struct progress {
	uint64_t done, total;
	double next;	/* time of the next update */
	bool tty, shown;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_start(struct progress *pg, uint64_t total)
{
	*pg = (struct progress){.total = total, .tty = isatty(2) == 1};
	pg->next = pg->tty ? now_s() + 0.1 : 0;
}

static void progress_add(struct progress *pg, uint64_t n)
{
	pg->done += n;
	if (!pg->tty || now_s() < pg->next)
		return;
	fprintf(stderr, "\rbelt: uploading weights %3.0f%%  %.1f / %.1f MiB\033[K",
		100.0 * (double)pg->done / (double)pg->total, pg->done / 1048576.0,
		pg->total / 1048576.0);
	fflush(stderr);
	pg->shown = true;
	pg->next = now_s() + 0.1;
}

static void progress_end(struct progress *pg)
{
	if (pg->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

static int add_piece(struct belt_model *m, uint64_t start, uint64_t end,
		     struct progress *pg, char *err, size_t errsz)
{
	const uint8_t *data = m->g->base + m->g->data_offset;
	struct weight_piece *p = &m->pieces[m->n_pieces];
	*p = (struct weight_piece){NULL, start, end};
	if (m->be->buffer_create(m->be_ctx, BELT_BUFFER_WEIGHTS, end - start, &p->buf, err, errsz))
		return belt_err_prefix(err, errsz, "weights");
	m->n_pieces++;
	const uint64_t step = 64u << 20;
	for (uint64_t off = start; off < end; off += step) {
		uint64_t n = end - off < step ? end - off : step;
		if (m->be->buffer_write(m->be_ctx, p->buf, off - start, data + off, n, err, errsz))
			return belt_err_prefix(err, errsz, "weights");
		progress_add(pg, n);
	}
	return 0;
}

static int load_weights(struct belt_model *m, char *err, size_t errsz)
{
	const uint8_t *data = m->g->base + m->g->data_offset;
	uint64_t size = m->g->size - m->g->data_offset;
	uint64_t n = m->g->n_tensors;
	m->pieces = calloc(n ? n : 1, sizeof *m->pieces);
	const struct belt_gguf_tensor **order = calloc(n ? n : 1, sizeof *order);
	int rc = 0;
	char werr[BELT_ERR_SIZE];
	if (!m->pieces || !order)
		rc = belt_errf(err, errsz, "weights: out of memory");
	else if (m->be->buffer_wrap && size &&
		 m->be->buffer_wrap(m->be_ctx, data, size, &m->pieces[0].buf, werr, sizeof werr) == 0) {
		m->pieces[0].end = size;
		m->n_pieces = 1;
	} else {
		/* copy whole tensors, in file order, into pieces of bounded size */
		for (uint64_t i = 0; i < n; i++)
			order[i] = &m->g->tensors[i];
		qsort(order, n, sizeof *order, cmp_offset);
		uint64_t start = 0, end = 0, cap = piece_max(), last = 0;
		for (uint64_t i = 0; i < n; i++)
			if (order[i]->offset + order[i]->size > last)
				last = order[i]->offset + order[i]->size;
		/* the span of the data: what the pieces copy, but for padding */
		struct progress pg;
		progress_start(&pg, n ? last - order[0]->offset : 0);
		for (uint64_t i = 0; i < n && rc == 0; i++) {
			uint64_t t0 = order[i]->offset, t1 = t0 + order[i]->size;
			if (end > start && t1 - start > cap) {
				rc = add_piece(m, start, end, &pg, err, errsz);
				start = t0;
			} else if (end == start)
				start = t0;
			end = t1 > end ? t1 : end;
		}
		if (rc == 0 && end > start)
			rc = add_piece(m, start, end, &pg, err, errsz);
		progress_end(&pg);
	}
	free(order);
	return rc;
}

struct belt_buffer *belt_model_weight(const struct belt_model *m,
				      const struct belt_gguf_tensor *t, uint64_t *offset)
{
	for (unsigned i = 0; i < m->n_pieces; i++) {
		const struct weight_piece *p = &m->pieces[i];
		if (t->offset >= p->start && t->offset + t->size <= p->end) {
			*offset = t->offset - p->start;
			return p->buf;
		}
	}
	return NULL;
}

bool belt_model_is_weights(const struct belt_model *m, const struct belt_buffer *b)
{
	for (unsigned i = 0; i < m->n_pieces; i++)
		if (m->pieces[i].buf == b)
			return true;
	return false;
}

/* Check "op=variant,op=variant" and keep a copy. */
static int set_kernels(struct belt_model *m, const char *spec, char *err, size_t errsz)
{
	if (!spec)
		return 0;
	if (strlen(spec) >= sizeof m->kernels)
		return belt_errf(err, errsz, "kernel choices '%.40s...': too long", spec);
	for (const char *item = spec; *item;) {
		size_t len = strcspn(item, ",");
		const char *eq = memchr(item, '=', len);
		if (!eq || eq == item || eq == item + len - 1)
			return belt_errf(err, errsz, "kernel choice '%.*s': expected op=variant",
					 (int)len, item);
		item += len + (item[len] == ',');
	}
	snprintf(m->kernels, sizeof m->kernels, "%s", spec);
	return 0;
}

const char *belt_model_variant(const struct belt_model *m, const char *op,
			       const char *yaml_variant, char *buf, size_t bufsz)
{
	size_t n = strlen(op);
	for (const char *item = m->kernels; *item;) {
		size_t len = strcspn(item, ",");
		if (len > n && !strncmp(item, op, n) && item[n] == '=') {
			snprintf(buf, bufsz, "%.*s", (int)(len - n - 1), item + n + 1);
			return buf;
		}
		item += len + (item[len] == ',');
	}
	return yaml_variant ? yaml_variant : "default";
}

/* Kernel choices: the run's first (they win), then conf/belt.yaml's; and
 * the backend's settings there. */
static int read_config(struct belt_model *m, const char *run, struct belt_config *conf,
		       char *err, size_t errsz)
{
	char dirs[4096], all[sizeof m->kernels + sizeof conf->kernels + 2];
	belt_search_dirs(dirs, sizeof dirs, NULL, "BELT_CONF_PATH", BELT_CONF_DIR,
			 BELT_SRC_CONF_DIR);
	if (belt_config_load(dirs, m->be->name, conf, err, errsz))
		return -1;
	snprintf(all, sizeof all, "%s%s%s", run ? run : "", run && *run && *conf->kernels ? "," : "",
		 conf->kernels);
	return set_kernels(m, all, err, errsz);
}

static int load(struct belt_model *m, const struct belt_model_params *p,
		const struct model_arch_plugins *ap, char *err, size_t errsz)
{
	struct belt_config conf;
	if (read_config(m, p->kernels, &conf, err, errsz))
		return -1;
	struct belt_gguf_str s;
	int rc = belt_gguf_get_str(m->g, "general.architecture", &s, err, errsz);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return belt_errf(err, errsz, "missing key 'general.architecture'");
	if (s.len == 0 || s.len >= sizeof m->arch_name || memchr(s.ptr, '/', s.len))
		return belt_errf(err, errsz, "key 'general.architecture': bad name '%.*s'",
				 (int)(s.len > 64 ? 64 : s.len), s.ptr);
	memcpy(m->arch_name, s.ptr, s.len);
	m->arch_name[s.len] = 0;
	if (load_arch(p, ap, m->arch_name, &m->arch, err, errsz) ||
	    resolve_hparams(m, err, errsz) ||
	    count_var(m, "n_layer", 4096, &m->n_layer, err, errsz))
		return -1;
	uint32_t n_vocab;
	if (count_var(m, "n_vocab", 1u << 24, &n_vocab, err, errsz) || check_tensors(m, err, errsz))
		return -1;
	m->n_vocab = (int32_t)n_vocab;
	if (belt_tok_load(m->g, &m->tok, err, errsz))
		return -1;
	if (belt_tok_n_vocab(m->tok) > m->n_vocab)
		return belt_errf(err, errsz, "tokenizer has %d tokens but the model's vocabulary is %d",
				 belt_tok_n_vocab(m->tok), m->n_vocab);
	struct belt_backend_options bo = {.n_threads = p->n_threads, .device = p->device,
					  .flags = p->profile ? BELT_BACKEND_PROFILE : 0,
					  .settings = conf.setting, .n_settings = conf.n_setting};
	if (m->be->create(&bo, &m->be_ctx, err, errsz)) {
		/* backends name themselves ("vulkan: ..."); say it once */
		size_t n = strlen(m->be->name);
		if (err && !strncmp(err, m->be->name, n) && err[n] == ':')
			return -1;
		return belt_err_prefix(err, errsz, m->be->name);
	}
	return load_weights(m, err, errsz);
}

int belt_model_open(const struct belt_model_params *p, const struct belt_backend_ops *be,
		    const struct model_arch_plugins *ap, struct belt_model **out, char *err,
		    size_t errsz)
{
	*out = NULL;
	if (!p || !p->path)
		return belt_errf(err, errsz, "no model file given");
	struct belt_model *m = calloc(1, sizeof *m);
	if (!m)
		return belt_errf(err, errsz, "%s: out of memory", p->path);
	m->be = be;
	m->g = belt_gguf_open(p->path, err, errsz);
	if (!m->g) {
		free(m);
		return -1;
	}
	if (load(m, p, ap, err, errsz)) {
		if (!strstr(err ? err : "", p->path))
			belt_err_prefix(err, errsz, p->path);
		belt_model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void belt_model_free(struct belt_model *m)
{
	if (!m)
		return;
	if (m->be_ctx) {
		for (unsigned i = 0; i < m->n_pieces; i++)
			m->be->buffer_destroy(m->be_ctx, m->pieces[i].buf);
		m->be->destroy(m->be_ctx);
	}
	free(m->pieces);
	belt_tok_free(m->tok);
	belt_arch_free(m->arch);
	belt_gguf_close(m->g);
	free(m);
}

const struct belt_gguf *belt_model_gguf(const struct belt_model *m) { return m->g; }
const struct belt_tokenizer *belt_model_tokenizer(const struct belt_model *m) { return m->tok; }
const char *belt_model_arch(const struct belt_model *m) { return m->arch_name; }
int32_t belt_model_n_vocab(const struct belt_model *m) { return m->n_vocab; }

uint32_t belt_model_n_ctx_train(const struct belt_model *m)
{
	double v;
	return belt_vars_get(&m->vars, "n_ctx_train", &v) ? (uint32_t)v : 0;
}

bool belt_model_hparam(const struct belt_model *m, const char *name, double *out)
{
	return belt_vars_get(&m->vars, name, out) == 1;
}
