/* The Vulkan backend's ops table. create() opens one device and compute
 * queue; buffers are one allocation each; table_prepare writes one
 * descriptor set per command and pre-records one command buffer per token
 * slot of a run (twice: with and without the output head), so that
 * table_run only writes the run's base position into a small host-visible
 * "meta" buffer and submits the first n slots at once, then waits. A
 * batched table (rows > 1) is recorded as one pass instead (batch.c).
 *
 * Environment:
 *   BELT_VK_DEVICE=i      physical device index (when options.device < 0)
 *   BELT_VK_VALIDATION=1  Khronos validation layer + debug messenger; any
 *                         warning or error fails the next prepare/run/read
 *                         and is counted; =fatal also aborts in destroy()
 *                         when the count is not zero
 *   BELT_VK_STAGING=1     never map device buffers (tests the staging path)
 *   BELT_VK_FUSE=0        no fusion: prepare records the table as given
 *                         (read at each table_prepare)
 *   BELT_VK_PROFILE=1     timestamp queries after every dispatch; at
 *                         table_release a table of GPU time per command
 *                         kind goes to stderr (read at each table_prepare)
 *
 * Fusion (table_prepare, fuse_find): the core's table is the unfused
 * reference; runs of commands are replaced by one internal matvec_fused
 * dispatch (shaders/matvec_fused.comp) where that is provably the same
 * computation: rmsnorm folded into the matvecs that read its output (when
 * nothing else reads that output before it is rewritten), up to three
 * matvecs sharing x, gate/up + silu_mul (swiglu), matvec + add (residual).
 * One-row tables only: a batched table runs as the core built it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/error.h"
#include "belt/types.h"
#include "belt/ops.h"
#include "vk.h"
#include "plan.h"

#define STAGING_BYTES (64ull << 20)
#define BUF_ALIGN 256
#define DEFAULT_MAX_RUN 16
#define GROUP_MAX 64



const char *vk_result(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_NOT_READY: return "VK_NOT_READY";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED:
		return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
	case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
	case VK_ERROR_EXTENSION_NOT_PRESENT:
		return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
	case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
	default: return "VkResult error";
	}
}


int vk_check_messages(struct vk_ctx *ctx, const char *what, char *err,
		      size_t errsz)
{
	if (!ctx->validation || !ctx->n_messages)
		return 0;
	return belt_errf(err, errsz,
			 "vulkan: %s: %u validation messages, the first: %s",
			 what, ctx->n_messages, ctx->first_message);
}

/* ---- create / destroy ---- */

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
	   VkDebugUtilsMessageTypeFlagsEXT type,
	   const VkDebugUtilsMessengerCallbackDataEXT *data, void *ud)
{
	(void)type;
	struct vk_ctx *ctx = ud;
	if (!(severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)))
		return VK_FALSE;
	const char *msg = data && data->pMessage ? data->pMessage : "?";
	if (!ctx->n_messages)
		snprintf(ctx->first_message, sizeof ctx->first_message, "%s",
			 msg);
	ctx->n_messages++;
	fprintf(stderr, "belt vulkan: validation: %s\n", msg);
	return VK_FALSE;
}

static bool has_layer(const char *name)
{
	uint32_t n = 0;
	if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || !n)
		return false;
	VkLayerProperties *l = calloc(n, sizeof *l);
	bool found = false;
	if (l && vkEnumerateInstanceLayerProperties(&n, l) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(l[i].layerName, name);
	free(l);
	return found;
}

static int make_instance(struct vk_ctx *ctx, char *err, size_t errsz)
{
	uint32_t ver = vk_loader_version();
	if (ver < VK_API_VERSION_1_2)
		return belt_errf(err, errsz,
				 "vulkan: the loader offers Vulkan %u.%u, "
				 "this backend needs 1.2",
				 VK_API_VERSION_MAJOR(ver),
				 VK_API_VERSION_MINOR(ver));
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "belt",
		.pEngineName = "belt",
		.apiVersion = VK_API_VERSION_1_2,
	};
	const char *layer = "VK_LAYER_KHRONOS_validation";
	const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	VkDebugUtilsMessengerCreateInfoEXT mci = {
		.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
		.messageSeverity =
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		.pfnUserCallback = on_message,
		.pUserData = ctx,
	};
	VkValidationFeaturesEXT vf = {
		.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	if (ctx->validation) {
		if (!has_layer(layer))
			return belt_errf(err, errsz,
					 "vulkan: BELT_VK_VALIDATION is set but "
					 "%s is not installed",
					 layer);
		ici.enabledLayerCount = 1;
		ici.ppEnabledLayerNames = &layer;
		ici.enabledExtensionCount = 1;
		ici.ppEnabledExtensionNames = &ext;
		/* messages of create/destroy instance too; and check the
		 * barriers (commands that share no data run without one) */
		static const VkValidationFeatureEnableEXT en[] = {
			VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
		vf.enabledValidationFeatureCount = 1;
		vf.pEnabledValidationFeatures = en;
		vf.pNext = &mci;
		ici.pNext = &vf;
	}
	VKCHECK(vkCreateInstance(&ici, NULL, &ctx->inst), "vkCreateInstance");
	if (ctx->validation) {
		PFN_vkCreateDebugUtilsMessengerEXT f =
			(PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				ctx->inst, "vkCreateDebugUtilsMessengerEXT");
		if (!f)
			return belt_errf(err, errsz, "vulkan: no "
				"vkCreateDebugUtilsMessengerEXT");
		VKCHECK(f(ctx->inst, &mci, NULL, &ctx->messenger),
			"vkCreateDebugUtilsMessengerEXT");
	}
	return 0;
}

/* opt->device or $BELT_VK_DEVICE by index, else the first discrete GPU,
 * else the first device. */
static int pick_device(struct vk_ctx *ctx, int want, char *err, size_t errsz)
{
	uint32_t n = 0;
	VKCHECK(vkEnumeratePhysicalDevices(ctx->inst, &n, NULL),
		"vkEnumeratePhysicalDevices");
	if (!n)
		return belt_errf(err, errsz, "vulkan: no Vulkan device found");
	VkPhysicalDevice devs[64];
	if (n > 64)
		n = 64;
	VkResult r = vkEnumeratePhysicalDevices(ctx->inst, &n, devs);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return belt_errf(err, errsz, "vulkan: vkEnumeratePhysicalDevices: "
				 "%s", vk_result(r));
	int pick = -1;
	if (want < 0) {
		const char *env = getenv("BELT_VK_DEVICE");
		if (env && *env) {
			char *end;
			long v = strtol(env, &end, 10);
			if (*end || v < 0)
				return belt_errf(err, errsz,
						 "vulkan: BELT_VK_DEVICE=%s: "
						 "expected a device index",
						 env);
			want = (int)v;
		}
	}
	if (want >= 0) {
		if ((uint32_t)want >= n)
			return belt_errf(err, errsz,
					 "vulkan: device %d requested, %u "
					 "found",
					 want, n);
		pick = want;
	}
	for (uint32_t i = 0; i < n && pick < 0; i++) {
		VkPhysicalDeviceProperties p;
		vkGetPhysicalDeviceProperties(devs[i], &p);
		if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
			pick = (int)i;
	}
	if (pick < 0)
		pick = 0;
	ctx->phys = devs[pick];
	vkGetPhysicalDeviceProperties(ctx->phys, &ctx->props);
	vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->mem);
	if (ctx->props.apiVersion < VK_API_VERSION_1_2)
		return belt_errf(err, errsz,
				 "vulkan: device %d (%s) supports Vulkan "
				 "%u.%u, this backend needs 1.2",
				 pick, ctx->props.deviceName,
				 VK_API_VERSION_MAJOR(ctx->props.apiVersion),
				 VK_API_VERSION_MINOR(ctx->props.apiVersion));
	return 0;
}

