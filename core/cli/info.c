/* belt info: what a GGUF holds and what belt makes of it. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "belt/belt.h"
#include "belt/plugin.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt info [-m MODEL [--tensors]] [--backend NAME]\n"
	"\n"
	"Show the plugins found and the devices of each backend: index, name,\n"
	"type, memory and limits, and the one used when run and bench get no\n"
	"--device. --backend NAME lists that backend's devices only.\n"
	"With -m, first the model's metadata, the hyperparameters belt resolves\n"
	"loading it on --backend (default cpu) and a summary of the tensors\n"
	"(--tensors lists them all); then the devices of that backend only.\n";

#define MAX_BACKENDS 16

/* The backends the plugin scan found, by name. */
struct backends {
	char name[MAX_BACKENDS][64];
	int n;
};

static void print_value(const struct belt_gguf_kv *kv)
{
	switch (kv->type) {
	case BELT_GGUF_STRING: {
		uint64_t n = kv->v.str.len > 80 ? 80 : kv->v.str.len;
		printf("\"%.*s\"%s", (int)n, kv->v.str.ptr, n < kv->v.str.len ? "..." : "");
		break;
	}
	case BELT_GGUF_ARRAY:
		printf("[%s x %" PRIu64 "]", belt_gguf_vtype_name(kv->v.arr.type), kv->v.arr.n);
		break;
	case BELT_GGUF_FLOAT32:
	case BELT_GGUF_FLOAT64:
		printf("%g", kv->v.f64);
		break;
	case BELT_GGUF_BOOL:
		printf("%s", kv->v.b ? "true" : "false");
		break;
	case BELT_GGUF_INT8:
	case BELT_GGUF_INT16:
	case BELT_GGUF_INT32:
	case BELT_GGUF_INT64:
		printf("%" PRId64, kv->v.i64);
		break;
	default:
		printf("%" PRIu64, kv->v.u64);
	}
}

/* Values of a tensor (the product of its dimensions). */
static uint64_t n_values(const struct belt_gguf_tensor *t)
{
	return (uint64_t)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
}

/* A matrix as llama.cpp counts one: more than one row. */
static bool is_matrix(const struct belt_gguf_tensor *t)
{
	return t->ne[1] > 1 || t->ne[2] > 1 || t->ne[3] > 1;
}

static double bpw(uint64_t bytes, uint64_t values)
{
	return values ? 8.0 * (double)bytes / (double)values : 0.0;
}

/* The list (with --tensors), then per type: tensors, MiB, bytes and bits
 * per weight; then bits per weight of the matrices and of all tensors. */
static void print_tensors(const struct belt_gguf *g, bool all)
{
	uint64_t count[BELT_TYPE_COUNT] = {0}, bytes[BELT_TYPE_COUNT] = {0};
	uint64_t values[BELT_TYPE_COUNT] = {0}, total = 0, params = 0, mbytes = 0, mvalues = 0;
	for (uint64_t i = 0; i < g->n_tensors; i++) {
		const struct belt_gguf_tensor *t = &g->tensors[i];
		count[t->type]++;
		bytes[t->type] += t->size;
		values[t->type] += n_values(t);
		total += t->size;
		params += n_values(t);
		if (is_matrix(t)) {
			mbytes += t->size;
			mvalues += n_values(t);
		}
		if (all)
			printf("  %-32s %-6s [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] %" PRIu64 " bytes\n",
			       t->name, belt_type_name(t->type), t->ne[0], t->ne[1], t->ne[2], t->ne[3], t->size);
	}
	printf("tensors: %" PRIu64 ", %.2f M parameters, %.2f MiB\n", g->n_tensors, params / 1e6,
	       total / 1048576.0);
	for (int t = 0; t < BELT_TYPE_COUNT; t++)
		if (count[t])
			printf("  %-6s %5" PRIu64 " tensors %10.2f MiB %12" PRIu64 " bytes %8.4f bpw\n",
			       belt_type_name(t), count[t], bytes[t] / 1048576.0, bytes[t],
			       bpw(bytes[t], values[t]));
	printf("bits per weight: %.4f (matrices), %.4f (all)\n", bpw(mbytes, mvalues),
	       bpw(total, params));
}

