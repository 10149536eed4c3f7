/* belt/arch.h: architectures shipped as plugins, with ops of their own.
 *
 * An architecture is normally a YAML file on the arch path
 * (doc/arch-yaml.md) whose forward pass uses the core's ops (belt/ops.h).
 * One that needs a kernel no other architecture uses ships as a plugin
 * module "arch-NAME" that registers its description (the same YAML, as
 * text) and its ops: for each, a contract like the core's, a host function
 * that the CPU backend runs and, optionally, a SPIR-V compute shader that
 * the Vulkan backend runs. doc/plugins.md says how to write one;
 * plugins/arch-gemma2/ is the reference. */
#ifndef BELT_ARCH_H
#define BELT_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "belt/backend.h"
#include "belt/ops.h"

#define BELT_ARCH_ABI 1
#define BELT_ARCH_ABI_MIN 1

/* What the CPU backend hands an op's host function: items [i0, i1) of a
 * pass over rows row0 .. row0 + n_rows - 1, per_row items to a row, item
 * 0 the first of row row0. Threads split a pass by items, so a call may
 * start and end inside a row. */
struct belt_op_host_run {
	/* each binding's first byte (the command's offset applied): row r
	 * of a rows binding starts row_elems * r floats after it */
	void *bind[BELT_MAX_BINDINGS];
	const struct belt_binding *binding; /* the command's: types, sizes */
	const union belt_param *param;	    /* in the contract's schema order */
	uint32_t row0, n_rows;
	int64_t per_row;
	int64_t i0, i1;
};

/* One op an architecture plugin adds. Its contract follows belt/ops.h
 * with these limits: rows computed independently (row_wise), no patches,
 * bindings of kind ROWS (F32) or WEIGHT only. */
struct belt_arch_op {
	struct belt_op_contract contract;
	/* the integer param giving a row's items ("n"): the unit threads
	 * and workgroups split */
	const char *items;
	/* Check a command's weight types and params beyond what the
	 * contract says; one line naming cmd->label. NULL: nothing more. */
	int (*check)(const struct belt_cmd *cmd, char *err, size_t errsz);
	/* the CPU backend's kernel: do run's items */
	void (*host)(const struct belt_op_host_run *run);
	/* The Vulkan backend's kernel (NULL: that backend refuses the op):
	 * a compute shader built against this belt's shaders/common.glsl
	 * (installed as pkgdatadir/shaders/common.glsl): bindings 0 ..
	 * n_bind - 1 as the contract's, each starting pc.o[i] elements into
	 * its range, params in pc.p as 32-bit words, the rows [row_first(),
	 * row_end()) of a dispatch one a z layer (row_z(), row_in()), and
	 * ceil(items / local_size) workgroups of local_size threads a row
	 * (wg_id()); it starts with STOP_CHECK(). */
	const uint32_t *spirv;
	size_t spirv_bytes;
	uint32_t local_size;
};

struct belt_arch_ops {
	uint32_t abi;	  /* BELT_ARCH_ABI */
	const char *name; /* the GGUF's general.architecture */
	/* the description in the arch YAML format; source names it in
	 * messages ("arch-gemma2/gemma2.yaml") */
	const char *yaml;
	const char *source;
	const struct belt_arch_op *ops;
	uint32_t n_ops;
};

struct belt_registry;

/* Called from register_features: add an architecture and its ops. Fails
 * on an ABI outside the supported range, an op whose contract breaks the
 * limits above, or a name (architecture or op) already taken, the core's
 * ops included. */
int belt_registry_add_arch(struct belt_registry *r, const struct belt_arch_ops *ops,
			   char *err, size_t errsz);

/* The architecture plugin called name, loading module "arch-<name>" from
 * the plugin path if it is not registered yet. */
const struct belt_arch_ops *belt_arch_get(const char *name, char *err, size_t errsz);

/* The op called op of a registered architecture plugin, or NULL. */
const struct belt_arch_op *belt_arch_op_find(const char *op);

/* For backends. A kernel of op: variant "default", any weight type, the
 * contract's bindings and params, impl the backend's own. */
struct belt_kernel belt_arch_op_kernel(const struct belt_arch_op *op, const void *impl);
/* For backends' kernel_find: the index of op among the n plugin ops a
 * backend keeps kernels for (have[0..n)), or n for a new one, have[n]
 * set (the backend then makes its kernel and counts it); -1 when no
 * plugin has op for variant ("default" or empty), with need_spirv none
 * that brings SPIR-V, or n reached max. */
int belt_arch_op_slot(const struct belt_arch_op **have, unsigned n, unsigned max,
		      const char *op, const char *variant, bool need_spirv);
/* At table_prepare, cmd's op (NULL when no plugin has it any more, with
 * err): its items param checked to be at least 1 (*items) and the op's
 * own check run. */
const struct belt_arch_op *belt_arch_op_prepare(const struct belt_cmd *cmd, int64_t *items,
						char *err, size_t errsz);

#endif