static int make_device(struct vk_ctx *ctx, char *err, size_t errsz)
{
	const char *name = ctx->props.deviceName;
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
	VkPhysicalDeviceMaintenance3Properties m3 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
		.pNext = &sg};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &m3};
	vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
	ctx->max_alloc = m3.maxMemoryAllocationSize;
	ctx->subgroup = sg.subgroupSize ? sg.subgroupSize : 32;
	/* matvec_fused's settings by variant, the H100's best measured
	 * (doc/vulkan.md): threads per workgroup (more for Q4_0 and int8
	 * x), rows per subgroup (2 for int8 Q4_0: 8B 346 -> 358 tokens/s),
	 * units each lane loads before using them (4 for int8 Q8_0: 8B 236 ->
	 * 245), values of x staged in shared memory at a time (Q4_0 the
	 * larger tile, slower for the rest; int8 x all of a row up to
	 * 16384), and subgroups sharing each row of a matvec with k at least
	 * a bound (2 for F16, every k, and for Q8_0, k >= 8192: down; 1 on a
	 * CPU device, lavapipe, which there runs F16 at twice the speed of
	 * 2). xq: x staged as int8 (5 bytes per 4 values, a scale and sum of
	 * 8 bytes per 32) rather than floats (16). */
	static const struct {
		uint32_t wg, nr, unr, tile, ks, ks_k;
		bool xq;
	} def[VK_FMV_TYPES] = {
		[VK_SH_FMV_F32 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 1, 0, false},
		[VK_SH_FMV_F16 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 2, 0, false},
		[VK_SH_FMV_BF16 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 1, 0, false},
		[VK_SH_FMV_Q8_0 - VK_SH_FMV_F32] = {VK_MVF_WG, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE, 2, 8192, false},
		[VK_SH_FMV_Q4_0 - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL,
			VK_MVF_TILE_Q4_0, 1, 0, false},
		[VK_SH_FMV_Q4_0_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS_Q4_0_XQ, VK_MVF_UNROLL,
			VK_MVF_TILE_XQ, 1, 0, true},
		[VK_SH_FMV_Q8_0_XQ - VK_SH_FMV_F32] = {VK_MVF_WG_Q4_0, VK_MVF_ROWS, VK_MVF_UNROLL_Q8_0_XQ,
			VK_MVF_TILE_XQ, 1, 0, true},
	};
	/* Each overridden for every variant, for sweeps: BELT_VK_MV_WG (64
	 * .. 1024, a power of two), BELT_VK_MV_ROWS (1..8), BELT_VK_MV_UNROLL
	 * (2 or 4), BELT_VK_MV_TILE (a multiple of 2048 that fits beside the
	 * shader's other shared arrays, 6 KiB at most), BELT_VK_MV_KSPLIT (1,
	 * 2 or 4) and BELT_VK_MV_KSPLIT_K; BELT_VK_MV_SWIZZLE=0: x not
	 * swizzled in shared memory, for comparison. */
	const char *mr = getenv("BELT_VK_MV_ROWS");
	bool mr_ok = mr && atoi(mr) >= 1 && atoi(mr) <= 8;
	const char *mw = getenv("BELT_VK_MV_WG");
	uint32_t wg = mw ? (uint32_t)atoi(mw) : 0;
	bool wg_ok = wg >= 64 && wg <= 1024 && !(wg & (wg - 1)) &&
		     wg <= p2.properties.limits.maxComputeWorkGroupInvocations;
	const char *mu = getenv("BELT_VK_MV_UNROLL");
	bool mu_ok = mu && (atoi(mu) == 2 || atoi(mu) == 4);
	const char *mt = getenv("BELT_VK_MV_TILE");
	uint32_t shmax = p2.properties.limits.maxComputeSharedMemorySize;
	bool cpu_dev = p2.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	const char *mk = getenv("BELT_VK_MV_KSPLIT"), *mkk = getenv("BELT_VK_MV_KSPLIT_K");
	const char *sw = getenv("BELT_VK_MV_SWIZZLE");
	ctx->mv_swz = !(sw && !strcmp(sw, "0"));
	for (int i = 0; i < VK_FMV_TYPES; i++) {
		uint32_t w = wg_ok ? wg : def[i].wg;
		ctx->mv_wg[i] = w;
		ctx->mv_nr[i] = mr_ok ? (uint32_t)atoi(mr) : def[i].nr;
		ctx->mv_rpw[i] = ctx->mv_nr[i] * (ctx->subgroup < w ? w / ctx->subgroup : 1);
		ctx->mv_unr[i] = mu_ok ? (uint32_t)atoi(mu) : def[i].unr;
		uint32_t b4 = def[i].xq ? 5 : 16; /* shared bytes per 4 values */
		uint32_t tile = mt ? (uint32_t)atoi(mt) : def[i].tile;
		if (tile < 2048 || tile % 2048)
			tile = VK_MVF_TILE;
		while (tile > 2048 && tile / 4 * b4 + 6144 > shmax)
			tile -= 2048;
		ctx->mv_tile[i] = tile;
		int ks = mk ? atoi(mk) : cpu_dev ? 1 : (int)def[i].ks;
		ctx->mv_ks[i] = ks == 2 || ks == 4 ? (uint32_t)ks : 1;
		ctx->mv_ks_k[i] = mkk && atoi(mkk) >= 0 ? (uint32_t)atoi(mkk)
			      : mk ? 8192 : def[i].ks_k;
	}
	VkSubgroupFeatureFlags need_sg = VK_SUBGROUP_FEATURE_BASIC_BIT |
					 VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
	if (!(sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
	    (sg.supportedOperations & need_sg) != need_sg)
		return belt_errf(err, errsz,
				 "vulkan: %s lacks subgroup arithmetic in "
				 "compute shaders",
				 name);

	VkPhysicalDevice16BitStorageFeatures s16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &s16};
	vkGetPhysicalDeviceFeatures2(ctx->phys, &f2);
	/* Q4_0 and Q8_0 matvecs with x as int8 where the device can: 8 or 4
	 * packed dot products per 16 weight bytes instead of 32 or 16 int8
	 * conversions and FMAs (doc/vulkan.md); BELT_VK_Q8X=0: the float
	 * path, =q4_0 or =q8_0: int8 x for that type only */
	const char *q8 = getenv("BELT_VK_Q8X");
	ctx->q8x = !vk_int8_dot(ctx->phys) || (q8 && !strcmp(q8, "0")) ? 0
		   : q8 && !strcmp(q8, "q4_0")			      ? VK_Q8X_Q4_0
		   : q8 && !strcmp(q8, "q8_0")			      ? VK_Q8X_Q8_0
								      : VK_Q8X_Q4_0 | VK_Q8X_Q8_0;
	if (!s16.storageBuffer16BitAccess)
		return belt_errf(err, errsz,
				 "vulkan: %s lacks storageBuffer16BitAccess",
				 name);
	if (ctx->props.limits.maxPushConstantsSize < sizeof(struct vk_pc))
		return belt_errf(err, errsz,
				 "vulkan: %s: push constants of %u bytes, "
				 "need %zu",
				 name, ctx->props.limits.maxPushConstantsSize,
				 sizeof(struct vk_pc));

	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, NULL);
	VkQueueFamilyProperties qf[32];
	if (nq > 32)
		nq = 32;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, qf);
	ctx->qfamily = UINT32_MAX;
	for (uint32_t i = 0; i < nq && ctx->qfamily == UINT32_MAX; i++)
		if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
			ctx->qfamily = i;
	if (ctx->qfamily == UINT32_MAX)
		return belt_errf(err, errsz, "vulkan: %s has no compute queue",
				 name);

	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = ctx->qfamily,
		.queueCount = 1,
		.pQueuePriorities = &prio,
	};
	VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR en_idp = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
		.shaderIntegerDotProduct = VK_TRUE,
	};
	VkPhysicalDevice16BitStorageFeatures en16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
		.pNext = ctx->q8x ? &en_idp : NULL,
		.storageBuffer16BitAccess = VK_TRUE,
	};
	VkPhysicalDeviceFeatures2 en = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &en16,
	};
	const char *ext_idp = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &en,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
		.enabledExtensionCount = ctx->q8x ? 1 : 0,
		.ppEnabledExtensionNames = ctx->q8x ? &ext_idp : NULL,
	};
	VKCHECK(vkCreateDevice(ctx->phys, &dci, NULL, &ctx->dev),
		"vkCreateDevice");
	vkGetDeviceQueue(ctx->dev, ctx->qfamily, 0, &ctx->queue);

	VkCommandPoolCreateInfo cpi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = ctx->qfamily,
	};
	VKCHECK(vkCreateCommandPool(ctx->dev, &cpi, NULL, &ctx->cmd_pool),
		"vkCreateCommandPool");
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = ctx->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VKCHECK(vkAllocateCommandBuffers(ctx->dev, &cai, &ctx->xfer),
		"vkAllocateCommandBuffers");
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	VKCHECK(vkCreateFence(ctx->dev, &fci, NULL, &ctx->fence),
		"vkCreateFence");
	VkPipelineCacheCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
	VKCHECK(vkCreatePipelineCache(ctx->dev, &pci, NULL, &ctx->cache),
		"vkCreatePipelineCache");
	return 0;
}

static void vk_destroy(void *vctx);

static int vk_create(const struct belt_backend_options *opt, void **out,
		     char *err, size_t errsz)
{
	struct vk_ctx *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return belt_errf(err, errsz, "vulkan: out of memory");
	const char *v = getenv("BELT_VK_VALIDATION");
	if (v && *v && strcmp(v, "0"))
		ctx->validation = strcmp(v, "fatal") ? 1 : 2;
	const char *s = getenv("BELT_VK_STAGING");
	ctx->no_map = s && *s && strcmp(s, "0");
	ctx->profile = opt && (opt->flags & BELT_BACKEND_PROFILE);
	if (make_instance(ctx, err, errsz) ||
	    pick_device(ctx, opt ? opt->device : -1, err, errsz) ||
	    make_device(ctx, err, errsz) ||
	    vk_check_messages(ctx, "create", err, errsz)) {
		ctx->validation = 0; /* the error is reported already */
		vk_destroy(ctx);
		return -1;
	}
	*out = ctx;
	return 0;
}


static void vk_destroy(void *vctx)
{
	struct vk_ctx *ctx = vctx;
	if (!ctx)
		return;
	if (ctx->dev) {
		vkDeviceWaitIdle(ctx->dev);
		if (ctx->stage) {
			struct belt_buffer st = {.buf = ctx->stage,
						 .mem = ctx->stage_mem};
			vk_buf_free(ctx, &st);
		}
		for (int i = 0; i < VK_SH_COUNT; i++) {
			if (ctx->pipe[i])
				vkDestroyPipeline(ctx->dev, ctx->pipe[i], NULL);
			if (ctx->module[i])
				vkDestroyShaderModule(ctx->dev, ctx->module[i],
						      NULL);
		}
		for (uint32_t i = 0; i < ctx->n_fpipe; i++)
			vkDestroyPipeline(ctx->dev, ctx->fpipe[i].pipe, NULL);
		for (int i = 0; i <= BELT_MAX_BINDINGS; i++) {
			if (ctx->pl[i])
				vkDestroyPipelineLayout(ctx->dev, ctx->pl[i],
							NULL);
			if (ctx->dsl[i])
				vkDestroyDescriptorSetLayout(ctx->dev,
							     ctx->dsl[i], NULL);
		}
		if (ctx->cache)
			vkDestroyPipelineCache(ctx->dev, ctx->cache, NULL);
		if (ctx->fence)
			vkDestroyFence(ctx->dev, ctx->fence, NULL);
		if (ctx->cmd_pool)
			vkDestroyCommandPool(ctx->dev, ctx->cmd_pool, NULL);
		vkDestroyDevice(ctx->dev, NULL);
	}
	if (ctx->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT f =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				ctx->inst, "vkDestroyDebugUtilsMessengerEXT");
		if (f)
			f(ctx->inst, ctx->messenger, NULL);
	}
	if (ctx->inst)
		vkDestroyInstance(ctx->inst, NULL);
	if (ctx->validation) {
		fprintf(stderr, "belt vulkan: %u validation messages\n",
			ctx->n_messages);
		if (ctx->validation == 2 && ctx->n_messages)
			abort();
	}
	free(ctx);
}

/* ---- buffers ---- */

static const char *usage_name(enum belt_buffer_usage u)
{
	switch (u) {
	case BELT_BUFFER_WEIGHTS: return "weights";
	case BELT_BUFFER_SCRATCH: return "scratch";
	case BELT_BUFFER_KV: return "KV cache";
	case BELT_BUFFER_IO: return "IO";
	}
	return "?";
}

/* The first memory type allowed by bits that has all of `want`, trying
 * each of the preferences in order. */
static int find_memory(const struct vk_ctx *ctx, uint32_t bits,
		       const VkMemoryPropertyFlags *prefs, int n_prefs)
{
	for (int p = 0; p < n_prefs; p++)
		for (uint32_t i = 0; i < ctx->mem.memoryTypeCount; i++)
			if ((bits & (1u << i)) &&
			    (ctx->mem.memoryTypes[i].propertyFlags & prefs[p]) ==
				    prefs[p])
				return (int)i;
	return -1;
}

void vk_buf_free(struct vk_ctx *ctx, struct belt_buffer *b)
{
	if (b->buf)
		vkDestroyBuffer(ctx->dev, b->buf, NULL);
	if (b->mem)
		vkFreeMemory(ctx->dev, b->mem, NULL); /* unmaps too */
}

/* host: the buffer must be mappable (IO, staging, meta). */
int vk_buf_make(struct vk_ctx *ctx, const char *what, bool host,
		       uint64_t size, struct belt_buffer *b, char *err,
		       size_t errsz)
{
	memset(b, 0, sizeof *b);
	uint64_t alloc = (size + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;
	if (!alloc)
		alloc = BUF_ALIGN;
	if (alloc < size || (ctx->max_alloc && alloc > ctx->max_alloc))
		return belt_errf(err, errsz,
				 "vulkan: cannot allocate a %s buffer of "
				 "%" PRIu64 " bytes: the device allocates at "
				 "most %" PRIu64 " bytes at once",
				 what, size, ctx->max_alloc);
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = alloc,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
			 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkResult r = vkCreateBuffer(ctx->dev, &bci, NULL, &b->buf);
	if (r != VK_SUCCESS)
		return belt_errf(err, errsz,
				 "vulkan: cannot create a %s buffer of %" PRIu64
				 " bytes: %s",
				 what, size, vk_result(r));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(ctx->dev, b->buf, &req);
	const VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	const VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	VkMemoryPropertyFlags host_prefs[] = {
		hv | dl, hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, hv};
	VkMemoryPropertyFlags dev_prefs[] = {dl, 0};
	int type = host ? find_memory(ctx, req.memoryTypeBits, host_prefs, 3)
			: find_memory(ctx, req.memoryTypeBits, dev_prefs, 2);
	if (type < 0) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: no memory type for a %s buffer of "
				 "%" PRIu64 " bytes",
				 what, size);
	}
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = (uint32_t)type,
	};
	r = vkAllocateMemory(ctx->dev, &mai, NULL, &b->mem);
	if (r != VK_SUCCESS) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: cannot allocate a %s buffer of "
				 "%" PRIu64 " bytes: %s",
				 what, size, vk_result(r));
	}
	r = vkBindBufferMemory(ctx->dev, b->buf, b->mem, 0);
	VkMemoryPropertyFlags fl = ctx->mem.memoryTypes[type].propertyFlags;
	if (r == VK_SUCCESS && (fl & hv) == hv && (host || !ctx->no_map))
		r = vkMapMemory(ctx->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map);
	if (r != VK_SUCCESS) {
		vk_buf_free(ctx, b);
		return belt_errf(err, errsz,
				 "vulkan: cannot bind or map a %s buffer of "
				 "%" PRIu64 " bytes: %s",
				 what, size, vk_result(r));
	}
	b->size = size;
	b->alloc = alloc;
	return 0;
}

/* Submit ctx->xfer (recorded) and wait. */
static int xfer_submit(struct vk_ctx *ctx, char *err, size_t errsz)
{
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &ctx->xfer,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->fence), "vkQueueSubmit");
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	return 0;
}

/* Everything earlier on the queue (shaders, copies) is done and visible to
 * what follows (shaders, copies, the host). */
