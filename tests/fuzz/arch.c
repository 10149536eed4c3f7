/* libFuzzer target: the YAML loaders of core/arch and the expressions they
 * carry.
 *
 * The input is written to DIR/belt.yaml (a file, since that is what the
 * loaders read; DIR in $TMPDIR, else /dev/shm) and loaded both as an architecture file (belt_arch_load)
 * and as belt.yaml (belt_config_load, for the cpu and the vulkan
 * settings). When the architecture loads, every expression in it is
 * evaluated as the model does: the hparams (their defaults, else a
 * value), then the derived values in order, then tensor shapes, buffers,
 * KV arrays and op params. Invariants: a failed load leaves no
 * architecture and says why; a loaded one has its name, hparams, ops,
 * logits and every string it counts; no loader or evaluation crashes,
 * leaks or overflows (ASan, UBSan). A broken invariant aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "arch/config.h"
#include "arch/expr.h"
#include "belt/error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], file[4200];

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz arch: invariant broken: %s%s%s\n", what,
		detail ? ": " : "", detail ? detail : "");
	abort();
}

static void cleanup(void)
{
	unlink(file);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* a file per input: on tmpfs it costs little, on a disk most of the
	 * time (four times the executions per second here) */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof dir, "%s/belt-fuzz-arch-XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(2);
	}
	snprintf(file, sizeof file, "%s/belt.yaml", dir);
	atexit(cleanup);
	return 0;
}

static void eval(const char *src, struct belt_vars *vs, const char *set_name)
{
	char err[BELT_ERR_SIZE] = "";
	double v;
	if (!src)
		broken("an expression the loader counted is NULL", set_name);
	if (belt_expr_eval(src, vs, &v, err, sizeof err)) {
		if (!*err)
			broken("a failed expression says nothing", src);
		return;
	}
	if (set_name)
		belt_vars_set(vs, set_name, v);
}

static void check_named(const struct arch_named_expr *e, unsigned n, struct belt_vars *vs,
			bool set)
{
	for (unsigned i = 0; i < n; i++) {
		if (!e[i].name)
			broken("a named expression without a name", NULL);
		eval(e[i].expr, vs, set ? e[i].name : NULL);
	}
}

static void check_arch(const struct belt_arch *a)
{
	if (!a->name || !a->n_hparams || !a->n_ops || !a->logits)
		broken("a loaded architecture lacks a required section", a->path);
	struct belt_vars vs = {.n = 0};
	for (unsigned i = 0; i < a->n_hparams; i++) {
		const struct arch_hparam *h = &a->hparams[i];
		if (!h->name || (!h->key && !h->tensor) || (h->tensor && (h->dim < 0 || h->dim > 3)))
			broken("an hparam without name, key or tensor dim", h->name);
		belt_vars_set(&vs, h->name, 4);
		if (h->def)
			eval(h->def, &vs, h->name);
	}
	check_named(a->derived, a->n_derived, &vs, true);
	for (unsigned i = 0; i < a->n_tensors; i++) {
		const struct arch_tensor *t = &a->tensors[i];
		if (!t->name || t->n_dims < 1 || t->n_dims > 4)
			broken("a tensor without name or shape", t->name);
		for (unsigned d = 0; d < t->n_dims; d++)
			eval(t->shape[d], &vs, NULL);
	}
	check_named(a->buffers, a->n_buffers, &vs, false);
	check_named(a->kv, a->n_kv, &vs, false);
	for (unsigned i = 0; i < a->n_ops; i++) {
		const struct arch_op *op = &a->ops[i];
		if (!op->op || op->n_bind < 1 || op->n_bind > BELT_MAX_BINDINGS ||
		    op->n_param > BELT_MAX_PARAMS)
			broken("an op without name or bindings, or too many", op->op);
		for (unsigned b = 0; b < op->n_bind; b++)
			if (!op->bind[b])
				broken("a NULL binding", op->op);
		check_named(op->param, op->n_param, &vs, false);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(file, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		perror(file);
		exit(2);
	}
	char err[BELT_ERR_SIZE] = "";
	struct belt_arch *a = (struct belt_arch *)1;
	if (belt_arch_load(file, &a, err, sizeof err)) {
		if (a)
			broken("a failed load hands out an architecture", NULL);
		if (strncmp(err, file, strlen(file)))
			broken("the message does not name the file", err);
	} else {
		check_arch(a);
		belt_arch_free(a);
	}
	static const char *const backends[] = {"cpu", "vulkan"};
	for (size_t i = 0; i < 2; i++) {
		struct belt_config c;
		err[0] = 0;
		if (belt_config_load(dir, backends[i], &c, err, sizeof err)) {
			if (strncmp(err, file, strlen(file)))
				broken("belt.yaml: the message does not name the file", err);
			continue;
		}
		if (c.n_setting > BELT_CONFIG_SETTINGS || strnlen(c.kernels, sizeof c.kernels) ==
								   sizeof c.kernels)
			broken("belt.yaml: settings or kernels out of bounds", NULL);
		for (uint32_t s = 0; s < c.n_setting; s++) {
			const char *k = c.setting[s].key, *v = c.setting[s].value;
			if (!k || !v || k < c.text || k >= c.text + sizeof c.text || v < c.text ||
			    v >= c.text + sizeof c.text)
				broken("belt.yaml: a setting outside the config's text", NULL);
		}
	}
	return 0;
}