static void print_hparams(const char *path, const char *backend)
{
	static const char *const names[] = {"n_vocab", "n_embd", "n_layer", "n_head", "n_head_kv",
		"head_dim", "n_ff", "n_ctx_train", "rope_dim", "rope_base", "norm_eps"};
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = path;
	mp.backend = backend;
	mp.n_threads = 1;
	struct belt_model *m;
	char err[CLI_ERR_SIZE];
	if (belt_model_load(&mp, &m, err, sizeof err)) {
		printf("hyperparameters: not loadable: %s\n", err);
		return;
	}
	printf("architecture: %s\nhyperparameters:\n", belt_model_arch(m));
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		double v;
		if (belt_model_hparam(m, names[i], &v))
			printf("  %-12s %g\n", names[i], v);
	}
	belt_model_free(m);
}

/* Keep the names sorted, each once. */
static void add_backend(struct backends *b, const char *name)
{
	int i = 0;
	while (i < b->n && strcmp(b->name[i], name) < 0)
		i++;
	if ((i < b->n && !strcmp(b->name[i], name)) || b->n == MAX_BACKENDS ||
	    strlen(name) >= sizeof b->name[0])
		return;
	memmove(b->name[i + 1], b->name[i], (size_t)(b->n - i) * sizeof b->name[0]);
	strcpy(b->name[i], name);
	b->n++;
}

static void print_arch(const char *name, const char *file, void *ud)
{
	(void)ud;
	printf("  %-16s %s\n", name, file);
}

static int print_plugin(void *ud, const char *file, const struct belt_plugin *p,
			const char *error)
{
	if (p && !strncmp(p->name, "backend-", 8))
		add_backend(ud, p->name + 8);
	if (p)
		printf("  %-16s %s (%s)\n", p->name, p->description ? p->description : "", file);
	else
		printf("  error: %s\n", error);
	return 0;
}

static void print_devices(const char *backend)
{
	char buf[16384], err[CLI_ERR_SIZE];
	int n = cli_devices(backend, buf, sizeof buf, err, sizeof err);
	if (n < 0) {
		printf("  %s: error: %s\n", backend, err);
		return;
	}
	printf("  %s: %d device%s\n", backend, n, n == 1 ? "" : "s");
	for (const char *line = buf; *line;) {
		size_t len = strcspn(line, "\n");
		printf("    %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
}

static int print_model(const char *model, const char *backend, bool all)
{
	char err[CLI_ERR_SIZE];
	struct belt_gguf *g = belt_gguf_open(model, err, sizeof err);
	if (!g)
		return cli_fail(err);
	printf("file: %s\nGGUF version %u, %" PRIu64 " metadata keys, alignment %" PRIu64 "\n",
	       model, g->version, g->n_kv, g->alignment);
	for (uint64_t i = 0; i < g->n_kv; i++) {
		printf("  %-44s ", g->kv[i].key);
		print_value(&g->kv[i]);
		putchar('\n');
	}
	print_tensors(g, all);
	if (g->n_tensors)
		print_hparams(model, backend);
	belt_gguf_close(g);
	return 0;
}

int cmd_info(int argc, char **argv)
{
	enum { O_TENSORS = 256, O_BACKEND };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"tensors", no_argument, 0, O_TENSORS},
		{"backend", required_argument, 0, O_BACKEND}, {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	const char *model = NULL, *backend = NULL;
	bool all = false;
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c;
	while ((c = getopt_long(argc, argv, ":m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': model = optarg; break;
		case O_TENSORS: all = true; break;
		case O_BACKEND: backend = optarg; break;
		case 'h': fputs(help, stdout); return 0;
		case ':': return cli_usage_error("info", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("info", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("info", "unexpected argument '%s'", argv[optind]);
	if (all && !model)
		return cli_usage_error("info", "--tensors needs -m MODEL");
	char err[CLI_ERR_SIZE];
	/* a backend named on the command line must exist, before any output */
	if (backend && cli_devices(backend, NULL, 0, err, sizeof err) < 0)
		return cli_error("info", "--backend %s: %s", backend, err);
	if (model && print_model(model, backend ? backend : "cpu", all))
		return CLI_FAIL;
	char path[4096];
	printf("architectures:\n");
	if (belt_arch_scan(print_arch, NULL, path, sizeof path) == 0)
		printf("  none (search path %s)\n", path);
	struct backends found = {.n = 0};
	printf("plugins (search path %s):\n", belt_plugin_path());
	belt_plugin_scan(print_plugin, &found);
	/* with a model, only the backend it was loaded on */
	const char *only = backend ? backend : model ? "cpu" : NULL;
	printf("devices:\n");
	if (only)
		print_devices(only);
	for (int i = 0; i < found.n && !only; i++)
		print_devices(found.name[i]);
	return 0;
}