static void barrier_all(VkCommandBuffer cb)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_WRITE_BIT |
				 VK_ACCESS_HOST_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
				 VK_ACCESS_SHADER_WRITE_BIT |
				 VK_ACCESS_TRANSFER_READ_BIT |
				 VK_ACCESS_TRANSFER_WRITE_BIT |
				 VK_ACCESS_HOST_READ_BIT,
	};
	vkCmdPipelineBarrier(cb,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				     VK_PIPELINE_STAGE_TRANSFER_BIT |
				     VK_PIPELINE_STAGE_HOST_BIT,
			     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
				     VK_PIPELINE_STAGE_TRANSFER_BIT |
				     VK_PIPELINE_STAGE_HOST_BIT,
			     0, 1, &mb, 0, NULL, 0, NULL);
}

int vk_xfer_begin(struct vk_ctx *ctx, char *err, size_t errsz)
{
	VKCHECK(vkResetCommandBuffer(ctx->xfer, 0), "vkResetCommandBuffer");
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VKCHECK(vkBeginCommandBuffer(ctx->xfer, &bi), "vkBeginCommandBuffer");
	barrier_all(ctx->xfer);
	return 0;
}

int vk_xfer_end(struct vk_ctx *ctx, char *err, size_t errsz)
{
	barrier_all(ctx->xfer);
	VKCHECK(vkEndCommandBuffer(ctx->xfer), "vkEndCommandBuffer");
	return xfer_submit(ctx, err, errsz);
}

static int vk_buffer_create(void *vctx, enum belt_buffer_usage usage,
			    uint64_t size, struct belt_buffer **out,
			    char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	struct belt_buffer *b = malloc(sizeof *b);
	if (!b)
		return belt_errf(err, errsz, "vulkan: out of memory");
	if (vk_buf_make(ctx, usage_name(usage), usage == BELT_BUFFER_IO, size,
			b, err, errsz)) {
		free(b);
		return -1;
	}
	b->io = usage == BELT_BUFFER_IO;
	/* zeroed, as the CPU backend's */
	int rc = 0;
	if (b->map) {
		memset(b->map, 0, (size_t)b->alloc);
	} else {
		rc = vk_xfer_begin(ctx, err, errsz);
		if (!rc) {
			vkCmdFillBuffer(ctx->xfer, b->buf, 0, VK_WHOLE_SIZE, 0);
			rc = vk_xfer_end(ctx, err, errsz);
		}
	}
	if (rc) {
		vk_buf_free(ctx, b);
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

static void vk_buffer_destroy(void *vctx, struct belt_buffer *b)
{
	struct vk_ctx *ctx = vctx;
	if (!b)
		return;
	vk_buf_free(ctx, b);
	free(b->rp);
	free(b);
}

static int check_range(const struct belt_buffer *b, uint64_t offset,
		       uint64_t size, const char *what, char *err,
		       size_t errsz)
{
	if (!b)
		return belt_errf(err, errsz, "vulkan: %s: NULL buffer", what);
	if (offset > b->size || size > b->size - offset)
		return belt_errf(err, errsz,
				 "vulkan: %s of %" PRIu64
				 " bytes at offset %" PRIu64
				 " is outside the buffer of %" PRIu64 " bytes",
				 what, size, offset, b->size);
	return 0;
}

static int staging(struct vk_ctx *ctx, char *err, size_t errsz)
{
	if (ctx->stage)
		return 0;
	uint64_t size = STAGING_BYTES;
	if (ctx->max_alloc && size > ctx->max_alloc)
		size = ctx->max_alloc / BUF_ALIGN * BUF_ALIGN;
	struct belt_buffer st;
	if (vk_buf_make(ctx, "staging", true, size, &st, err, errsz))
		return -1;
	ctx->stage = st.buf;
	ctx->stage_mem = st.mem;
	ctx->stage_map = st.map;
	ctx->stage_size = size;
	return 0;
}

/* Copy between b and the staging buffer, a piece at a time. */
static int staged(struct vk_ctx *ctx, struct belt_buffer *b, uint64_t offset,
		  void *host, uint64_t size, bool write, char *err,
		  size_t errsz)
{
	if (staging(ctx, err, errsz))
		return -1;
	for (uint64_t done = 0; done < size;) {
		uint64_t n = size - done;
		if (n > ctx->stage_size)
			n = ctx->stage_size;
		if (write)
			memcpy(ctx->stage_map, (const char *)host + done,
			       (size_t)n);
		if (vk_xfer_begin(ctx, err, errsz))
			return -1;
		VkBufferCopy bc = {.srcOffset = write ? 0 : offset + done,
				   .dstOffset = write ? offset + done : 0,
				   .size = n};
		vkCmdCopyBuffer(ctx->xfer, write ? ctx->stage : b->buf,
				write ? b->buf : ctx->stage, 1, &bc);
		if (vk_xfer_end(ctx, err, errsz))
			return -1;
		if (!write)
			memcpy((char *)host + done, ctx->stage_map, (size_t)n);
		done += n;
	}
	return 0;
}

static int vk_buffer_write(void *vctx, struct belt_buffer *b, uint64_t offset,
			   const void *src, uint64_t size, char *err,
			   size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (check_range(b, offset, size, "buffer_write", err, errsz))
		return -1;
	if (!size)
		return 0;
	if (vk_repacked_overlaps(b, offset, size))
		return belt_errf(err, errsz,
				 "vulkan: buffer_write of %" PRIu64
				 " bytes at offset %" PRIu64
				 ": these weights were already converted to "
				 "the GPU layout by table_prepare; write "
				 "weights before preparing a table",
				 size, offset);
	if (b->map) {
		memcpy((char *)b->map + offset, src, (size_t)size);
		return 0;
	}
	return staged(ctx, b, offset, (void *)src, size, true, err, errsz);
}

static int vk_buffer_read(void *vctx, struct belt_buffer *b, uint64_t offset,
			  void *dst, uint64_t size, char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (check_range(b, offset, size, "buffer_read", err, errsz) ||
	    vk_check_messages(ctx, "buffer_read", err, errsz))
		return -1;
	if (!size)
		return 0;
	if (b->map) {
		memcpy(dst, (const char *)b->map + offset, (size_t)size);
		return 0;
	}
	return staged(ctx, b, offset, dst, size, false, err, errsz);
}

/* ---- kernels and pipelines ---- */

static const struct belt_kernel *vk_kernel_find(void *ctx, const char *op,
						const char *variant, int wtype)
{
	(void)ctx;
	if (!op)
		return NULL;
	if (!variant || !*variant)
		variant = "default";
	for (size_t i = 0; i < vk_n_kernels; i++) {
		const struct belt_kernel *k = &vk_kernels[i];
		if (!strcmp(k->op, op) && !strcmp(k->variant, variant) &&
		    (k->wtype == BELT_TYPE_ANY || k->wtype == wtype))
			return k;
	}
	return NULL;
}

/* The set layout and pipeline layout for n command bindings plus meta and
 * work. */
static int layout_for(struct vk_ctx *ctx, int n, char *err, size_t errsz)
{
	if (ctx->pl[n])
		return 0;
	VkDescriptorSetLayoutBinding lb[BELT_MAX_BINDINGS + 2];
	for (int i = 0; i <= n + 1; i++)
		lb[i] = (VkDescriptorSetLayoutBinding){
			.binding = i < n	    ? (uint32_t)i
				   : i == n ? VK_META_BINDING
					    : VK_WORK_BINDING,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	VkDescriptorSetLayoutCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = (uint32_t)n + 2,
		.pBindings = lb,
	};
	VKCHECK(vkCreateDescriptorSetLayout(ctx->dev, &dci, NULL, &ctx->dsl[n]),
		"vkCreateDescriptorSetLayout");
	VkPushConstantRange pcr = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = sizeof(struct vk_pc),
	};
	VkPipelineLayoutCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.setLayoutCount = 1,
		.pSetLayouts = &ctx->dsl[n],
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &pcr,
	};
	VKCHECK(vkCreatePipelineLayout(ctx->dev, &pci, NULL, &ctx->pl[n]),
		"vkCreatePipelineLayout");
	return 0;
}

static int module_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
		      char *err, size_t errsz)
{
	if (layout_for(ctx, n_bind, err, errsz))
		return -1;
	if (ctx->module[sh])
		return 0;
	VkShaderModuleCreateInfo smi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = vk_spirv[sh].size,
		.pCode = vk_spirv[sh].code,
	};
	VKCHECK(vkCreateShaderModule(ctx->dev, &smi, NULL, &ctx->module[sh]),
		"vkCreateShaderModule");
	return 0;
}

/* A compute pipeline of shader sh's module (made) over the layout of
 * n_bind bindings, specialized by spi (or not, NULL). */
static int make_pipeline(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
			 const VkSpecializationInfo *spi, VkPipeline *out,
			 char *err, size_t errsz)
{
	VkComputePipelineCreateInfo cpi = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = ctx->module[sh],
			.pName = "main",
			.pSpecializationInfo = spi,
		},
		.layout = ctx->pl[n_bind],
	};
	VKCHECK(vkCreateComputePipelines(ctx->dev, ctx->cache, 1, &cpi, NULL,
					 out),
		"vkCreateComputePipelines");
	return 0;
}

/* A fused matvec pipeline: shader sh (VK_SH_FMV_*) specialized for flags,
 * segments and k-split (made once, then found in ctx->fpipe). */
static int fused_pipeline(struct vk_ctx *ctx, enum vk_shader sh,
			  uint32_t flags, uint32_t nseg, uint32_t ks,
			  VkPipeline *out, char *err, size_t errsz)
{
	for (uint32_t i = 0; i < ctx->n_fpipe; i++) {
		const struct vk_fpipe *f = &ctx->fpipe[i];
		if (f->sh == (uint32_t)sh && f->flags == flags &&
		    f->nseg == nseg && f->ks == ks) {
			*out = f->pipe;
			return 0;
		}
	}
	if (ctx->n_fpipe == VK_FPIPE_MAX)
		return belt_errf(err, errsz,
				 "vulkan: more than %d fused matvec pipelines",
				 VK_FPIPE_MAX);
	if (module_for(ctx, sh, BELT_MAX_BINDINGS, err, errsz))
		return -1;
	uint32_t data[8] = {flags, nseg, ctx->mv_nr[sh - VK_SH_FMV_F32], ctx->mv_swz,
			    ctx->mv_wg[sh - VK_SH_FMV_F32],
			    ctx->mv_tile[sh - VK_SH_FMV_F32],
			    ctx->mv_unr[sh - VK_SH_FMV_F32], ks};
	VkSpecializationMapEntry me[8];
	for (uint32_t i = 0; i < 8; i++)
		me[i] = (VkSpecializationMapEntry){
			.constantID = i, .offset = 4 * i, .size = 4};
	VkSpecializationInfo spi = {.mapEntryCount = 8,
				    .pMapEntries = me,
				    .dataSize = sizeof data,
				    .pData = data};
	VkPipeline p;
	if (make_pipeline(ctx, sh, BELT_MAX_BINDINGS, &spi, &p, err, errsz))
		return -1;
	ctx->fpipe[ctx->n_fpipe++] = (struct vk_fpipe){
		.sh = sh, .flags = flags, .nseg = nseg, .ks = ks, .pipe = p};
	*out = p;
	return 0;
}

int vk_pipeline_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
			char *err, size_t errsz)
{
	if (ctx->pipe[sh])
		return 0;
	if (module_for(ctx, sh, n_bind, err, errsz))
		return -1;
	return make_pipeline(ctx, sh, n_bind, NULL, &ctx->pipe[sh], err,
			     errsz);
}

/* ---- dependencies ----
 * As the CPU backend: a barrier goes after a command whenever the next one
 * touches what the group since the last barrier wrote, or writes what it
 * read; independent commands (q, k, v matvecs) run without one. */

struct range {
	const struct belt_buffer *buf;
	uint64_t lo, hi;
	bool write;
};

struct group {
	struct range r[GROUP_MAX];
	int n;
};

static bool conflicts(const struct group *g, const struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < g->n; j++)
			if ((r[i].write || g->r[j].write) &&
			    r[i].buf == g->r[j].buf && r[i].lo < g->r[j].hi &&
			    g->r[j].lo < r[i].hi)
				return true;
	return false;
}

