/* The registry and the loader's ABI ranges, through the test plugins in
 * $BELT_TEST_PLUGINS (tests/plugins/): a grammar and a drafter that work,
 * a backend of the oldest supported ABI that must load and one of a newer
 * ABI that must not, and features keyed by (kind, name). Each test gets
 * what it needs by name, so they pass in any order, forked or not. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "belt/error.h"
#include "belt/gguf.h"
#include "belt/plugin.h"
#include "belt/tokenizer.h"
#include "plugin/registry.h"
#include "synth/synth.h"

static char err[BELT_ERR_SIZE];

/* Expect every string of the NULL-terminated list in err. */
static void expect_err(const char *want, ...)
{
	va_list ap;
	va_start(ap, want);
	for (const char *w = want; w; w = va_arg(ap, const char *))
		ck_assert_msg(strstr(err, w), "expected '%s' in: %s", w, err);
	va_end(ap);
	ck_assert_msg(!strchr(err, '\n'), "expected one line: %s", err);
}

/* A tokenizer of n_vocab pieces, from a synthetic GGUF. */
static struct belt_tokenizer *tokenizer(uint32_t n_vocab)
{
	char dir[] = "/tmp/belt-registry-XXXXXX", path[64];
	ck_assert(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/vocab.gguf", dir);
	struct synth_shape s;
	synth_default(&s);
	s.n_vocab = n_vocab;
	ck_assert_msg(!synth_write(&s, path, err, sizeof err), "%s", err);
	struct belt_gguf *g = belt_gguf_open(path, err, sizeof err);
	ck_assert_msg(g, "%s", err);
	struct belt_tokenizer *t;
	ck_assert_msg(!belt_tok_load(g, &t, err, sizeof err), "%s", err);
	belt_gguf_close(g);
	unlink(path);
	rmdir(dir);
	return t;
}

/* mask (n_vocab bits) holds exactly the even ids below limit. */
static void expect_even_below(const uint32_t *mask, int32_t n_vocab, int32_t limit)
{
	for (int32_t id = 0; id < (n_vocab + 31) / 32 * 32; id++) {
		bool set = (mask[id / 32] >> (id % 32)) & 1;
		ck_assert_msg(set == (id < limit && id < n_vocab && id % 2 == 0),
			      "token %d: bit %d", id, set);
	}
}

START_TEST(grammar_plugin)
{
	const struct belt_grammar_ops *g = belt_grammar_get("test", err, sizeof err);
	ck_assert_msg(g, "%s", err);
	ck_assert_str_eq(g->name, "test");
	ck_assert_uint_eq(g->abi, BELT_GRAMMAR_ABI);

	enum { VOCAB = 301, LOGITS = 305, WORDS = (LOGITS + 31) / 32 };
	struct belt_tokenizer *tok = tokenizer(VOCAB);
	void *st;
	ck_assert_int_eq(g->compile("3", 1, "json-schema", tok, &st, err, sizeof err), -1);
	expect_err("json-schema", NULL);
	ck_assert_int_eq(g->compile("x", 1, "gbnf", tok, &st, err, sizeof err), -1);
	expect_err("'x'", NULL);
	ck_assert_msg(!g->compile("3", 1, "gbnf", tok, &st, err, sizeof err), "%s", err);

	/* The logits are longer than the vocabulary and not a multiple of 32
	 * long; the word after the mask is not touched. */
	uint32_t mask[WORDS + 1];
	memset(mask, 0xff, sizeof mask);
	g->allowed(st, mask, LOGITS);
	expect_even_below(mask, LOGITS, VOCAB);
	ck_assert_uint_eq(mask[WORDS], 0xffffffffu);

	ck_assert(!g->is_complete(st));
	ck_assert_int_eq(g->accept(st, 3, err, sizeof err), -1);
	expect_err("token 3", NULL);
	ck_assert_int_eq(g->accept(st, VOCAB + 1, err, sizeof err), -1);
	ck_assert_int_eq(g->accept(st, 4, err, sizeof err), 0);
	ck_assert_int_eq(g->accept(st, 300, err, sizeof err), 0);
	ck_assert(!g->is_complete(st));
	ck_assert_int_eq(g->accept(st, 0, err, sizeof err), 0);
	ck_assert(g->is_complete(st));
	/* A complete sentence of this grammar allows nothing more. */
	g->allowed(st, mask, LOGITS);
	expect_even_below(mask, LOGITS, 0);
	ck_assert_int_eq(g->accept(st, 2, err, sizeof err), -1);

	g->reset(st);
	ck_assert(!g->is_complete(st));
	g->allowed(st, mask, LOGITS);
	expect_even_below(mask, LOGITS, VOCAB);
	g->free(st);

	ck_assert_msg(!g->compile("0", 1, "gbnf", tok, &st, err, sizeof err), "%s", err);
	ck_assert(g->is_complete(st));
	g->free(st);
	g->free(NULL);
	belt_tok_free(tok);
}
END_TEST

/* A proposal of n nodes: token repeated, a chain from the last accepted. */
static void expect_chain(const struct belt_draft_node *nodes, int got, int n, int32_t token)
{
	ck_assert_int_eq(got, n);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(nodes[i].token, token);
		ck_assert_int_eq(nodes[i].parent, i - 1);
	}
}

