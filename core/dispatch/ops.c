/* The op contracts (belt/ops.h): one static table, read by the dispatch
 * builder and by every backend. */
#include <inttypes.h>
#include <string.h>

#include "belt/arch.h"
#include "belt/error.h"
#include "belt/ops.h"
#include "dispatch/ops_check.h"

#define R BELT_ACCESS_R
#define W BELT_ACCESS_W
#define P(kind) (1u << BELT_PATCH_##kind)

static const struct belt_op_contract contracts[] = {
	{.op = "embed", .params = "n:i", .n_bind = 3, .row_wise = true,
	 .patches = P(TOKEN_OFFSET),
	 .bind = {{"W", BELT_BIND_WEIGHT, R, "n"},
		  {"token_ids", BELT_BIND_IDS, R, NULL},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	{.op = "rmsnorm", .params = "n:i eps:f", .n_bind = 3, .row_wise = true,
	 .bind = {{"x", BELT_BIND_ROWS, R, "n"},
		  {"w", BELT_BIND_WEIGHT, R, "n"},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	{.op = "matvec", .params = "k:i m:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"W", BELT_BIND_WEIGHT, R, "k"},
		  {"x", BELT_BIND_ROWS, R, "k"},
		  {"y", BELT_BIND_ROWS, W, "m"}}},
	{.op = "rope_kv", .params = "n_head:i n_head_kv:i head_dim:i rope_dim:i base:f",
	 .n_bind = 5, .row_wise = true, .patches = P(POSITION) | P(POS_AND_KV),
	 .bind = {{"q", BELT_BIND_ROWS, R | W, "n_head*head_dim"},
		  {"k", BELT_BIND_ROWS, R | W, "n_head_kv*head_dim"},
		  {"v", BELT_BIND_ROWS, R, "n_head_kv*head_dim"},
		  {"k_cache", BELT_BIND_CACHE, W, "n_head_kv*head_dim"},
		  {"v_cache", BELT_BIND_CACHE, W, "n_head_kv*head_dim"}}},
	{.op = "attention", .params = "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f",
	 .n_bind = 5, .row_wise = false, .patches = P(KV_LEN) | P(POS_AND_KV),
	 .bind = {{"q", BELT_BIND_ROWS, R, "n_head*head_dim"},
		  {"k_cache", BELT_BIND_CACHE, R, "n_head_kv*head_dim"},
		  {"v_cache", BELT_BIND_CACHE, R, "n_head_kv*head_dim"},
		  {"out", BELT_BIND_ROWS, W, "n_head*head_dim"},
		  {"att", BELT_BIND_WORK, R | W, NULL}}},
	{.op = "silu_mul", .params = "n:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"gate", BELT_BIND_ROWS, R, "n"},
		  {"up", BELT_BIND_ROWS, R, "n"},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	{.op = "add", .params = "n:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"a", BELT_BIND_ROWS, R, "n"},
		  {"b", BELT_BIND_ROWS, R, "n"},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	{.op = "argmax", .params = "n:i", .n_bind = 2, .row_wise = true,
	 .patches = P(ARGMAX_OUTPUT),
	 .bind = {{"logits", BELT_BIND_ROWS, R, "n"},
		  {"token_ids", BELT_BIND_IDS, W, NULL}}},
	/* the pieces of rope_kv for architectures that need more than it
	 * does: rope alone (NORM or NEOX pairs, a frequency scale, and with
	 * rope_ff Llama 3's per-pair frequency factors), then kv_store */
	{.op = "rope", .params = "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f",
	 .n_bind = 1, .row_wise = true, .patches = P(POSITION) | P(POS_AND_KV),
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n_head*head_dim"}}},
	{.op = "rope_ff", .params = "n_head:i head_dim:i rope_dim:i base:f neox:i freq_scale:f",
	 .n_bind = 2, .row_wise = true, .patches = P(POSITION) | P(POS_AND_KV),
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n_head*head_dim"},
		  {"factors", BELT_BIND_WEIGHT, R, NULL}}},
	{.op = "kv_store", .params = "n:i", .n_bind = 4, .row_wise = true,
	 .patches = P(POSITION) | P(POS_AND_KV),
	 .bind = {{"k", BELT_BIND_ROWS, R, "n"},
		  {"v", BELT_BIND_ROWS, R, "n"},
		  {"k_cache", BELT_BIND_CACHE, W, "n"},
		  {"v_cache", BELT_BIND_CACHE, W, "n"}}},
	/* a weight vector added to every row (q/k/v biases) */
	{.op = "bias_add", .params = "n:i", .n_bind = 2, .row_wise = true,
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n"},
		  {"b", BELT_BIND_WEIGHT, R, "n"}}},
	/* RMSNorm of each head of a row over its head_dim values, one weight
	 * vector for all heads (Qwen3's q/k norms) */
	{.op = "rmsnorm_heads", .params = "n_head:i head_dim:i eps:f", .n_bind = 2,
	 .row_wise = true,
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n_head*head_dim"},
		  {"w", BELT_BIND_WEIGHT, R, "head_dim"}}},
	/* Gemma: x *= s (the embedding's sqrt(n_embd)), GELU-tanh gating,
	 * and attention with score soft-capping and a sliding window (0:
	 * none); Gemma 2's logit soft-capping is its plugin's op */
	{.op = "scale", .params = "n:i s:f", .n_bind = 1, .row_wise = true,
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n"}}},
	{.op = "gelu_mul", .params = "n:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"gate", BELT_BIND_ROWS, R, "n"},
		  {"up", BELT_BIND_ROWS, R, "n"},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	{.op = "attention_ext",
	 .params = "n_head:i n_head_kv:i head_dim:i n_ctx:i scale:f softcap:f window:i",
	 .n_bind = 5, .row_wise = false, .patches = P(KV_LEN) | P(POS_AND_KV),
	 .bind = {{"q", BELT_BIND_ROWS, R, "n_head*head_dim"},
		  {"k_cache", BELT_BIND_CACHE, R, "n_head_kv*head_dim"},
		  {"v_cache", BELT_BIND_CACHE, R, "n_head_kv*head_dim"},
		  {"out", BELT_BIND_ROWS, W, "n_head*head_dim"},
		  {"att", BELT_BIND_WORK, R | W, NULL}}},
	/* mixtures of experts: the router's softmax, top n_used experts and
	 * their weights renormalized (ids as floats); each chosen expert's
	 * matrix (W [k x m x n_expert]) times x, or times its own slot of x
	 * (moe_matvec_slots: x holds n_used rows of k); the weighted sum */
	{.op = "moe_route", .params = "n_expert:i n_used:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"logits", BELT_BIND_ROWS, R, "n_expert"},
		  {"ids", BELT_BIND_ROWS, W, "n_used"},
		  {"weights", BELT_BIND_ROWS, W, "n_used"}}},
	{.op = "moe_matvec", .params = "k:i m:i n_expert:i n_used:i", .n_bind = 4,
	 .row_wise = true,
	 .bind = {{"W", BELT_BIND_WEIGHT, R, "k"},
		  {"x", BELT_BIND_ROWS, R, "k"},
		  {"ids", BELT_BIND_ROWS, R, "n_used"},
		  {"y", BELT_BIND_ROWS, W, "n_used*m"}}},
	{.op = "moe_matvec_slots", .params = "k:i m:i n_expert:i n_used:i", .n_bind = 4,
	 .row_wise = true,
	 .bind = {{"W", BELT_BIND_WEIGHT, R, "k"},
		  {"x", BELT_BIND_ROWS, R, "n_used*k"},
		  {"ids", BELT_BIND_ROWS, R, "n_used"},
		  {"y", BELT_BIND_ROWS, W, "n_used*m"}}},
	{.op = "moe_combine", .params = "n:i n_used:i", .n_bind = 3, .row_wise = true,
	 .bind = {{"y", BELT_BIND_ROWS, R, "n_used*n"},
		  {"weights", BELT_BIND_ROWS, R, "n_used"},
		  {"out", BELT_BIND_ROWS, W, "n"}}},
	/* what Medusa draft heads need besides matvec, bias_add and add (h +
	 * silu(W h + b), the output projection, the best k tokens): silu in
	 * place; the k largest logits' ids (exact floats below 2^24) then
	 * their probabilities under the softmax of all n */
	{.op = "silu", .params = "n:i", .n_bind = 1, .row_wise = true,
	 .bind = {{"x", BELT_BIND_ROWS, R | W, "n"}}},
	{.op = "top_k", .params = "n:i k:i", .n_bind = 2, .row_wise = true,
	 .bind = {{"logits", BELT_BIND_ROWS, R, "n"},
		  {"out", BELT_BIND_ROWS, W, "2*k"}}},
	/* a grammar's mask (doc/grammars.md), decode tables only: logits of
	 * tokens whose bit of mask is clear become -inf */
	{.op = "logit_mask", .params = "n:i", .n_bind = 2, .row_wise = true, .sampler = true,
	 .bind = {{"logits", BELT_BIND_ROWS, R | W, "n"},
		  {"mask", BELT_BIND_IDS, R, NULL}}},
	/* the sampler's chain ops (doc/samplers.md), decode tables only */
	{.op = "sample_penalty", .params = "n:i last_n:i repeat:f presence:f frequency:f",
	 .n_bind = 2, .row_wise = true, .sampler = true, .patches = P(POSITION),
	 .bind = {{"logits", BELT_BIND_ROWS, R | W, "n"},
		  {"token_ids", BELT_BIND_IDS, R, NULL}}},
	{.op = "sample_threshold", .params = "n:i top_k:i top_p:f min_p:f",
	 .n_bind = 2, .row_wise = true, .sampler = true,
	 .bind = {{"logits", BELT_BIND_ROWS, R, "n"},
		  {"scratch", BELT_BIND_WORK, W, NULL}}},
	{.op = "sample_gumbel", .params = "n:i inv_temp:f seed_lo:i seed_hi:i use_threshold:i",
	 .n_bind = 2, .row_wise = true, .sampler = true, .patches = P(POSITION),
	 .bind = {{"logits", BELT_BIND_ROWS, R | W, "n"},
		  {"scratch", BELT_BIND_WORK, R, NULL}}},
};

const struct belt_op_contract *belt_op_contracts(size_t *n)
{
	*n = sizeof contracts / sizeof contracts[0];
	return contracts;
}

const struct belt_op_contract *belt_op_contract(const char *op)
{
	if (!op)
		return NULL;
	for (size_t i = 0; i < sizeof contracts / sizeof contracts[0]; i++)
		if (!strcmp(contracts[i].op, op))
			return &contracts[i];
	/* an architecture plugin's (belt/arch.h) */
	const struct belt_arch_op *ext = belt_arch_op_find(op);
	return ext ? &ext->contract : NULL;
}

uint8_t belt_op_writes(const struct belt_op_contract *c)
{
	uint8_t m = 0;
	for (unsigned i = 0; i < c->n_bind; i++)
		if (c->bind[i].access & W)
			m |= (uint8_t)(1u << i);
	return m;
}

/* Index of param `name` (len bytes) in schema, or -1. */
static int param_index(const char *schema, const char *name, size_t len)
{
	int i = 0;
	for (const char *p = schema; *p;) {
		while (*p == ' ')
			p++;
		const char *colon = strchr(p, ':');
		if (!colon)
			return -1;
		if ((size_t)(colon - p) == len && !strncmp(p, name, len))
			return i;
		i++;
		p = colon + 2;
	}
	return -1;
}

int belt_op_param_index(const struct belt_op_contract *c, const char *name)
{
	return name ? param_index(c->params, name, strlen(name)) : -1;
}

int64_t belt_op_row_elems(const struct belt_op_contract *c, unsigned i,
			  const union belt_param *param)
{
	if (i >= c->n_bind || !c->bind[i].row)
		return -1;
	int64_t v = 1;
	for (const char *p = c->bind[i].row; *p;) {
		size_t len = strcspn(p, "*");
		/* a factor is a param, or a number (top_k's out: "2*k") */
		if (len && len < 7 && strspn(p, "0123456789") == len) {
			int64_t f = 0;
			for (size_t j = 0; j < len; j++)
				f = f * 10 + (p[j] - '0');
			if (f <= 0)
				return -1;
			v *= f;
			p += len + (p[len] == '*');
			continue;
		}
		int at = param_index(c->params, p, len);
		if (at < 0 || param[at].i <= 0)
			return -1;
		v *= param[at].i;
		p += len + (p[len] == '*');
	}
	return v;
}

uint64_t belt_cmd_weight_bytes(const struct belt_cmd *c, unsigned i)
{
	const struct belt_binding *b = &c->bind[i];
	/* a lookup by token reads one row of its table */
	if (c->patch == BELT_PATCH_TOKEN_OFFSET && b->ne[1] > 0)
		return b->size / (uint64_t)b->ne[1];
	const struct belt_op_contract *oc = c->kernel ? belt_op_contract(c->kernel->op) : NULL;
	if (!oc || i >= oc->n_bind || oc->bind[i].kind != BELT_BIND_WEIGHT)
		return b->size;
	/* an expert stack: a row reads n_used of its n_expert matrices */
	int e = param_index(oc->params, "n_expert", 8), u = param_index(oc->params, "n_used", 6);
	if (e < 0 || u < 0 || c->param[e].i <= 0 || c->param[u].i <= 0 ||
	    c->param[u].i > c->param[e].i)
		return b->size;
	return b->size / (uint64_t)c->param[e].i * (uint64_t)c->param[u].i;
}

uint32_t belt_cmd_rows(const struct belt_cmd *c)
{
	const struct belt_op_contract *oc = c->kernel ? belt_op_contract(c->kernel->op) : NULL;
	if (!oc)
		return 1;
	for (unsigned i = 0; i < oc->n_bind && i < c->n_bind; i++)
		if (oc->bind[i].kind == BELT_BIND_ROWS)
			return c->bind[i].ne[1] > 1 ? (uint32_t)c->bind[i].ne[1] : 1;
	return 1;
}

static int count_params(const char *schema)
{
	int n = 0;
	for (const char *s = schema; *s; s++)
		n += *s == ':';
	return n;
}

/* Whether schema is "name:t name:t ..." with t i or f, names of [a-z0-9_]
 * and at most BELT_MAX_PARAMS of them. */
static bool schema_ok(const char *schema)
{
	int n = 0;
	for (const char *p = schema; *p;) {
		size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		if (!len || p[len] != ':' || (p[len + 1] != 'i' && p[len + 1] != 'f'))
			return false;
		p += len + 2;
		if (*p && (*p != ' ' || !p[1]))
			return false;
		p += *p == ' ';
		n++;
	}
	return n > 0 && n <= BELT_MAX_PARAMS;
}

/* Whether name is an integer param of schema. */
static bool int_param(const char *schema, const char *name, size_t len)
{
	int at = param_index(schema, name, len);
	if (at < 0)
		return false;
	const char *p = schema;
	for (int i = 0; i < at; i++)
		p = strchr(p, ' ') + 1;
	return p[len + 1] == 'i';
}

int belt_op_contract_valid_ext(const struct belt_op_contract *c, const char *items, char *err,
			       size_t errsz)
{
	const char *op = c->op;
	if (!op || !*op || strspn(op, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(op))
		return belt_errf(err, errsz, "op name '%s': expected letters a-z, digits and '_'",
				 op ? op : "");
	if (!c->params || !schema_ok(c->params))
		return belt_errf(err, errsz,
				 "op '%s': params \"%s\": expected \"name:i name:f ...\", 1 to %d of them",
				 op, c->params ? c->params : "", BELT_MAX_PARAMS);
	if (!c->row_wise || c->patches || c->sampler)
		return belt_errf(err, errsz,
				 "op '%s': a plugin's op must be row_wise, without patches, not a sampler's",
				 op);
	if (!c->n_bind || c->n_bind > BELT_MAX_BINDINGS)
		return belt_errf(err, errsz, "op '%s': %u bindings: expected 1 to %d", op, c->n_bind,
				 BELT_MAX_BINDINGS);
	for (unsigned i = 0; i < c->n_bind; i++) {
		const struct belt_op_binding *b = &c->bind[i];
		if (!b->name || (b->kind != BELT_BIND_ROWS && b->kind != BELT_BIND_WEIGHT) ||
		    !b->access || (b->access & ~(BELT_ACCESS_R | BELT_ACCESS_W)) ||
		    (b->kind == BELT_BIND_WEIGHT && (b->access & BELT_ACCESS_W)))
			return belt_errf(err, errsz,
					 "op '%s' binding %u: expected a named rows binding or a read weight",
					 op, i);
		for (const char *p = b->row; b->kind == BELT_BIND_ROWS;) {
			size_t len = p ? strcspn(p, "*") : 0;
			if (!len || !int_param(c->params, p, len))
				return belt_errf(err, errsz,
						 "op '%s' binding %u (%s): its row length \"%s\" must be a "
						 "product of integer params",
						 op, i, b->name, b->row ? b->row : "");
			p += len;
			if (!*p)
				break;
			p++;
		}
	}
	if (!items || !int_param(c->params, items, strlen(items)))
		return belt_errf(err, errsz, "op '%s': items '%s' is not an integer param of \"%s\"",
				 op, items ? items : "", c->params);
	return 0;
}

bool belt_cache_type_ok(int t)
{
	return t == BELT_TYPE_F32 || t == BELT_TYPE_F16 || t == BELT_TYPE_Q8_0;
}

/* A cache binding: a type caches hold, rows (and heads, where the op reads
 * them head by head) whole blocks of it, the binding whole rows. */
static int cache_check(const struct belt_cmd *c, const struct belt_op_contract *oc, unsigned i,
		       char *err, size_t errsz)
{
	const char *name = c->label ? c->label : "?";
	const struct belt_binding *b = &c->bind[i];
	if (!belt_cache_type_ok(b->type))
		return belt_errf(err, errsz, "%s: %s binding %u (%s) has type %s: caches hold f32, f16 or q8_0",
				 name, oc->op, i, oc->bind[i].name, belt_type_name(b->type));
	int64_t e = belt_op_row_elems(oc, i, c->param);
	if (e < 0)
		return 0; /* the kernel checks its params */
	int hd = param_index(oc->params, "head_dim", 8);
	int64_t unit = hd >= 0 && c->param[hd].i > 0 ? c->param[hd].i : e;
	size_t blk = belt_type_block(b->type);
	if (unit % (int64_t)blk)
		return belt_errf(err, errsz,
				 "%s: %s binding %u (%s): a %s cache needs %s a multiple of %zu, it is %" PRId64,
				 name, oc->op, i, oc->bind[i].name, belt_type_name(b->type),
				 hd >= 0 ? "head_dim" : "rows of", blk, unit);
	if (b->size < belt_type_row_bytes(b->type, (uint64_t)e))
		return belt_errf(err, errsz, "%s: %s binding %u (%s) holds %" PRIu64 " bytes, less than a row",
				 name, oc->op, i, oc->bind[i].name, b->size);
	return 0;
}

int belt_cmd_check(const struct belt_cmd *c, char *err, size_t errsz)
{
	const char *name = c->label ? c->label : "?";
	if (!c->kernel)
		return belt_errf(err, errsz, "%s: command has no kernel", name);
	const struct belt_kernel *k = c->kernel;
	const struct belt_op_contract *oc = belt_op_contract(k->op);
	if (!oc)
		return belt_errf(err, errsz, "%s: op '%s' has no contract in the core (belt/ops.h)",
				 name, k->op);
	if (!k->params || strcmp(k->params, oc->params) || k->n_bind != oc->n_bind)
		return belt_errf(err, errsz,
				 "%s: kernel %s/%s takes %u bindings and \"%s\"; the op's contract says %u and \"%s\"",
				 name, k->op, k->variant ? k->variant : "?", k->n_bind,
				 k->params ? k->params : "", oc->n_bind, oc->params);
	if (c->n_bind != oc->n_bind || c->n_param != count_params(oc->params))
		return belt_errf(err, errsz, "%s: %s takes %u bindings and %d params, the command has %u and %u",
				 name, k->op, oc->n_bind, count_params(oc->params), c->n_bind,
				 c->n_param);
	if (c->patch != BELT_PATCH_NONE && !(oc->patches & (1u << c->patch)))
		return belt_errf(err, errsz, "%s: op %s does not take patch kind %d", name, k->op,
				 (int)c->patch);
	uint32_t rows = belt_cmd_rows(c);
	for (unsigned i = 0; i < oc->n_bind; i++) {
		if (oc->bind[i].kind == BELT_BIND_CACHE && cache_check(c, oc, i, err, errsz))
			return -1;
		if (oc->bind[i].kind != BELT_BIND_ROWS)
			continue;
		int64_t e = belt_op_row_elems(oc, i, c->param);
		if (e < 0)
			return belt_errf(err, errsz, "%s: %s binding %u (%s): its row length %s is not positive",
					 name, k->op, i, oc->bind[i].name, oc->bind[i].row);
		uint64_t need = (uint64_t)e * 4 * rows;
		if (c->bind[i].size < need)
			return belt_errf(err, errsz,
					 "%s: %s binding %u (%s) holds %" PRIu64 " bytes, needs %" PRIu64
					 " (%u rows of %" PRId64 ")",
					 name, k->op, i, oc->bind[i].name, c->bind[i].size, need, rows, e);
	}
	if (!strcmp(k->op, "top_k") &&
	    (c->param[0].i > BELT_TOP_K_MAX_N || c->param[1].i > BELT_TOP_K_MAX ||
	     c->param[1].i > c->param[0].i))
		return belt_errf(err, errsz,
				 "%s: top_k n %d (at most %d, for exact float ids) and k %d "
				 "(1 to %d, at most n)",
				 name, c->param[0].i, BELT_TOP_K_MAX_N, c->param[1].i, BELT_TOP_K_MAX);
	return 0;
}

void belt_row_at(enum belt_patch patch, bool batched, uint32_t pos,
		 uint32_t row, uint32_t depth, struct belt_row_at *out)
{
	*out = (struct belt_row_at){0};
	bool position = patch == BELT_PATCH_POSITION || patch == BELT_PATCH_POS_AND_KV;
	bool kv = patch == BELT_PATCH_KV_LEN || patch == BELT_PATCH_POS_AND_KV;
	if (patch == BELT_PATCH_TOKEN_OFFSET)
		out->token = pos + row;
	if (position) {
		out->position = pos + depth;
		out->slot = pos + row;
	}
	if (kv)
		out->n_kv = pos + row + 1;
	if (patch == BELT_PATCH_ARGMAX_OUTPUT)
		out->out = batched ? row : pos + 1;
}

void belt_row_at_seq(enum belt_patch patch, uint32_t pos, uint32_t row, uint32_t seq_pos,
		     uint32_t seq_base, struct belt_row_at *out)
{
	*out = (struct belt_row_at){0};
	bool position = patch == BELT_PATCH_POSITION || patch == BELT_PATCH_POS_AND_KV;
	bool kv = patch == BELT_PATCH_KV_LEN || patch == BELT_PATCH_POS_AND_KV;
	if (patch == BELT_PATCH_TOKEN_OFFSET)
		out->token = pos + row;
	if (position) {
		out->position = seq_pos;
		out->slot = seq_base + seq_pos;
	}
	if (kv) {
		out->n_kv = seq_pos + 1;
		out->kv_base = seq_base;
	}
	if (patch == BELT_PATCH_ARGMAX_OUTPUT)
		out->out = row;
}

int belt_seq_parts(const struct belt_table *t, uint32_t *parts, char *err, size_t errsz)
{
	if (!t->seq_ctx || !t->n_ctx || t->n_ctx % t->seq_ctx)
		return belt_errf(err, errsz,
				 "a table of sequences of %u positions, seq_ctx %u: expected a divisor "
				 "of the positions",
				 t->n_ctx, t->seq_ctx);
	*parts = t->n_ctx / t->seq_ctx;
	return 0;
}

int belt_seq_part_slots(const struct belt_cmd *c, uint32_t slots, uint32_t parts,
			uint32_t *part, char *err, size_t errsz)
{
	if (slots % parts)
		return belt_errf(err, errsz,
				 "%s: %s caches of %u slots: expected %u equal parts, one a "
				 "sequence's",
				 c->label ? c->label : "?", c->kernel ? c->kernel->op : "?", slots,
				 parts);
	*part = slots / parts;
	return 0;
}

int belt_seq_row_check(const struct belt_table *t, uint32_t r, char *err, size_t errsz)
{
	if (t->seq_base[r] % t->seq_ctx || t->seq_pos[r] >= t->seq_ctx)
		return belt_errf(err, errsz,
				 "row %u at slot %u + %u: expected a multiple of the %u positions "
				 "of a sequence, and fewer",
				 r, t->seq_base[r], t->seq_pos[r], t->seq_ctx);
	return 0;
}

int belt_copy_check(const struct belt_copy *r, uint32_t n,
		    uint64_t (*size_of)(const struct belt_buffer *b), const char *who,
		    char *err, size_t errsz)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct belt_buffer *b[2] = {r[i].src, r[i].dst};
		const uint64_t off[2] = {r[i].src_off, r[i].dst_off};
		for (int j = 0; j < 2; j++) {
			const char *side = j ? "destination" : "source";
			if (!b[j])
				return belt_errf(err, errsz, "%s: buffer_copy region %u: NULL %s",
						 who, i, side);
			uint64_t size = size_of(b[j]);
			if (off[j] > size || r[i].size > size - off[j])
				return belt_errf(err, errsz,
						 "%s: buffer_copy region %u: %s of %" PRIu64
						 " bytes at offset %" PRIu64
						 " is outside the buffer of %" PRIu64 " bytes",
						 who, i, side, r[i].size, off[j], size);
		}
		if (r[i].src == r[i].dst && r[i].src_off < r[i].dst_off + r[i].size &&
		    r[i].dst_off < r[i].src_off + r[i].size)
			return belt_errf(err, errsz,
					 "%s: buffer_copy region %u: source and destination overlap",
					 who, i);
	}
	return 0;
}

struct belt_kernel belt_arch_op_kernel(const struct belt_arch_op *op, const void *impl)
{
	return (struct belt_kernel){.op = op->contract.op,
				    .variant = "default",
				    .wtype = BELT_TYPE_ANY,
				    .n_bind = op->contract.n_bind,
				    .params = op->contract.params,
				    .impl = impl};
}

int belt_arch_op_slot(const struct belt_arch_op **have, unsigned n, unsigned max,
		      const char *op, const char *variant, bool need_spirv)
{
	const struct belt_arch_op *ao = belt_arch_op_find(op);
	if (!ao || (need_spirv && !ao->spirv) || (variant && *variant && strcmp(variant, "default")))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (have[i] == ao)
			return (int)i;
	if (n >= max)
		return -1;
	have[n] = ao;
	return (int)n;
}

const struct belt_arch_op *belt_arch_op_prepare(const struct belt_cmd *cmd, int64_t *items,
						char *err, size_t errsz)
{
	const char *name = cmd->label ? cmd->label : "?";
	const struct belt_arch_op *op = belt_arch_op_find(cmd->kernel->op);
	if (!op) {
		belt_errf(err, errsz, "%s: op '%s' is no longer registered", name, cmd->kernel->op);
		return NULL;
	}
	int at = belt_op_param_index(&op->contract, op->items);
	if (cmd->param[at].i < 1) {
		belt_errf(err, errsz, "%s: %s param %s is %d, must be >= 1", name, cmd->kernel->op,
			  op->items, cmd->param[at].i);
		return NULL;
	}
	if (op->check && op->check(cmd, err, errsz))
		return NULL;
	*items = cmd->param[at].i;
	return op;
}