/* ---- prepare / release / run ---- */

static void profile_print(const struct plan *pl);

static void plan_free(struct vk_ctx *ctx, struct plan *pl)
{
	if (!pl)
		return;
	vkDeviceWaitIdle(ctx->dev);
	if (pl->qpool) {
		profile_print(pl);
		vkDestroyQueryPool(ctx->dev, pl->qpool, NULL);
	}
	free(pl->qbuf);
	free(pl->ticks);
	free(pl->calls);
	VkCommandBuffer *cbs[] = {&pl->start, &pl->tail, &pl->last};
	for (int i = 0; i < 3; i++)
		if (*cbs[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, cbs[i]);
	for (uint32_t i = 0; i < pl->max_run; i++) {
		if (pl->full && pl->full[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->full[i]);
		if (pl->nohead && pl->nohead[i])
			vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1,
					     &pl->nohead[i]);
	}
	if (pl->dpool)
		vkDestroyDescriptorPool(ctx->dev, pl->dpool, NULL);
	vk_buffer_destroy(ctx, pl->meta);
	vk_buffer_destroy(ctx, pl->work);
	free(pl->full);
	free(pl->nohead);
	free(pl->submit);
	free(pl->cmds);
	free(pl);
}

/* Check one command, resolve its bindings to descriptor ranges, and fill
 * its push constants. */
static int prepare_cmd(struct vk_ctx *ctx, const struct belt_cmd *cmd,
		       uint32_t idx, uint32_t rows, struct vk_cmd *c,
		       struct vk_prep *pr, VkDescriptorBufferInfo *bi,
		       char *err, size_t errsz)
{
	const struct belt_kernel *k = cmd->kernel;
	const char *name = cmd->label ? cmd->label : "?";
	if (!k || k < vk_kernels || k >= vk_kernels + vk_n_kernels)
		return belt_errf(err, errsz,
				 "vulkan: command %u (%s): kernel is not one "
				 "of this backend's",
				 idx, name);
	if (belt_cmd_check(cmd, err, errsz))
		return -1;
	uint32_t cmd_rows = belt_cmd_rows(cmd);
	if (cmd_rows != rows)
		return belt_errf(err, errsz,
				 "%s: %s binds %u rows of activations, the "
				 "table has %u",
				 name, k->op, cmd_rows, rows);
	if (rows > VK_MODE_ROWS_MAX)
		return belt_errf(err, errsz,
				 "%s: a table of %u rows: this backend takes "
				 "up to %u",
				 name, rows, VK_MODE_ROWS_MAX);
	for (int i = 0; i < cmd->n_bind; i++) {
		const struct belt_binding *b = &cmd->bind[i];
		if (!b->buf)
			return belt_errf(err, errsz,
					 "%s: %s binding %d has no buffer",
					 name, k->op, i);
		if (b->offset > b->buf->size ||
		    b->size > b->buf->size - b->offset)
			return belt_errf(err, errsz,
					 "%s: %s binding %d (%" PRIu64
					 " bytes at offset %" PRIu64
					 ") is outside its buffer of %" PRIu64
					 " bytes",
					 name, k->op, i, b->size, b->offset,
					 b->buf->size);
	}
	const struct vk_op *op = k->impl;
	memset(pr, 0, sizeof *pr);
	pr->rows = rows;
	pr->shader = (int)op->shader;
	pr->max_pos = UINT64_MAX;
	for (int i = 0; i < BELT_MAX_BINDINGS; i++)
		pr->esize[i] = 4;
	if (op->prepare(cmd, pr, err, errsz))
		return -1;
	pr->chunk_rows = rows;
	if (rows > 1 && vk_batch_chunk_rows(ctx, cmd, pr, err, errsz))
		return -1;

	/* Bind at the offset rounded down to the device's alignment; the
	 * shader adds the rest, in elements. */
	uint64_t align = ctx->props.limits.minStorageBufferOffsetAlignment;
	uint64_t max_range = ctx->props.limits.maxStorageBufferRange;
	if (!align)
		align = 1;
	const struct belt_op_contract *oc = belt_op_contract(k->op);
	for (int i = 0; i < cmd->n_bind; i++) {
		const struct belt_binding *b = &cmd->bind[i];
		uint64_t at = b->offset / align * align;
		uint64_t delta = b->offset - at;
		if (delta % pr->esize[i])
			return belt_errf(err, errsz,
					 "%s: %s binding %d: offset %" PRIu64
					 " is not a multiple of %u bytes",
					 name, k->op, i, b->offset,
					 pr->esize[i]);
		uint64_t range = delta + b->size;
		/* rows bound a range of them at a time (batch.c) */
		bool split = pr->chunk_rows < rows &&
			     oc->bind[i].kind == BELT_BIND_ROWS;
		if (split && range > max_range)
			range = max_range;
		if (range > max_range)
			return belt_errf(err, errsz,
					 "%s: %s binding %d holds %" PRIu64
					 " bytes, more than this device's "
					 "maxStorageBufferRange (%" PRIu64
					 " bytes)",
					 name, k->op, i, b->size, max_range);
		if (range < 4)
			range = 4; /* never empty; the buffer has >= 256 */
		bi[i] = (VkDescriptorBufferInfo){
			.buffer = b->buf->buf, .offset = at, .range = range};
		c->pc.o[i] = (uint32_t)(delta / pr->esize[i]);
	}
	for (int i = 0; i < BELT_MAX_PARAMS; i++)
		memcpy(&c->pc.p[i], &cmd->param[i], 4);
	memcpy(c->pc.aux, pr->aux, sizeof c->pc.aux);
	c->pc.mode = (uint32_t)cmd->patch;
	if (rows > 1) /* all its rows, from row 0 (pc.t) */
		c->pc.mode |= VK_MODE_BATCHED | rows << VK_MODE_ROWS_SHIFT;

	const uint32_t *maxg = ctx->props.limits.maxComputeWorkGroupCount;
	uint32_t g = pr->groups ? pr->groups : 1;
	c->rows_dim = pr->rows_dim;
	c->gz = 1;
	if (rows > 1 && pr->rows_dim == VK_ROWS_X) {
		/* x: tiles of rows; y: the kernel's groups */
		c->gx = (rows + pr->rows_tile - 1) / pr->rows_tile;
		c->gy = g;
	} else {
		c->gx = g < maxg[0] ? g : maxg[0];
		c->gy = (g + c->gx - 1) / c->gx;
		c->gz = rows;
	}
	if (c->gx > maxg[0] || c->gy > maxg[1] || c->gz > maxg[2])
		return belt_errf(err, errsz,
				 "%s: %s needs %u x %u x %u workgroups, more "
				 "than this device dispatches",
				 name, k->op, c->gx, c->gy, c->gz);
	c->head = cmd->head;
	c->n_bind = cmd->n_bind;
	if (op->wtype != BELT_TYPE_ANY)
		snprintf(c->kind, sizeof c->kind, "%s %s%s",
			 rows > 1 && !strcmp(k->op, "matvec") ? "matmul" : k->op,
			 belt_type_name(op->wtype), c->head ? " head" : "");
	else
		snprintf(c->kind, sizeof c->kind, "%s%s", k->op,
			 c->head ? " head" : "");
	if (vk_pipeline_for(ctx, (enum vk_shader)pr->shader, cmd->n_bind, err,
			    errsz))
		return -1;
	c->pipe = ctx->pipe[pr->shader];
	c->layout = ctx->pl[cmd->n_bind];
	return 0;
}

/* One token slot (a batched table's pass): every command (but the head's
 * for VK_VAR_NOHEAD; the head's for the last row only for VK_VAR_LAST),
 * with barriers where the next command depends on earlier ones. */
int vk_record_pass(struct plan *pl, VkCommandBuffer cb, uint32_t t,
		   enum vk_variant v, uint32_t qbase, char *err, size_t errsz)
{
	bool nohead = v == VK_VAR_NOHEAD;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
	if (pl->qpool) {
		vkCmdResetQueryPool(cb, pl->qpool, qbase, pl->n_cmds + 1);
		vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
				    pl->qpool, qbase);
	}
	VkPipeline bound = VK_NULL_HANDLE;
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_SHADER_READ_BIT |
				 VK_ACCESS_SHADER_WRITE_BIT,
	};
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		struct vk_cmd *c = &pl->cmds[i];
		if (!(nohead && c->head)) {
			if (c->pipe != bound) {
				vkCmdBindPipeline(cb,
						  VK_PIPELINE_BIND_POINT_COMPUTE,
						  c->pipe);
				bound = c->pipe;
			}
			vkCmdBindDescriptorSets(cb,
						VK_PIPELINE_BIND_POINT_COMPUTE,
						c->layout, 0, 1, &c->set, 0,
						NULL);
			struct vk_pc pc = c->pc;
			if (!(pc.mode & VK_MODE_BATCHED))
				pc.t = t; /* else its first row */
			uint32_t gx = c->gx, gz = c->gz;
			if (v == VK_VAR_LAST && c->head) {
				/* one row: n - 1 (shaders/common.glsl) */
				pc.mode |= VK_MODE_LAST;
				if (c->rows_dim == VK_ROWS_X)
					gx = 1;
				else
					gz = 1;
			}
			vkCmdPushConstants(cb, c->layout,
					   VK_SHADER_STAGE_COMPUTE_BIT, 0,
					   sizeof pc, &pc);
			vkCmdDispatch(cb, gx, c->gy, gz);
		}
		/* a skipped command keeps its barrier: the commands around
		 * it were grouped with it, not with each other */
		if (c->barrier)
			vkCmdPipelineBarrier(cb,
					     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					     0, 1, &mb, 0, NULL, 0, NULL);
		if (pl->qpool)
			vkCmdWriteTimestamp(cb,
					    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					    pl->qpool, qbase + i + 1);
	}
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

/* A barrier; with work, first a barrier and clearing the stop word. */
static int record_barrier(VkCommandBuffer cb, struct belt_buffer *work,
			  char *err, size_t errsz)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
	if (work) {
		barrier_all(cb);
		vkCmdFillBuffer(cb, work->buf, 0, 4 * VK_WORK_RESERVED, 0);
	}
	barrier_all(cb);
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

int vk_alloc_cbs(struct vk_ctx *ctx, VkCommandBuffer *out, uint32_t n,
		 char *err, size_t errsz)
{
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = ctx->cmd_pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = n,
	};
	VKCHECK(vkAllocateCommandBuffers(ctx->dev, &cai, out),
		"vkAllocateCommandBuffers");
	return 0;
}

/* ---- fusion ----
 * The core's table is the reference; fuse_find looks for a run of commands
 * starting at i that one matvec_fused dispatch computes the same way, and
 * only where every array it no longer writes is dead: the next command to
 * touch it (cyclically, through the next token, with and without the head
 * commands) overwrites all of it without reading it. */

#define F_NORM 1u   /* shaders/matvec_fused.comp flags */
#define F_ADD 2u
#define F_SWIGLU 4u
#define F_ROPE 8u
#define ROPE_YS_MAX 512 /* matvec_fused.comp YS_MAX */

struct fgroup {
	int norm;      /* rmsnorm folded in, or -1 */
	uint32_t mv[3];
	int nmv;
	int tail;      /* the silu_mul or add folded in, or -1 */
	uint32_t flags;
	int res;       /* ADD: the add's binding that is the residual */
	uint32_t last; /* the last command of the group */
};

static bool is_op(const struct belt_cmd *c, const char *op)
{
	return !strcmp(c->kernel->op, op);
}

static bool same_bind(const struct belt_binding *a, const struct belt_binding *b)
{
	return a->buf == b->buf && a->offset == b->offset && a->size == b->size;
}