START_TEST(draft_plugin)
{
	const struct belt_draft_ops *d = belt_draft_get("test", err, sizeof err);
	ck_assert_msg(d, "%s", err);
	ck_assert_str_eq(d->name, "test");
	ck_assert_uint_eq(d->abi, BELT_DRAFT_ABI);

	void *ctx;
	ck_assert_int_eq(d->create(301, 64, "x", &ctx, err, sizeof err), -1);
	expect_err("'x'", NULL);
	ck_assert_msg(!d->create(301, 64, "3", &ctx, err, sizeof err), "%s", err);
	const int32_t history[] = {5, 7, 9};
	struct belt_draft_node nodes[8];
	float hidden[64] = {0};
	expect_chain(nodes, d->propose(ctx, history, 3, NULL, nodes, 8, err, sizeof err), 3, 9);
	expect_chain(nodes, d->propose(ctx, history, 2, hidden, nodes, 2, err, sizeof err), 2, 7);
	ck_assert_int_eq(d->propose(ctx, history, 0, NULL, nodes, 8, err, sizeof err), -1);
	expect_err("history", NULL);

	/* Feedback shows in the next proposal: n held, n + 1 proposed. */
	const int32_t path[] = {0, 1, 2};
	d->accept(ctx, path, 1);
	expect_chain(nodes, d->propose(ctx, history, 3, NULL, nodes, 8, err, sizeof err), 2, 9);
	d->accept(ctx, path, 0);
	expect_chain(nodes, d->propose(ctx, history, 3, NULL, nodes, 8, err, sizeof err), 1, 9);
	d->accept(ctx, path, 1);
	d->accept(ctx, path, 2);
	expect_chain(nodes, d->propose(ctx, history, 1, NULL, nodes, 8, err, sizeof err), 3, 5);
	d->free(ctx);

	ck_assert_msg(!d->create(301, 0, NULL, &ctx, err, sizeof err), "%s", err);
	expect_chain(nodes, d->propose(ctx, history, 3, NULL, nodes, 8, err, sizeof err), 4, 9);
	d->free(ctx);
	d->free(NULL);
}
END_TEST

START_TEST(backend_oldest_abi_loads)
{
	const struct belt_backend_ops *b = belt_backend_get("oldabi", err, sizeof err);
	ck_assert_msg(b, "%s", err);
	ck_assert_str_eq(b->name, "oldabi");
	ck_assert_uint_eq(b->abi, BELT_BACKEND_ABI_MIN);
	ck_assert(BELT_ABI_HAS(b, BELT_BACKEND_ABI_MIN));
	ck_assert(BELT_BACKEND_ABI_MIN == BELT_BACKEND_ABI || !BELT_ABI_HAS(b, BELT_BACKEND_ABI));
	void *ctx;
	ck_assert_int_eq(b->create(&(struct belt_backend_options){0}, &ctx, err, sizeof err), -1);
	expect_err("test stub", NULL);
	ck_assert_ptr_eq(belt_backend_get("oldabi", err, sizeof err), b);
}
END_TEST

