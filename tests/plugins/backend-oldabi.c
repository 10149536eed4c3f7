/* A backend built for the oldest backend ABI this belt loads: it must
 * register. It does nothing; create() says so. */
#include "belt/error.h"
#include "belt/plugin.h"

static int create(const struct belt_backend_options *opt, void **ctx, char *err, size_t errsz)
{
	(void)opt;
	(void)ctx;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static void destroy(void *ctx)
{
	(void)ctx;
}

static int buffer_create(void *ctx, enum belt_buffer_usage usage, uint64_t size,
			 struct belt_buffer **out, char *err, size_t errsz)
{
	(void)ctx, (void)usage, (void)size, (void)out;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static void buffer_destroy(void *ctx, struct belt_buffer *b)
{
	(void)ctx, (void)b;
}

static int buffer_write(void *ctx, struct belt_buffer *b, uint64_t offset, const void *src,
			uint64_t size, char *err, size_t errsz)
{
	(void)ctx, (void)b, (void)offset, (void)src, (void)size;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static int buffer_read(void *ctx, struct belt_buffer *b, uint64_t offset, void *dst,
		       uint64_t size, char *err, size_t errsz)
{
	(void)ctx, (void)b, (void)offset, (void)dst, (void)size;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static const struct belt_kernel *kernel_find(void *ctx, const char *op, const char *variant,
					     int wtype)
{
	(void)ctx, (void)op, (void)variant, (void)wtype;
	return NULL;
}

static int table_prepare(void *ctx, struct belt_table *t, char *err, size_t errsz)
{
	(void)ctx, (void)t;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static void table_release(void *ctx, struct belt_table *t)
{
	(void)ctx, (void)t;
}

static int table_run(void *ctx, struct belt_table *t, uint32_t pos, uint32_t n,
		     uint32_t flags, char *err, size_t errsz)
{
	(void)ctx, (void)t, (void)pos, (void)n, (void)flags;
	return belt_errf(err, errsz, "backend 'oldabi' is a test stub");
}

static const struct belt_backend_ops oldabi = {
	.abi = BELT_BACKEND_ABI_MIN,
	.name = "oldabi",
	.description = "test backend built for the oldest supported backend ABI",
	.create = create,
	.destroy = destroy,
	.buffer_create = buffer_create,
	.buffer_destroy = buffer_destroy,
	.buffer_write = buffer_write,
	.buffer_read = buffer_read,
	.kernel_find = kernel_find,
	.table_prepare = table_prepare,
	.table_release = table_release,
	.table_run = table_run,
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_backend(r, &oldabi, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "backend-oldabi",
	.description = "test plugin: a backend of the oldest supported ABI",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