static bool bind_overlap(const struct belt_binding *a,
			 const struct belt_binding *b)
{
	return a->size && b->size && a->buf == b->buf &&
	       a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

/* What a command reads (bindings mask) and which binding it overwrites
 * entirely (its first fw_bytes), by op; unknown ops read everything. */
static void op_access(const struct belt_cmd *c, uint8_t *reads, int *fw,
		      uint64_t *fw_bytes)
{
	const char *op = c->kernel->op;
	*fw = -1;
	*fw_bytes = 0;
	*reads = 0xff;
	if (!strcmp(op, "embed") || !strcmp(op, "rmsnorm") ||
	    !strcmp(op, "add") || !strcmp(op, "silu_mul")) {
		*reads = 3;
		*fw = 2;
		*fw_bytes = (uint64_t)c->param[0].i * 4;
	} else if (!strcmp(op, "matvec")) {
		*reads = 3;
		*fw = 2;
		*fw_bytes = (uint64_t)c->param[1].i * 4;
	} else if (!strcmp(op, "attention")) {
		*reads = 0x17;
		*fw = 3;
		*fw_bytes = (uint64_t)c->param[0].i * c->param[2].i * 4;
	} else if (!strcmp(op, "rope_kv")) {
		*reads = 7;
	} else if (!strcmp(op, "argmax")) {
		*reads = 1;
	}
}

/* Is [lo, hi) of buf dead after command `last` (the group starts at
 * `first`)? skip_head: as in the runs that leave out the head. */
static bool dead_scan(const struct belt_table *t, const uint8_t *writes,
		      uint32_t first, uint32_t last,
		      const struct belt_buffer *buf, uint64_t lo, uint64_t hi,
		      bool skip_head)
{
	uint32_t n = t->n_cmds;
	for (uint32_t s = 1; s < n; s++) {
		uint32_t j = (last + s) % n;
		if (j == first)
			return false;
		const struct belt_cmd *c = &t->cmds[j];
		if (skip_head && c->head)
			continue;
		uint8_t reads;
		int fw;
		uint64_t fwb;
		op_access(c, &reads, &fw, &fwb);
		bool touch_w = false;
		for (int b = 0; b < c->n_bind; b++) {
			const struct belt_binding *bb = &c->bind[b];
			if (bb->buf != buf || !bb->size ||
			    !(bb->offset < hi && lo < bb->offset + bb->size))
				continue;
			if (reads & (1u << b))
				return false;
			if (writes[j] & (1u << b))
				touch_w = true;
		}
		if (fw >= 0 && c->bind[fw].buf == buf &&
		    c->bind[fw].offset <= lo && c->bind[fw].offset + fwb >= hi)
			return true;
		if (touch_w)
			return false; /* a partial write: keep it simple */
	}
	return false;
}

static bool dead_after(const struct belt_table *t, const uint8_t *writes,
		       uint32_t first, uint32_t last,
		       const struct belt_binding *b, uint64_t bytes)
{
	if (!b->buf || b->buf->io)
		return false;
	uint64_t lo = b->offset, hi = b->offset + bytes;
	return dead_scan(t, writes, first, last, b->buf, lo, hi, false) &&
	       dead_scan(t, writes, first, last, b->buf, lo, hi, true);
}

/* The fused shader's loads: k a multiple of 8; 16-byte W rows. */
/* Whether matvec_fused can compute m: 16-byte loads of every row (and
 * Q8_0/Q4_0 weights in the GPU layout, rp). */
static bool fusable_matvec(const struct belt_cmd *m, const struct vk_cmd *oc,
			   bool rp)
{
	const struct vk_op *op = m->kernel->impl;
	int k = m->param[0].i;
	if (k % 8)
		return false;
	switch (op->wtype) {
	case BELT_TYPE_F32: return oc->pc.o[0] % 4 == 0;
	case BELT_TYPE_F16:
	case BELT_TYPE_BF16: return oc->pc.o[0] % 8 == 0;
	case BELT_TYPE_Q8_0:
	case BELT_TYPE_Q4_0: return rp;
	default: return false;
	}
}

/* matvec_fused's shader for a weight type */
static enum vk_shader fmv_shader(const struct vk_ctx *ctx, int wtype)
{
	switch (wtype) {
	case BELT_TYPE_F32: return VK_SH_FMV_F32;
	case BELT_TYPE_F16: return VK_SH_FMV_F16;
	case BELT_TYPE_BF16: return VK_SH_FMV_BF16;
	case BELT_TYPE_Q8_0:
		return ctx->q8x & VK_Q8X_Q8_0 ? VK_SH_FMV_Q8_0_XQ : VK_SH_FMV_Q8_0;
	default:
		return ctx->q8x & VK_Q8X_Q4_0 ? VK_SH_FMV_Q4_0_XQ : VK_SH_FMV_Q4_0;
	}
}

/* Subgroups sharing each row (matvec_fused KS) for a fused matvec of
 * shader sh over rows of k, and so its rows per workgroup. */
#define KP_MAX 256 /* matvec_fused.comp */
static uint32_t group_ks(const struct vk_ctx *ctx, enum vk_shader sh, int k)
{
	uint32_t ti = sh - VK_SH_FMV_F32;
	uint32_t nsg = ctx->mv_wg[ti] / ctx->subgroup;
	uint32_t ks = ctx->mv_ks[ti];
	if (ks == 1 || (uint32_t)k < ctx->mv_ks_k[ti] || nsg % ks ||
	    ctx->mv_nr[ti] * nsg > KP_MAX)
		return 1;
	return ks;
}

static uint32_t group_rpw(const struct vk_ctx *ctx, enum vk_shader sh, int k)
{
	return ctx->mv_rpw[sh - VK_SH_FMV_F32] / group_ks(ctx, sh, k);
}

/* The bindings a fused group writes: y of each matvec, or the tail's. */
static int group_outputs(const struct belt_table *t, const struct fgroup *g,
			 const struct belt_binding **out)
{
	const struct belt_cmd *C = t->cmds;
	int n = 0;
	if (g->flags & F_SWIGLU) {
		out[n++] = &C[g->tail].bind[2];
	} else if (g->flags & F_ADD) {
		out[n++] = &C[g->tail].bind[g->res];
	} else if (g->flags & F_ROPE) {
		out[n++] = &C[g->tail].bind[0]; /* q, rotated */
		out[n++] = &C[g->tail].bind[3]; /* k cache */
		out[n++] = &C[g->tail].bind[4]; /* v cache */
	} else {
		for (int s = 0; s < g->nmv; s++)
			out[n++] = &C[g->mv[s]].bind[2];
	}
	return n;
}

/* Whether rope_kv r rotates and stores what the matvecs q, k, v of group
 * g wrote, so that matvec_fused can do it in its epilogue: pairs of rows
 * in one workgroup (rpw rows, even, starting at even rows), the k and v
 * it leaves unwritten dead after it. */
static bool rope_fusable(const struct belt_table *t, const uint8_t *writes,
			 uint32_t first, const struct fgroup *g, uint32_t r,
			 uint32_t rpw)
{
	const struct belt_cmd *C = t->cmds, *rc = &C[r];
	const struct belt_cmd *q = &C[g->mv[0]], *k = &C[g->mv[1]], *v = &C[g->mv[2]];
	int nh = rc->param[0].i, nkv = rc->param[1].i, hd = rc->param[2].i;
	uint64_t kv_bytes = (uint64_t)nkv * hd * 4;
	return rpw % 2 == 0 && rpw <= ROPE_YS_MAX && hd % 2 == 0 &&
	       same_bind(&rc->bind[0], &q->bind[2]) &&
	       same_bind(&rc->bind[1], &k->bind[2]) &&
	       same_bind(&rc->bind[2], &v->bind[2]) &&
	       q->param[1].i == nh * hd && k->param[1].i == nkv * hd &&
	       v->param[1].i == nkv * hd &&
	       dead_after(t, writes, first, r, &rc->bind[1], kv_bytes) &&
	       dead_after(t, writes, first, r, &rc->bind[2], kv_bytes);
}

static bool fuse_find(const struct vk_ctx *ctx, const struct belt_table *t,
		      const struct vk_cmd *oc, const bool *rp,
		      const uint8_t *writes, uint32_t i, struct fgroup *g)
{
	const struct belt_cmd *C = t->cmds;
	uint32_t n = t->n_cmds, j = i;
	memset(g, 0, sizeof *g);
	g->norm = -1;
	g->tail = -1;
	bool head = C[i].head;
	/* not for the head: its many rows (vocab) would each reread x and w
	 * for one dispatch saved per token (measured on the H100 with int8
	 * x: 1B Q4_0 1233 -> 1235 tokens/s, 8B Q4_0 359.6 -> 360.2, 1B F16
	 * 722.6 -> 718.2; not worth it) */
	if (is_op(&C[i], "rmsnorm") && !head) {
		g->norm = (int)i;
		j = i + 1;
	}
	const struct belt_cmd *first = NULL;
	for (; j < n && g->nmv < 3 && is_op(&C[j], "matvec"); j++) {
		const struct belt_cmd *m = &C[j];
		if (m->head != head || !fusable_matvec(m, &oc[j], rp[j]))
			break;
		if (!first) {
			if (g->norm >= 0 &&
			    (!same_bind(&m->bind[1], &C[i].bind[2]) ||
			     m->param[0].i != C[i].param[0].i))
				break;
			first = m;
		} else if (!same_bind(&m->bind[1], &first->bind[1]) ||
			   m->kernel != first->kernel ||
			   m->param[0].i != first->param[0].i) {
			break;
		}
		g->mv[g->nmv++] = j;
	}
	if (!g->nmv)
		return false;
	g->last = g->mv[g->nmv - 1];
	const struct belt_cmd *m0 = &C[g->mv[0]];
	if (g->nmv == 2 && j < n && is_op(&C[j], "silu_mul") &&
	    C[j].head == head) {
		const struct belt_cmd *sm = &C[j], *m1 = &C[g->mv[1]];
		uint64_t bytes = (uint64_t)sm->param[0].i * 4;
		if (same_bind(&sm->bind[0], &m0->bind[2]) &&
		    same_bind(&sm->bind[1], &m1->bind[2]) &&
		    sm->param[0].i == m0->param[1].i &&
		    sm->param[0].i == m1->param[1].i &&
		    dead_after(t, writes, i, j, &sm->bind[1], bytes) &&
		    (same_bind(&sm->bind[2], &sm->bind[0]) ||
		     dead_after(t, writes, i, j, &sm->bind[0], bytes))) {
			g->tail = (int)j;
			g->flags |= F_SWIGLU;
			g->last = j;
		}
	} else if (g->nmv == 3 && j < n && is_op(&C[j], "rope_kv") &&
		   C[j].head == head &&
		   rope_fusable(t, writes, i, g, j,
				group_rpw(ctx,
					  fmv_shader(ctx, ((const struct vk_op *)m0->kernel->impl)->wtype),
					  m0->param[0].i))) {
		g->tail = (int)j;
		g->flags |= F_ROPE;
		g->last = j;
	} else if (g->nmv == 1 && j < n && is_op(&C[j], "add") &&
		   C[j].head == head) {
		const struct belt_cmd *a = &C[j];
		const struct belt_binding *y = &m0->bind[2];
		int r = same_bind(&a->bind[1], y)   ? 0
			: same_bind(&a->bind[0], y) ? 1
						    : -1;
		if (r >= 0 && same_bind(&a->bind[2], &a->bind[r]) &&
		    !bind_overlap(&a->bind[r], y) &&
		    a->param[0].i == m0->param[1].i &&
		    dead_after(t, writes, i, j, y,
			       (uint64_t)a->param[0].i * 4)) {
			g->tail = (int)j;
			g->flags |= F_ADD;
			g->res = r;
			g->last = j;
		}
	}
	/* what the fused dispatch writes never overlaps what it reads */
	const struct belt_binding *in[6], *out[3];
	int nin = 0, nout = group_outputs(t, g, out);
	in[nin++] = &m0->bind[1];
	for (int s = 0; s < g->nmv; s++)
		in[nin++] = &C[g->mv[s]].bind[0];
	if (g->norm >= 0) {
		in[nin++] = &C[i].bind[0];
		in[nin++] = &C[i].bind[1];
	}
	for (int a = 0; a < nout; a++) {
		for (int b = 0; b < nin; b++)
			if (bind_overlap(out[a], in[b]))
				return false;
		for (int b = a + 1; b < nout; b++)
			if (bind_overlap(out[a], out[b]))
				return false;
	}
	if (g->norm >= 0) {
		/* its output must be dead after the group; else the caller
		 * keeps the rmsnorm and tries again from the matvecs */
		if (!dead_after(t, writes, i, g->last, &C[i].bind[2],
				(uint64_t)C[i].param[0].i * 4))
			return false;
		g->flags |= F_NORM;
	}
	return g->flags || g->nmv > 1;
}

/* The fused command for group g: descriptors from the originals'. */
static int fuse_make(struct vk_ctx *ctx, const struct belt_table *t,
		     const struct vk_cmd *oc,
		     VkDescriptorBufferInfo (*obi)[BELT_MAX_BINDINGS + 2],
		     const struct fgroup *g, struct vk_cmd *c,
		     VkDescriptorBufferInfo *bi, char *err, size_t errsz)
{
	const struct belt_cmd *C = t->cmds;
	uint32_t m0 = g->mv[0];
	const struct vk_op *op = C[m0].kernel->impl;
	enum vk_shader sh = fmv_shader(ctx, op->wtype);
	memset(c, 0, sizeof *c);
	if (g->norm >= 0) {
		bi[0] = obi[g->norm][0];
		c->pc.o[0] = oc[g->norm].pc.o[0];
		bi[1] = obi[g->norm][1];
		c->pc.o[1] = oc[g->norm].pc.o[1];
		memcpy(&c->pc.p[5], &C[g->norm].param[1], 4);
	} else {
		bi[0] = obi[m0][1];
		c->pc.o[0] = oc[m0].pc.o[1];
		bi[1] = bi[0];
	}
	uint32_t ks = group_ks(ctx, sh, C[m0].param[0].i);
	uint32_t groups = 0, rpw = group_rpw(ctx, sh, C[m0].param[0].i);
	for (int s = 0; s < 3; s++) {
		uint32_t mi = g->mv[s < g->nmv ? s : 0];
		bi[2 + s] = obi[mi][0];
		c->pc.o[2 + s] = s < g->nmv ? oc[mi].pc.o[0] : 0;
		bi[5 + s] = obi[mi][2];
		c->pc.o[5 + s] = s < g->nmv ? oc[mi].pc.o[2] : 0;
		c->pc.p[2 + s] = s < g->nmv ? (uint32_t)C[mi].param[1].i : 0;
		/* Q8_0/Q4_0: the scales follow the range's quants */
		uint64_t bb = belt_type_block_bytes(op->wtype);
		if (s < g->nmv && (op->wtype == BELT_TYPE_Q8_0 ||
				   op->wtype == BELT_TYPE_Q4_0))
			c->pc.p[7 + s] = c->pc.o[2 + s] +
					 (uint32_t)(C[mi].bind[0].size / bb *
						    (bb - 2) / 2);
		if (s < g->nmv)
			groups += ((uint32_t)C[mi].param[1].i + rpw - 1) / rpw;
	}
	if (g->flags & F_SWIGLU) {
		bi[5] = bi[6] = bi[7] = obi[g->tail][2];
		c->pc.o[5] = oc[g->tail].pc.o[2];
		groups = ((uint32_t)C[m0].param[1].i + rpw - 1) / rpw;
	} else if (g->flags & F_ADD) {
		bi[5] = bi[6] = bi[7] = obi[g->tail][g->res];
		c->pc.o[5] = oc[g->tail].pc.o[g->res];
	} else if (g->flags & F_ROPE) {
		/* q in place; k and v into the caches (rope_kv's 3 and 4) */
		const struct belt_cmd *r = &C[g->tail];
		bi[5] = obi[g->tail][0];
		c->pc.o[5] = oc[g->tail].pc.o[0];
		bi[6] = obi[g->tail][3];
		c->pc.o[6] = oc[g->tail].pc.o[3];
		bi[7] = obi[g->tail][4];
		c->pc.o[7] = oc[g->tail].pc.o[4];
		c->pc.p[10] = (uint32_t)r->param[2].i;
		c->pc.p[11] = (uint32_t)r->param[3].i;
		c->pc.p[12] = (uint32_t)(r->param[1].i * r->param[2].i);
		c->pc.p[13] = oc[g->tail].pc.aux[0]; /* its freqs in meta */
		/* its position and cache slot from its patch */
		c->pc.mode = (uint32_t)r->patch << VK_MODE_PATCH2_SHIFT;
	}
	c->pc.p[0] = (uint32_t)C[m0].param[0].i;
	c->pc.p[1] = (uint32_t)g->nmv;
	c->pc.p[6] = g->flags;
	c->pc.aux[0] = rpw;
	uint32_t maxx = ctx->props.limits.maxComputeWorkGroupCount[0];
	c->gx = groups < maxx ? groups : maxx;
	c->gy = (groups + c->gx - 1) / c->gx;
	c->gz = 1;
	c->head = C[m0].head;
	c->n_bind = BELT_MAX_BINDINGS;
	const char *what = g->flags & F_SWIGLU ? "swiglu"
			   : g->flags & F_ADD	? "matvec+add"
			   : g->nmv == 3	? "matvec3"
			   : g->nmv == 2	? "matvec2"
						: "matvec";
	snprintf(c->kind, sizeof c->kind, "%s%s%s %s%s",
		 g->flags & F_NORM ? "norm+" : "", what,
		 g->flags & F_ROPE ? "+rope" : "",
		 belt_type_name(op->wtype), c->head ? " head" : "");
	if (fused_pipeline(ctx, sh, g->flags, (uint32_t)g->nmv, ks, &c->pipe,
			   err, errsz))
		return -1;
	c->layout = ctx->pl[BELT_MAX_BINDINGS];
	return 0;
}

static bool fuse_enabled(void)
{
	const char *e = getenv("BELT_VK_FUSE");
	return !(e && !strcmp(e, "0"));
}

static bool profile_enabled(const struct vk_ctx *ctx)
{
	const char *e = getenv("BELT_VK_PROFILE");
	return ctx->profile || (e && *e && strcmp(e, "0"));
}

/* ---- profile ---- */

static void profile_print(const struct plan *pl)
{
	if (!pl->runs)
		return;
	char (*kind)[40] = calloc(pl->n_cmds, sizeof *kind);
	uint64_t *tk = calloc(pl->n_cmds, sizeof *tk);
	uint64_t *cl = calloc(pl->n_cmds, sizeof *cl);
	uint32_t nk = 0;
	if (!kind || !tk || !cl)
		goto out;
	uint64_t total = 0;
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		uint32_t k = 0;
		while (k < nk && strcmp(kind[k], pl->cmds[i].kind))
			k++;
		if (k == nk)
			memcpy(kind[nk++], pl->cmds[i].kind, sizeof kind[0]);
		tk[k] += pl->ticks[i];
		cl[k] += pl->calls[i];
		total += pl->ticks[i];
	}
	/* by time, largest first */
	for (uint32_t a = 0; a < nk; a++)
		for (uint32_t b = a + 1; b < nk; b++)
			if (tk[b] > tk[a]) {
				char kk[40];
				memcpy(kk, kind[a], 40);
				memcpy(kind[a], kind[b], 40);
				memcpy(kind[b], kk, 40);
				uint64_t x = tk[a];
				tk[a] = tk[b];
				tk[b] = x;
				x = cl[a];
				cl[a] = cl[b];
				cl[b] = x;
			}
	double tok = pl->tokens ? (double)pl->tokens : 1;
	double us = pl->ns_per_tick / 1000.0;
	fprintf(stderr,
		"belt vulkan profile: %" PRIu64 " runs, %" PRIu64
		" tokens, %u dispatches per token (%u commands in the core's "
		"table)\n",
		pl->runs, pl->tokens, pl->n_cmds, pl->n_orig);
	fprintf(stderr, "%-32s %10s %12s %10s %6s\n", "kind", "calls",
		"total us", "us/token", "%");
	for (uint32_t k = 0; k < nk; k++)
		fprintf(stderr, "%-32s %10" PRIu64 " %12.1f %10.2f %5.1f%%\n",
			kind[k], cl[k], tk[k] * us, tk[k] * us / tok,
			total ? 100.0 * (double)tk[k] / (double)total : 0.0);
	fprintf(stderr,
		"GPU time per token %.2f us (dispatches %.2f us, slot total "
		"%.2f us); host wall per run %.1f us, per token %.2f us; "
		"host submission per run (meta, command list, vkQueueSubmit) "
		"%.1f us\n",
		total * us / tok, total * us / tok, pl->slot_ticks * us / tok,
		pl->wall_ns / 1000.0 / (double)pl->runs,
		pl->wall_ns / 1000.0 / tok,
		pl->submit_ns / 1000.0 / (double)pl->runs);
out:
	free(kind);
	free(tk);
	free(cl);
}