START_TEST(backend_newer_abi_refused)
{
	char abi[16], range[32];
	snprintf(abi, sizeof abi, "ABI %u;", BELT_BACKEND_ABI + 1);
	snprintf(range, sizeof range, "supports %u..%u", BELT_BACKEND_ABI_MIN, BELT_BACKEND_ABI);
	/* Twice: a refused module is closed, and loading it again says the same. */
	for (int i = 0; i < 2; i++) {
		ck_assert_ptr_null(belt_backend_get("newabi", err, sizeof err));
		expect_err("/backend-newabi.", "backend 'newabi'", abi, range, NULL);
	}
	/* The drafter it registered before failing went with the module. */
	ck_assert_ptr_null(belt_draft_get("newabi", err, sizeof err));
	expect_err("plugin 'draft-newabi' not found", NULL);
}
END_TEST

START_TEST(descriptor_abi_refused)
{
	char range[32];
	snprintf(range, sizeof range, "supports %u..%u", BELT_PLUGIN_ABI_MIN, BELT_PLUGIN_ABI);
	ck_assert_int_eq(belt_plugin_load("backend-badabi", err, sizeof err), -1);
	expect_err("/backend-badabi.", "plugin ABI 999;", range, NULL);
	ck_assert_ptr_null(belt_backend_get("badabi", err, sizeof err));
	expect_err("plugin ABI 999;", NULL);
}
END_TEST

START_TEST(kind_and_name)
{
	struct belt_registry *r = belt_registry_global();
	const struct belt_grammar_ops *g = belt_grammar_get("test", err, sizeof err);
	ck_assert_msg(g, "%s", err);
	const struct belt_draft_ops *d = belt_draft_get("test", err, sizeof err);
	ck_assert_msg(d, "%s", err);
	/* One name, two kinds: two features. */
	ck_assert_ptr_ne((const void *)g, (const void *)d);
	ck_assert_ptr_eq(belt_registry_find(r, BELT_KIND_GRAMMAR, "test"), g);
	ck_assert_ptr_eq(belt_registry_find(r, BELT_KIND_DRAFT, "test"), d);
	ck_assert_ptr_null(belt_registry_find(r, BELT_KIND_BACKEND, "test"));

	/* One (kind, name) twice, the same table or another. */
	ck_assert_int_eq(belt_registry_add_grammar(r, g, err, sizeof err), -1);
	expect_err("grammar 'test' registered twice", NULL);
	static struct belt_draft_ops other;
	other = *d;
	ck_assert_int_eq(belt_registry_add_draft(r, &other, err, sizeof err), -1);
	expect_err("draft 'test' registered twice", NULL);

	/* Registered by hand, it is found without a module. */
	other.name = "by-hand";
	ck_assert_int_eq(belt_registry_add_draft(r, &other, err, sizeof err), 0);
	ck_assert_ptr_eq(belt_draft_get("by-hand", err, sizeof err), &other);
	ck_assert_ptr_null(belt_grammar_get("by-hand", err, sizeof err));
	expect_err("plugin 'grammar-by-hand' not found", NULL);
}
END_TEST

START_TEST(tables_checked)
{
	struct belt_registry *r = belt_registry_global();
	const struct belt_grammar_ops *g = belt_grammar_get("test", err, sizeof err);
	ck_assert_msg(g, "%s", err);
	static struct belt_grammar_ops bad;
	bad = *g;
	bad.name = "checked";
	bad.abi = BELT_GRAMMAR_ABI_MIN - 1;
	ck_assert_int_eq(belt_registry_add_grammar(r, &bad, err, sizeof err), -1);
	expect_err("grammar 'checked' has grammar ABI 0; this belt supports 1..1", NULL);
	bad.abi = BELT_GRAMMAR_ABI;
	bad.accept = NULL;
	ck_assert_int_eq(belt_registry_add_grammar(r, &bad, err, sizeof err), -1);
	expect_err("grammar 'checked' lacks a required function", NULL);
	ck_assert_int_eq(belt_registry_add_grammar(r, NULL, err, sizeof err), -1);
	expect_err("grammar without a name", NULL);

	static struct belt_sampler_ops s = {.abi = BELT_SAMPLER_ABI + 1, .name = "checked"};
	char want[64];
	snprintf(want, sizeof want, "sampler ABI %u; this belt supports %u..%u",
		 BELT_SAMPLER_ABI + 1, BELT_SAMPLER_ABI_MIN, BELT_SAMPLER_ABI);
	ck_assert_int_eq(belt_registry_add_sampler(r, &s, err, sizeof err), -1);
	expect_err(want, NULL);

	/* A name is looked up on the search path, never used as a path. */
	ck_assert_ptr_null(belt_backend_get("../plugins/backend-oldabi", err, sizeof err));
	expect_err("expected a name", NULL);
	ck_assert_ptr_null(belt_draft_get("", err, sizeof err));
	expect_err("draft: expected a name", NULL);
}
END_TEST