static int profile_setup(struct vk_ctx *ctx, struct plan *pl, char *err,
			 size_t errsz)
{
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, NULL);
	VkQueueFamilyProperties qf[32];
	if (nq > 32)
		nq = 32;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, qf);
	uint32_t bits = ctx->qfamily < nq ? qf[ctx->qfamily].timestampValidBits
					  : 0;
	if (!bits || !(ctx->props.limits.timestampComputeAndGraphics ||
		       ctx->props.limits.timestampPeriod > 0)) {
		fprintf(stderr, "belt vulkan: BELT_VK_PROFILE: the queue has no "
				"timestamps; not profiling\n");
		return 0;
	}
	pl->ts_mask = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	pl->ns_per_tick = ctx->props.limits.timestampPeriod;
	pl->qbuf = calloc(pl->n_cmds + 1, sizeof *pl->qbuf);
	pl->ticks = calloc(pl->n_cmds + 1, sizeof *pl->ticks);
	pl->calls = calloc(pl->n_cmds + 1, sizeof *pl->calls);
	if (!pl->qbuf || !pl->ticks || !pl->calls)
		return belt_errf(err, errsz, "vulkan: out of memory");
	VkQueryPoolCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
		.queryType = VK_QUERY_TYPE_TIMESTAMP,
		/* slots twice, or a batched table's three variants */
		.queryCount = (pl->rows > 1 ? 3 : 2 * pl->max_run) * (pl->n_cmds + 1),
	};
	VKCHECK(vkCreateQueryPool(ctx->dev, &qci, NULL, &pl->qpool),
		"vkCreateQueryPool");
	return 0;
}

void vk_profile_add(struct vk_ctx *ctx, struct plan *pl, uint32_t qbase,
		    bool nohead)
{
	uint32_t nq = pl->n_cmds + 1;
	if (vkGetQueryPoolResults(ctx->dev, pl->qpool, qbase, nq,
				  nq * sizeof *pl->qbuf, pl->qbuf,
				  sizeof *pl->qbuf,
				  VK_QUERY_RESULT_64_BIT |
					  VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
		return;
	for (uint32_t i = 0; i < pl->n_cmds; i++) {
		if (nohead && pl->cmds[i].head)
			continue;
		pl->ticks[i] += (pl->qbuf[i + 1] - pl->qbuf[i]) & pl->ts_mask;
		pl->calls[i]++;
	}
	pl->slot_ticks += (pl->qbuf[nq - 1] - pl->qbuf[0]) & pl->ts_mask;
}

/* After a run of a one-row table: add the slots' timestamps up. */
static void profile_collect(struct vk_ctx *ctx, struct plan *pl, uint32_t n)
{
	uint32_t nq = pl->n_cmds + 1;
	for (uint32_t s = 0; s < n; s++) {
		bool nohead = pl->submit[s + 1] != pl->full[s];
		vk_profile_add(ctx, pl, ((nohead ? pl->max_run : 0) + s) * nq,
			       nohead);
	}
	pl->runs++;
	pl->tokens += n;
}

/* ranges for the barrier analysis: a command's bindings */
static int ranges_of(const struct belt_cmd *cmd, uint8_t writes,
		     struct range *r)
{
	int nr = 0;
	for (int b = 0; b < cmd->n_bind; b++) {
		if (!cmd->bind[b].size)
			continue;
		r[nr++] = (struct range){
			.buf = cmd->bind[b].buf,
			.lo = cmd->bind[b].offset,
			.hi = cmd->bind[b].offset + cmd->bind[b].size,
			.write = writes & (1u << b)};
	}
	return nr;
}

/* Q8_0/Q4_0 weights of a matvec or embed go to the GPU layout (repack.c)
 * where 16-byte loads of them are aligned; *rp says they did. Both tables
 * of a session read the same weights and decide alike, so a batched
 * table's matrix product reads the layout the one-row table's matvecs
 * do, whichever was prepared first. */
static int convert_weights(struct vk_ctx *ctx, const struct belt_cmd *cmd,
			   struct vk_cmd *c, bool *rp, char *err, size_t errsz)
{
	const struct vk_op *op = cmd->kernel->impl;
	bool embed = is_op(cmd, "embed");
	*rp = false;
	if ((op->wtype != BELT_TYPE_Q8_0 && op->wtype != BELT_TYPE_Q4_0) ||
	    (!embed && !is_op(cmd, "matvec")))
		return 0;
	const struct belt_binding *w = &cmd->bind[0];
	uint64_t bb = belt_type_block_bytes(op->wtype);
	if (c->pc.o[0] % 8 || w->size % bb || !w->size) {
		/* the GGUF layout, read by the plain kernels */
		if (vk_repacked_overlaps(w->buf, w->offset, w->size))
			return belt_errf(err, errsz,
					 "%s: %s weights overlap weights "
					 "converted to the GPU layout",
					 cmd->label ? cmd->label : "?",
					 cmd->kernel->op);
		return 0;
	}
	if (vk_repack(ctx, w->buf, w->offset, w->size, op->wtype, err, errsz))
		return -1;
	*rp = true;
	if (!embed && (c->pc.mode & VK_MODE_BATCHED)) {
		/* the tiled product, on the converted layout */
		enum vk_shader sh = vk_matmul_shader(op->wtype, true);
		if (vk_pipeline_for(ctx, sh, cmd->n_bind, err, errsz))
			return -1;
		c->pipe = ctx->pipe[sh];
		c->pc.aux[1] = (uint32_t)(w->size / bb * (bb - 2) / 2);
	} else if (embed) {
		enum vk_shader sh = op->wtype == BELT_TYPE_Q8_0
					    ? VK_SH_EMBED_Q8_0R
					    : VK_SH_EMBED_Q4_0R;
		if (vk_pipeline_for(ctx, sh, cmd->n_bind, err, errsz))
			return -1;
		c->pipe = ctx->pipe[sh];
		c->pc.aux[1] = (uint32_t)(w->size / bb * (bb - 2) / 2);
	}
	return 0;
}

/* The sampler's commands before the argmax of the same logits, fused into
 * one dispatch (the logits keep their values):
 *  - sample_threshold, sample_gumbel (with the threshold), argmax:
 *    sample_threshold.comp -DARGMAX, bindings logits, scratch, token ids;
 *  - sample_gumbel, argmax: argmax.comp -DGUMBEL (the noise added as the
 *    logits are read), bindings logits, token ids, scratch.
 * Fills c, its descriptor infos and ranges and *used (commands taken);
 * false if none starts at i; *failed (with err) if one does but has no
 * pipeline. */
static bool sample_fuse(struct vk_ctx *ctx, const struct belt_table *t,
			const struct vk_cmd *oc,
			VkDescriptorBufferInfo (*obi)[BELT_MAX_BINDINGS + 2],
			uint32_t i, struct vk_cmd *c, VkDescriptorBufferInfo *bi,
			struct range *r, int *nr, uint32_t *used, bool *failed,
			char *err, size_t errsz)
{
	*failed = false;
	const struct belt_cmd *cm = t->cmds;
	uint32_t gi = i, n = t->n_cmds;
	bool thr = i + 2 < n && is_op(&cm[i], "sample_threshold");
	if (thr)
		gi = i + 1;
	if (gi + 1 >= n || !is_op(&cm[gi], "sample_gumbel") ||
	    !is_op(&cm[gi + 1], "argmax") ||
	    !same_bind(&cm[gi].bind[0], &cm[gi + 1].bind[0]) ||
	    cm[gi].head != cm[gi + 1].head)
		return false;
	if (thr && (!same_bind(&cm[i].bind[0], &cm[gi].bind[0]) ||
		    !same_bind(&cm[i].bind[1], &cm[gi].bind[1]) ||
		    cm[gi].param[4].i == 0 || cm[i].head != cm[gi].head))
		return false;
	enum vk_shader sh = thr ? VK_SH_SAMPLE_TGA : VK_SH_ARGMAX_GUMBEL;
	if (vk_pipeline_for(ctx, sh, 3, err, errsz)) {
		*failed = true;
		return true;
	}
	const struct belt_cmd *g = &cm[gi], *a = &cm[gi + 1];
	/* the argmax's (ids, end-of-generation params p7..) or the
	 * threshold's (grid, work) command, with the others' params */
	*c = thr ? oc[i] : oc[gi + 1];
	c->pipe = ctx->pipe[sh];
	c->layout = ctx->pl[3];
	c->n_bind = 3;
	/* the argmax's patch gives the output slot, the gumbel's the
	 * position of the noise */
	c->pc.mode = (uint32_t)a->patch |
		     (uint32_t)g->patch << VK_MODE_PATCH2_SHIFT;
	memcpy(c->pc.p + 7, oc[gi + 1].pc.p + 7, 9 * sizeof c->pc.p[0]);
	if (thr) {
		memcpy(c->pc.p + 4, oc[gi].pc.p + 1, 3 * sizeof c->pc.p[0]);
		c->pc.o[2] = oc[gi + 1].pc.o[1];
		bi[0] = obi[i][0];
		bi[1] = obi[i][1];
		bi[2] = obi[gi + 1][1];
	} else {
		memcpy(c->pc.p, oc[gi].pc.p, 5 * sizeof c->pc.p[0]);
		c->pc.o[2] = oc[gi].pc.o[1];
		bi[0] = obi[gi + 1][0];
		bi[1] = obi[gi + 1][1];
		bi[2] = obi[gi][1];
	}
	snprintf(c->kind, sizeof c->kind, "%sgumbel+argmax%s",
		 thr ? "threshold+" : "", c->head ? " head" : "");
	*nr = 0;
	r[(*nr)++] = (struct range){.buf = a->bind[0].buf, .lo = a->bind[0].offset,
				    .hi = a->bind[0].offset + a->bind[0].size};
	r[(*nr)++] = (struct range){.buf = g->bind[1].buf, .lo = g->bind[1].offset,
				    .hi = g->bind[1].offset + g->bind[1].size,
				    .write = thr};
	r[(*nr)++] = (struct range){.buf = a->bind[1].buf, .lo = a->bind[1].offset,
				    .hi = a->bind[1].offset + a->bind[1].size,
				    .write = true};
	*used = gi + 2 - i;
	return true;
}

/* Room for n dispatches in pl->cmds and the arrays beside it. */
static int grow_dispatches(struct plan *pl,
			   VkDescriptorBufferInfo (**bis)[BELT_MAX_BINDINGS + 2],
			   struct range (**rs)[GROUP_MAX], int **nrs, uint32_t n)
{
	struct vk_cmd *c = realloc(pl->cmds, n * sizeof *c);
	if (c)
		pl->cmds = c;
	VkDescriptorBufferInfo(*b)[BELT_MAX_BINDINGS + 2] = realloc(*bis, n * sizeof **bis);
	if (b)
		*bis = b;
	struct range(*r)[GROUP_MAX] = realloc(*rs, n * sizeof **rs);
	if (r)
		*rs = r;
	int *nr = realloc(*nrs, n * sizeof **nrs);
	if (nr)
		*nrs = nr;
	return c && b && r && nr ? 0 : -1;
}

static int prepare_plan(struct vk_ctx *ctx, struct belt_table *t,
			struct plan *pl, char *err, size_t errsz)
{
	uint32_t n = t->n_cmds;
	pl->rows = t->rows > 1 ? t->rows : 1;
	bool batched = pl->rows > 1;
	/* a batched table runs one pass per table_run */
	pl->max_run = batched ? 1 : t->max_run ? t->max_run : DEFAULT_MAX_RUN;
	pl->max_pos = t->n_ctx ? t->n_ctx : UINT64_MAX;
	pl->n_orig = n;
	pl->cmds = calloc(n ? n : 1, sizeof *pl->cmds);
	struct vk_cmd *oc = calloc(n ? n : 1, sizeof *oc);
	struct vk_prep *preps = calloc(n ? n : 1, sizeof *preps);
	uint8_t *writes = calloc(n ? n : 1, 1);
	bool *rp = calloc(n ? n : 1, sizeof *rp);
	VkDescriptorBufferInfo(*obi)[BELT_MAX_BINDINGS + 2] =
		calloc(n ? n : 1, sizeof *obi);
	VkDescriptorBufferInfo(*bis)[BELT_MAX_BINDINGS + 2] =
		calloc(n ? n : 1, sizeof *bis);
	struct range(*rs)[GROUP_MAX] = calloc(n ? n : 1, sizeof *rs);
	int *nrs = calloc(n ? n : 1, sizeof *nrs);
	struct group *g = calloc(1, sizeof *g);
	pl->full = calloc(pl->max_run, sizeof *pl->full);
	pl->nohead = calloc(pl->max_run, sizeof *pl->nohead);
	pl->submit = calloc(pl->max_run + 2, sizeof *pl->submit);
	int rc = -1;
	if (!pl->cmds || !oc || !preps || !writes || !rp || !obi || !bis || !rs ||
	    !nrs || !g || !pl->full || !pl->nohead || !pl->submit) {
		belt_errf(err, errsz,
			  "vulkan: table_prepare: out of memory for %u "
			  "commands",
			  n);
		goto out;
	}
	/* meta after its header: a batched table's rows (tree runs), then
	 * rope frequencies */
	uint64_t meta_floats = batched ? (uint64_t)pl->rows * VK_META_ROW_WORDS : 0;
	uint64_t work_words = VK_WORK_RESERVED;
	for (uint32_t i = 0; i < n; i++) {
		if (prepare_cmd(ctx, &t->cmds[i], i, pl->rows, &oc[i], &preps[i],
				obi[i], err, errsz))
			goto out;
		if (preps[i].max_pos < pl->max_pos)
			pl->max_pos = preps[i].max_pos;
		if (preps[i].n_freq) {
			oc[i].pc.aux[0] = (uint32_t)meta_floats;
			meta_floats += preps[i].n_freq;
		}
		if (preps[i].work_words) {
			/* 16-byte aligned, for vec4 access */
			oc[i].pc.aux[2] = (uint32_t)work_words;
			work_words += (preps[i].work_words + 3) / 4 * 4;
			if (work_words > UINT32_MAX / 4) {
				belt_errf(err, errsz,
					  "vulkan: table_prepare: the "
					  "commands' work areas exceed 4 GiB");
				goto out;
			}
		}
		writes[i] = belt_op_writes(belt_op_contract(t->cmds[i].kernel->op));
		if (convert_weights(ctx, &t->cmds[i], &oc[i], &rp[i], err,
				    errsz))
			goto out;
		if (is_op(&t->cmds[i], "argmax")) {
			/* the ids that end a run early (shaders/argmax.comp) */
			uint32_t ne = t->n_eog < 8 ? t->n_eog : 8;
			oc[i].pc.p[7] = ne;
			for (uint32_t e = 0; e < ne; e++)
				oc[i].pc.p[8 + e] = (uint32_t)t->eog[e];
		}
	}

	/* a batched table's commands split over ranges of rows (batch.c):
	 * room for their dispatches */
	uint32_t n_disp = n;
	for (uint32_t i = 0; batched && i < n; i++)
		n_disp += (pl->rows - 1) / preps[i].chunk_rows;
	if (n_disp > n && grow_dispatches(pl, &bis, &rs, &nrs, n_disp)) {
		belt_errf(err, errsz, "vulkan: table_prepare: out of memory");
		goto out;
	}

	/* the commands to record: fused groups, or the core's commands (a
	 * batched table's as they are) */
	bool fuse = fuse_enabled() && !batched, failed;
	uint32_t used;
	uint32_t np = 0;
	for (uint32_t i = 0; i < n;) {
		struct fgroup fg;
		struct vk_cmd *c = &pl->cmds[np];
		if (batched && preps[i].chunk_rows < pl->rows) {
			/* ranges of its rows; the first carries the ranges of
			 * them all for the barriers */
			uint32_t nc = (pl->rows + preps[i].chunk_rows - 1) /
				      preps[i].chunk_rows;
			for (uint32_t ch = 0; ch < nc; ch++, np++) {
				vk_batch_chunk(ctx, &t->cmds[i], &preps[i], &oc[i],
					       obi[i], ch, &pl->cmds[np], bis[np]);
				nrs[np] = ch ? 0 : ranges_of(&t->cmds[i], writes[i],
							     rs[np]);
			}
			i++;
			continue;
		}
		bool found = fuse && fuse_find(ctx, t, oc, rp, writes, i, &fg);
		if (!found && !batched && is_op(&t->cmds[i], "matvec") &&
		    fusable_matvec(&t->cmds[i], &oc[i], rp[i])) {
			/* alone: matvec_fused is the faster kernel */
			memset(&fg, 0, sizeof fg);
			fg.norm = fg.tail = -1;
			fg.mv[0] = fg.last = i;
			fg.nmv = 1;
			found = true;
		}
		if (found) {
			if (fuse_make(ctx, t, oc, obi, &fg, c, bis[np], err,
				      errsz))
				goto out;
			const struct belt_binding *in[6];
			int nin = 0;
			const struct belt_cmd *m0 = &t->cmds[fg.mv[0]];
			if (fg.norm >= 0) {
				in[nin++] = &t->cmds[fg.norm].bind[0];
				in[nin++] = &t->cmds[fg.norm].bind[1];
			} else {
				in[nin++] = &m0->bind[1];
			}
			for (int s = 0; s < fg.nmv; s++)
				in[nin++] = &t->cmds[fg.mv[s]].bind[0];
			int nr = 0;
			for (int a = 0; a < nin; a++)
				if (in[a]->size)
					rs[np][nr++] = (struct range){
						.buf = in[a]->buf,
						.lo = in[a]->offset,
						.hi = in[a]->offset +
						      in[a]->size};
			const struct belt_binding *out[3];
			int nout = group_outputs(t, &fg, out);
			for (int a = 0; a < nout; a++)
				rs[np][nr++] = (struct range){
					.buf = out[a]->buf,
					.lo = out[a]->offset,
					.hi = out[a]->offset + out[a]->size,
					.write = true};
			nrs[np] = nr;
			i = fg.last + 1;
		} else if (fuse && sample_fuse(ctx, t, oc, obi, i, c, bis[np],
					       rs[np], &nrs[np], &used, &failed,
					       err, errsz)) {
			if (failed)
				goto out;
			i += used;
		} else {
			*c = oc[i];
			memcpy(bis[np], obi[i], sizeof bis[np]);
			nrs[np] = ranges_of(&t->cmds[i], writes[i], rs[np]);
			i++;
		}
		np++;
	}
	pl->n_cmds = np;

	/* barriers, as the CPU backend places them */
	uint32_t n_desc = 0;
	for (uint32_t i = 0; i < np; i++) {
		n_desc += pl->cmds[i].n_bind + 2u;
		if (i > 0 && (g->n + nrs[i] > GROUP_MAX ||
			      conflicts(g, rs[i], nrs[i]))) {
			pl->cmds[i - 1].barrier = true;
			g->n = 0;
		}
		memcpy(g->r + g->n, rs[i], (size_t)nrs[i] * sizeof *rs[i]);
		g->n += nrs[i];
	}
	if (np)
		pl->cmds[np - 1].barrier = true; /* the next token needs all */

	/* meta: the run's base position, then rope frequencies */
	pl->meta = malloc(sizeof *pl->meta);
	if (!pl->meta) {
		belt_errf(err, errsz, "vulkan: out of memory");
		goto out;
	}
	if (vk_buf_make(ctx, "meta", true, VK_META_HEADER + 4 * meta_floats,
			pl->meta, err, errsz)) {
		free(pl->meta);
		pl->meta = NULL;
		goto out;
	}
	memset(pl->meta->map, 0, (size_t)pl->meta->alloc);
	if (vk_buffer_create(ctx, BELT_BUFFER_SCRATCH, 4 * work_words,
			     &pl->work, err, errsz))
		goto out; /* zeroed: the counters start at 0 */
	float *freq = (float *)((char *)pl->meta->map + VK_META_HEADER);
	for (uint32_t i = 0; i < n; i++) {
		const struct vk_op *op = t->cmds[i].kernel->impl;
		if (op->fill_meta)
			op->fill_meta(&t->cmds[i], freq + oc[i].pc.aux[0]);
	}

	/* one descriptor set per command, written once */
	if (np) {
		VkDescriptorPoolSize ps = {
			.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = n_desc};
		VkDescriptorPoolCreateInfo dpi = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
			.maxSets = np,
			.poolSizeCount = 1,
			.pPoolSizes = &ps,
		};
		VkResult r = vkCreateDescriptorPool(ctx->dev, &dpi, NULL,
						    &pl->dpool);
		if (r != VK_SUCCESS) {
			belt_errf(err, errsz,
				  "vulkan: vkCreateDescriptorPool for %u "
				  "commands: %s",
				  np, vk_result(r));
			goto out;
		}
	}
	for (uint32_t i = 0; i < np; i++) {
		uint32_t nb = pl->cmds[i].n_bind;
		VkDescriptorSetAllocateInfo dai = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
			.descriptorPool = pl->dpool,
			.descriptorSetCount = 1,
			.pSetLayouts = &ctx->dsl[nb],
		};
		VkResult r = vkAllocateDescriptorSets(ctx->dev, &dai,
						      &pl->cmds[i].set);
		if (r != VK_SUCCESS) {
			belt_errf(err, errsz,
				  "vulkan: vkAllocateDescriptorSets: %s",
				  vk_result(r));
			goto out;
		}
		bis[i][nb] = (VkDescriptorBufferInfo){
			.buffer = pl->meta->buf, .offset = 0,
			.range = VK_WHOLE_SIZE};
		bis[i][nb + 1] = (VkDescriptorBufferInfo){
			.buffer = pl->work->buf, .offset = 0,
			.range = VK_WHOLE_SIZE};
		VkWriteDescriptorSet w[BELT_MAX_BINDINGS + 2];
		for (uint32_t b = 0; b <= nb + 1; b++)
			w[b] = (VkWriteDescriptorSet){
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstSet = pl->cmds[i].set,
				.dstBinding = b < nb	 ? b
					      : b == nb ? VK_META_BINDING
							: VK_WORK_BINDING,
				.descriptorCount = 1,
				.descriptorType =
					VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
				.pBufferInfo = &bis[i][b],
			};
		vkUpdateDescriptorSets(ctx->dev, nb + 2u, w, 0, NULL);
	}

	if (profile_enabled(ctx) && np && profile_setup(ctx, pl, err, errsz))
		goto out;

	/* the command buffers: start, a slot per token (twice), tail; or a
	 * batched table's pass (batch.c) */
	bool any_head = false;
	for (uint32_t i = 0; i < np; i++)
		any_head |= pl->cmds[i].head;
	if (vk_alloc_cbs(ctx, &pl->start, 1, err, errsz) ||
	    vk_alloc_cbs(ctx, &pl->tail, 1, err, errsz) ||
	    record_barrier(pl->start, pl->work, err, errsz) ||
	    record_barrier(pl->tail, NULL, err, errsz))
		goto out;
	if (batched) {
		if (vk_batch_record(ctx, pl, err, errsz))
			goto out;
	} else {
		uint32_t nq = pl->n_cmds + 1;
		if (vk_alloc_cbs(ctx, pl->full, pl->max_run, err, errsz) ||
		    (any_head &&
		     vk_alloc_cbs(ctx, pl->nohead, pl->max_run, err, errsz)))
			goto out;
		for (uint32_t s = 0; s < pl->max_run; s++)
			if (vk_record_pass(pl, pl->full[s], s, VK_VAR_FULL, s * nq,
					   err, errsz) ||
			    (any_head &&
			     vk_record_pass(pl, pl->nohead[s], s, VK_VAR_NOHEAD,
					    (pl->max_run + s) * nq, err, errsz)))
				goto out;
	}
	rc = vk_check_messages(ctx, "table_prepare", err, errsz);
out:
	free(oc);
	free(preps);
	free(writes);
	free(rp);
	free(obi);
	free(bis);
	free(rs);
	free(nrs);
	free(g);
	return rc;
}