/* An op that negates x, in place; items are values. */
static void negate_host(const struct belt_op_host_run *run)
{
	float *x = (float *)run->bind[0] + (int64_t)run->row0 * run->per_row;
	for (int64_t i = run->i0; i < run->i1; i++)
		x[i] = -x[i];
}

static const struct belt_arch_op negate = {
	.contract = {.op = "negate_test",
		     .params = "n:i",
		     .n_bind = 1,
		     .row_wise = true,
		     .bind = {{"x", BELT_BIND_ROWS, BELT_ACCESS_R | BELT_ACCESS_W, "n"}}},
	.items = "n",
	.host = negate_host,
};

/* Add arch "bad" with op (a changed copy of negate) and expect want. */
static void expect_op_refused(const struct belt_arch_op *op, const char *want)
{
	static struct belt_arch_ops a;
	a = (struct belt_arch_ops){.abi = BELT_ARCH_ABI, .name = "bad", .yaml = "arch: bad\n",
				   .source = "bad.yaml", .ops = op, .n_ops = 1};
	ck_assert_int_eq(belt_registry_add_arch(belt_registry_global(), &a, err, sizeof err), -1);
	expect_err(want, NULL);
	ck_assert_ptr_null(belt_registry_find(belt_registry_global(), BELT_KIND_ARCH, "bad"));
}

START_TEST(arch_ops_checked)
{
	static struct belt_arch_op op;
	op = negate;
	op.contract.op = "matvec";
	expect_op_refused(&op, "arch 'bad': op 'matvec' exists already");
	op = negate;
	op.contract.op = "Negate";
	expect_op_refused(&op, "op name 'Negate': expected letters a-z, digits and '_'");
	op = negate;
	op.contract.params = "n:i m";
	expect_op_refused(&op, "op 'negate_test': params \"n:i m\": expected");
	op = negate;
	op.contract.patches = 1u << BELT_PATCH_POSITION;
	expect_op_refused(&op, "op 'negate_test': a plugin's op must be row_wise, without patches");
	op = negate;
	op.contract.bind[0].kind = BELT_BIND_CACHE;
	expect_op_refused(&op, "op 'negate_test' binding 0: expected a named rows binding or a read weight");
	op = negate;
	op.contract.bind[0].row = "n*k";
	expect_op_refused(&op, "binding 0 (x): its row length \"n*k\" must be a product of integer params");
	op = negate;
	op.items = "cap";
	expect_op_refused(&op, "op 'negate_test': items 'cap' is not an integer param of \"n:i\"");
	op = negate;
	op.host = NULL;
	expect_op_refused(&op, "arch 'bad' lacks a required function");
	op = negate;
	op.spirv = (const uint32_t[]){0x07230203u};
	op.spirv_bytes = 4;
	expect_op_refused(&op, "arch 'bad' lacks a required function"); /* no local_size */
	op = negate;
	static struct belt_arch_ops newer = {.abi = BELT_ARCH_ABI + 1, .name = "bad", .yaml = "",
					     .source = "", .ops = &negate, .n_ops = 1};
	ck_assert_int_eq(belt_registry_add_arch(belt_registry_global(), &newer, err, sizeof err), -1);
	char want[64];
	snprintf(want, sizeof want, "arch 'bad' has arch ABI %u; this belt supports %u..%u",
		 BELT_ARCH_ABI + 1, BELT_ARCH_ABI_MIN, BELT_ARCH_ABI);
	expect_err(want, NULL);

	/* registered, its op has a contract like the core's */
	ck_assert_ptr_null(belt_op_contract("negate_test"));
	static const struct belt_arch_ops good = {.abi = BELT_ARCH_ABI, .name = "good",
						  .yaml = "arch: good\n", .source = "good.yaml",
						  .ops = &negate, .n_ops = 1};
	ck_assert_int_eq(belt_registry_add_arch(belt_registry_global(), &good, err, sizeof err), 0);
	ck_assert_ptr_eq(belt_arch_get("good", err, sizeof err), &good);
	ck_assert_ptr_eq(belt_arch_op_find("negate_test"), &negate);
	ck_assert_ptr_eq(belt_op_contract("negate_test"), &negate.contract);
	ck_assert_int_eq(belt_op_param_index(&negate.contract, "n"), 0);
	/* backends' kernel slots for it: a new one at n, the same one
	 * after; none for another variant, a core op, without SPIR-V where
	 * a backend needs it, or past max */
	const struct belt_arch_op *have[2] = {NULL, NULL};
	ck_assert_int_eq(belt_arch_op_slot(have, 1, 2, "negate_test", NULL, false), 1);
	ck_assert_ptr_eq(have[1], &negate);
	ck_assert_int_eq(belt_arch_op_slot(have, 2, 2, "negate_test", "default", false), 1);
	ck_assert_int_eq(belt_arch_op_slot(have, 2, 2, "negate_test", "fast", false), -1);
	ck_assert_int_eq(belt_arch_op_slot(have, 2, 2, "matvec", NULL, false), -1);
	ck_assert_int_eq(belt_arch_op_slot(have, 0, 2, "negate_test", "", true), -1);
	ck_assert_int_eq(belt_arch_op_slot(have, 1, 1, "negate_test", "", false), -1);
	/* a second architecture may not take its op */
	static struct belt_arch_ops again;
	again = good;
	again.name = "again";
	ck_assert_int_eq(belt_registry_add_arch(belt_registry_global(), &again, err, sizeof err), -1);
	expect_err("arch 'again': op 'negate_test' exists already", NULL);
	/* one that is neither registered nor a module on the path */
	ck_assert_ptr_null(belt_arch_get("nosuch", err, sizeof err));
	expect_err("plugin 'arch-nosuch' not found", NULL);
}
END_TEST

/* The scan's module files by name (after the last '/'). */
struct seen_files {
	char name[64][128];
	int count[64], n;
};

static int count_file(void *ud, const char *file, const struct belt_plugin *p, const char *error)
{
	(void)p;
	(void)error;
	struct seen_files *sf = ud;
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	for (int i = 0; i < sf->n; i++)
		if (!strcmp(sf->name[i], base)) {
			sf->count[i]++;
			return 0;
		}
	if (sf->n < 64) {
		snprintf(sf->name[sf->n], sizeof sf->name[0], "%s", base);
		sf->count[sf->n++] = 1;
	}
	return 0;
}

/* main puts the test plugins' folder on the path twice, spelt two ways:
 * the scan (belt info's list) visits each module file once. */
START_TEST(scan_once)
{
	struct seen_files sf = {.n = 0};
	ck_assert_int_eq(belt_plugin_scan(count_file, &sf), 0);
	ck_assert_int_gt(sf.n, 0);
	for (int i = 0; i < sf.n; i++)
		ck_assert_msg(sf.count[i] == 1, "%s visited %d times", sf.name[i], sf.count[i]);
}
END_TEST

int main(void)
{
	const char *plugins = getenv("BELT_TEST_PLUGINS");
	if (!plugins || !*plugins) {
		fprintf(stderr, "check_registry: set BELT_TEST_PLUGINS to the test plugins' folder\n");
		return EXIT_FAILURE;
	}
	char path[8192];
	snprintf(path, sizeof path, "%s:%s/.", plugins, plugins); /* one folder twice */
	setenv("BELT_PLUGIN_PATH", path, 1);
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("registry");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, grammar_plugin);
	tcase_add_test(tc, draft_plugin);
	tcase_add_test(tc, backend_oldest_abi_loads);
	tcase_add_test(tc, backend_newer_abi_refused);
	tcase_add_test(tc, descriptor_abi_refused);
	tcase_add_test(tc, kind_and_name);
	tcase_add_test(tc, tables_checked);
	tcase_add_test(tc, arch_ops_checked);
	tcase_add_test(tc, scan_once);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