static int vk_table_prepare(void *vctx, struct belt_table *t, char *err,
			    size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (!t || (!t->cmds && t->n_cmds))
		return belt_errf(err, errsz, "vulkan: table_prepare: no table");
	struct plan *pl = calloc(1, sizeof *pl);
	if (!pl)
		return belt_errf(err, errsz, "vulkan: out of memory");
	if (prepare_plan(ctx, t, pl, err, errsz)) {
		plan_free(ctx, pl);
		t->priv = NULL;
		return -1;
	}
	t->priv = pl;
	return 0;
}

static void vk_table_release(void *vctx, struct belt_table *t)
{
	if (!t)
		return;
	plan_free(vctx, t->priv);
	t->priv = NULL;
}

static int vk_table_run(void *vctx, struct belt_table *t, uint32_t pos,
			uint32_t n, uint32_t flags, char *err, size_t errsz)
{
	struct vk_ctx *ctx = vctx;
	if (!t || !t->priv)
		return belt_errf(err, errsz, "vulkan: table_run: table not "
			"prepared");
	struct plan *pl = t->priv;
	if (!n)
		return 0;
	if (pl->rows > 1)
		return vk_batch_run(ctx, t, pl, pos, n, flags, err, errsz);
	if (n > pl->max_run)
		return belt_errf(err, errsz,
				 "vulkan: table_run: %u positions, more than "
				 "the table's max_run %u",
				 n, pl->max_run);
	if ((uint64_t)pos + n > pl->max_pos)
		return belt_errf(err, errsz,
				 "vulkan: table_run: positions %u..%" PRIu64
				 " exceed the %" PRIu64
				 " the table's buffers hold",
				 pos, (uint64_t)pos + n - 1, pl->max_pos);
	struct timespec t0, t1;
	if (pl->qpool)
		clock_gettime(CLOCK_MONOTONIC, &t0);
	*(volatile uint32_t *)pl->meta->map = pos;
	((volatile uint32_t *)pl->meta->map)[1] = !!(flags & BELT_RUN_STOP_AT_EOG);
	bool head_last = flags & BELT_RUN_HEAD_LAST_ONLY;
	bool no_head = flags & BELT_RUN_SKIP_HEAD;
	uint32_t k = 0;
	pl->submit[k++] = pl->start;
	for (uint32_t i = 0; i < n; i++)
		pl->submit[k++] = (no_head || (head_last && i + 1 < n)) && pl->nohead[i]
					  ? pl->nohead[i]
					  : pl->full[i];
	pl->submit[k++] = pl->tail;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = k,
		.pCommandBuffers = pl->submit,
	};
	VKCHECK(vkQueueSubmit(ctx->queue, 1, &si, ctx->fence), "vkQueueSubmit");
	if (pl->qpool) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pl->submit_ns += (double)(ts.tv_sec - t0.tv_sec) * 1e9 +
				 (double)(ts.tv_nsec - t0.tv_nsec);
	}
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	if (pl->qpool) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		pl->wall_ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
			       (double)(t1.tv_nsec - t0.tv_nsec);
		profile_collect(ctx, pl, n);
	}
	return vk_check_messages(ctx, "table_run", err, errsz);
}

const struct belt_backend_ops vk_backend_ops = {
	.abi = BELT_BACKEND_ABI,
	.name = "vulkan",
	.description = "Vulkan compute: GLSL shaders, one pre-recorded "
		       "submission per run",
	.create = vk_create,
	.destroy = vk_destroy,
	.buffer_create = vk_buffer_create,
	.buffer_wrap = NULL,
	.buffer_destroy = vk_buffer_destroy,
	.buffer_write = vk_buffer_write,
	.buffer_read = vk_buffer_read,
	.kernel_find = vk_kernel_find,
	.table_prepare = vk_table_prepare,
	.table_release = vk_table_release,
	.table_run = vk_table_run,
	.list_devices = vk_list_devices,
};
