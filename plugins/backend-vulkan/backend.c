/* The Vulkan backend's ops table. create() opens one device and compute
 * queue; buffers are one allocation each; table_prepare writes one
 * descriptor set per command and pre-records one command buffer per token
 * slot of a run (twice: with and without the output head), so that
 * table_run only writes the run's base position into a small host-visible
 * "meta" buffer and submits the first n slots at once, then waits.
 *
 * Environment:
 *   BELT_VK_DEVICE=i      physical device index (when options.device < 0)
 *   BELT_VK_VALIDATION=1  Khronos validation layer + debug messenger; any
 *                         warning or error fails the next prepare/run/read
 *                         and is counted; =fatal also aborts in destroy()
 *                         when the count is not zero
 *   BELT_VK_STAGING=1     never map device buffers (tests the staging path)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/types.h"
#include "vk.h"

#define STAGING_BYTES (64ull << 20)
#define BUF_ALIGN 256
#define DEFAULT_MAX_RUN 16
#define GROUP_MAX 64

struct vk_ctx {
	VkInstance inst;
	VkDebugUtilsMessengerEXT messenger;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	uint32_t qfamily;
	VkCommandPool cmd_pool;
	VkCommandBuffer xfer; /* one-shot copies and fills */
	VkFence fence;
	VkPipelineCache cache;
	VkDescriptorSetLayout dsl[BELT_MAX_BINDINGS + 1]; /* by n_bind */
	VkPipelineLayout pl[BELT_MAX_BINDINGS + 1];
	VkShaderModule module[VK_SH_COUNT];
	VkPipeline pipe[VK_SH_COUNT];
	VkPhysicalDeviceProperties props;
	VkPhysicalDeviceMemoryProperties mem;
	uint64_t max_alloc;
	bool no_map; /* BELT_VK_STAGING */

	/* staging, allocated on first use */
	VkBuffer stage;
	VkDeviceMemory stage_mem;
	void *stage_map;
	uint64_t stage_size;

	/* validation */
	int validation; /* 0 off, 1 count, 2 fatal */
	unsigned n_messages;
	char first_message[256];
};

struct belt_buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
	void *map;	   /* persistently mapped, or NULL */
	uint64_t size;	   /* as asked */
	uint64_t alloc;	   /* the VkBuffer's size */
};

/* A prepared command. */
struct vk_cmd {
	VkPipeline pipe;
	VkPipelineLayout layout;
	VkDescriptorSet set;
	struct vk_pc pc;
	uint32_t gx, gy; /* workgroups */
	bool head;
	bool barrier; /* later commands need this one's results */
};

/* What table_prepare makes: t->priv. */
struct plan {
	struct vk_cmd *cmds;
	uint32_t n_cmds;
	uint32_t max_run;
	uint64_t max_pos;
	VkDescriptorPool dpool;
	struct belt_buffer *meta;
	VkCommandBuffer start, tail; /* barrier in; barrier out to the host */
	VkCommandBuffer *full;	     /* [max_run]: token slot t, all commands */
	VkCommandBuffer *nohead;     /* [max_run]: without head commands */
	VkCommandBuffer *submit;     /* [max_run + 2]: what a run submits */
};

static const char *vk_result(VkResult r)
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

#define VKCHECK(call, what)                                                  \
	do {                                                                 \
		VkResult r_ = (call);                                        \
		if (r_ != VK_SUCCESS)                                        \
			return belt_errf(err, errsz, "vulkan: %s: %s (%d)",  \
					 what, vk_result(r_), (int)r_);      \
	} while (0)

/* In validation mode, anything the layer said fails the current call. */
static int check_messages(struct vk_ctx *ctx, const char *what, char *err,
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
	uint32_t ver = VK_API_VERSION_1_0;
	PFN_vkEnumerateInstanceVersion eiv =
		(PFN_vkEnumerateInstanceVersion)vkGetInstanceProcAddr(
			NULL, "vkEnumerateInstanceVersion");
	if (eiv)
		eiv(&ver);
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
	VkPhysicalDevice16BitStorageFeatures en16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
		.storageBuffer16BitAccess = VK_TRUE,
	};
	VkPhysicalDeviceFeatures2 en = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &en16,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &en,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
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
	if (make_instance(ctx, err, errsz) ||
	    pick_device(ctx, opt ? opt->device : -1, err, errsz) ||
	    make_device(ctx, err, errsz) ||
	    check_messages(ctx, "create", err, errsz)) {
		ctx->validation = 0; /* the error is reported already */
		vk_destroy(ctx);
		return -1;
	}
	*out = ctx;
	return 0;
}

static void buffer_free(struct vk_ctx *ctx, struct belt_buffer *b);

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
			buffer_free(ctx, &st);
		}
		for (int i = 0; i < VK_SH_COUNT; i++) {
			if (ctx->pipe[i])
				vkDestroyPipeline(ctx->dev, ctx->pipe[i], NULL);
			if (ctx->module[i])
				vkDestroyShaderModule(ctx->dev, ctx->module[i],
						      NULL);
		}
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

static void buffer_free(struct vk_ctx *ctx, struct belt_buffer *b)
{
	if (b->buf)
		vkDestroyBuffer(ctx->dev, b->buf, NULL);
	if (b->mem)
		vkFreeMemory(ctx->dev, b->mem, NULL); /* unmaps too */
}

/* host: the buffer must be mappable (IO, staging, meta). */
static int buffer_make(struct vk_ctx *ctx, const char *what, bool host,
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
		buffer_free(ctx, b);
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
		buffer_free(ctx, b);
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
		buffer_free(ctx, b);
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

static int xfer_begin(struct vk_ctx *ctx, char *err, size_t errsz)
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

static int xfer_end(struct vk_ctx *ctx, char *err, size_t errsz)
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
	if (buffer_make(ctx, usage_name(usage), usage == BELT_BUFFER_IO, size,
			b, err, errsz)) {
		free(b);
		return -1;
	}
	/* zeroed, as the CPU backend's */
	int rc = 0;
	if (b->map) {
		memset(b->map, 0, (size_t)b->alloc);
	} else {
		rc = xfer_begin(ctx, err, errsz);
		if (!rc) {
			vkCmdFillBuffer(ctx->xfer, b->buf, 0, VK_WHOLE_SIZE, 0);
			rc = xfer_end(ctx, err, errsz);
		}
	}
	if (rc) {
		buffer_free(ctx, b);
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
	buffer_free(ctx, b);
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
	if (buffer_make(ctx, "staging", true, size, &st, err, errsz))
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
		if (xfer_begin(ctx, err, errsz))
			return -1;
		VkBufferCopy bc = {.srcOffset = write ? 0 : offset + done,
				   .dstOffset = write ? offset + done : 0,
				   .size = n};
		vkCmdCopyBuffer(ctx->xfer, write ? ctx->stage : b->buf,
				write ? b->buf : ctx->stage, 1, &bc);
		if (xfer_end(ctx, err, errsz))
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
	    check_messages(ctx, "buffer_read", err, errsz))
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

/* The set layout and pipeline layout for n command bindings plus meta. */
static int layout_for(struct vk_ctx *ctx, int n, char *err, size_t errsz)
{
	if (ctx->pl[n])
		return 0;
	VkDescriptorSetLayoutBinding lb[BELT_MAX_BINDINGS + 1];
	for (int i = 0; i <= n; i++)
		lb[i] = (VkDescriptorSetLayoutBinding){
			.binding = i < n ? (uint32_t)i : VK_META_BINDING,
			.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = 1,
			.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		};
	VkDescriptorSetLayoutCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
		.bindingCount = (uint32_t)n + 1,
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

static int pipeline_for(struct vk_ctx *ctx, enum vk_shader sh, int n_bind,
			char *err, size_t errsz)
{
	if (ctx->pipe[sh])
		return 0;
	if (layout_for(ctx, n_bind, err, errsz))
		return -1;
	VkShaderModuleCreateInfo smi = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = vk_spirv[sh].size,
		.pCode = vk_spirv[sh].code,
	};
	VKCHECK(vkCreateShaderModule(ctx->dev, &smi, NULL, &ctx->module[sh]),
		"vkCreateShaderModule");
	VkComputePipelineCreateInfo cpi = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.module = ctx->module[sh],
			.pName = "main",
		},
		.layout = ctx->pl[n_bind],
	};
	VKCHECK(vkCreateComputePipelines(ctx->dev, ctx->cache, 1, &cpi, NULL,
					 &ctx->pipe[sh]),
		"vkCreateComputePipelines");
	return 0;
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

static int count_params(const char *schema)
{
	int n = 0;
	for (const char *s = schema; *s; s++)
		if (*s == ':')
			n++;
	return n;
}

static void plan_free(struct vk_ctx *ctx, struct plan *pl)
{
	if (!pl)
		return;
	vkDeviceWaitIdle(ctx->dev);
	VkCommandBuffer *cbs[] = {&pl->start, &pl->tail};
	for (int i = 0; i < 2; i++)
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
	free(pl->full);
	free(pl->nohead);
	free(pl->submit);
	free(pl->cmds);
	free(pl);
}

/* Check one command, resolve its bindings to descriptor ranges, and fill
 * its push constants. */
static int prepare_cmd(struct vk_ctx *ctx, const struct belt_cmd *cmd,
		       uint32_t idx, struct vk_cmd *c, struct vk_prep *pr,
		       VkDescriptorBufferInfo *bi, char *err, size_t errsz)
{
	const struct belt_kernel *k = cmd->kernel;
	const char *name = cmd->label ? cmd->label : "?";
	if (!k || k < vk_kernels || k >= vk_kernels + vk_n_kernels)
		return belt_errf(err, errsz,
				 "vulkan: command %u (%s): kernel is not one "
				 "of this backend's",
				 idx, name);
	if (cmd->n_bind != k->n_bind || cmd->n_bind > BELT_MAX_BINDINGS)
		return belt_errf(err, errsz,
				 "%s: %s takes %u bindings, the command has %u",
				 name, k->op, k->n_bind, cmd->n_bind);
	int np = count_params(k->params);
	if (cmd->n_param != np)
		return belt_errf(err, errsz,
				 "%s: %s takes %d params (%s), the command has "
				 "%u",
				 name, k->op, np, k->params, cmd->n_param);
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
	pr->max_pos = UINT64_MAX;
	for (int i = 0; i < BELT_MAX_BINDINGS; i++)
		pr->esize[i] = 4;
	if (op->prepare(cmd, pr, err, errsz))
		return -1;

	/* Bind at the offset rounded down to the device's alignment; the
	 * shader adds the rest, in elements. */
	uint64_t align = ctx->props.limits.minStorageBufferOffsetAlignment;
	uint64_t max_range = ctx->props.limits.maxStorageBufferRange;
	if (!align)
		align = 1;
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

	uint32_t maxx = ctx->props.limits.maxComputeWorkGroupCount[0];
	uint32_t maxy = ctx->props.limits.maxComputeWorkGroupCount[1];
	uint32_t g = pr->groups ? pr->groups : 1;
	c->gx = g < maxx ? g : maxx;
	c->gy = (g + c->gx - 1) / c->gx;
	if (c->gy > maxy)
		return belt_errf(err, errsz,
				 "%s: %s needs %u workgroups, more than this "
				 "device dispatches",
				 name, k->op, g);
	c->head = cmd->head;
	if (pipeline_for(ctx, op->shader, cmd->n_bind, err, errsz))
		return -1;
	c->pipe = ctx->pipe[op->shader];
	c->layout = ctx->pl[cmd->n_bind];
	return 0;
}

/* One token slot: every command (but the head's when nohead), with
 * barriers where the next command depends on earlier ones. */
static int record_slot(struct plan *pl, VkCommandBuffer cb, uint32_t t,
		       bool nohead, char *err, size_t errsz)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
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
			pc.t = t;
			vkCmdPushConstants(cb, c->layout,
					   VK_SHADER_STAGE_COMPUTE_BIT, 0,
					   sizeof pc, &pc);
			vkCmdDispatch(cb, c->gx, c->gy, 1);
		}
		/* a skipped command keeps its barrier: the commands around
		 * it were grouped with it, not with each other */
		if (c->barrier)
			vkCmdPipelineBarrier(cb,
					     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					     0, 1, &mb, 0, NULL, 0, NULL);
	}
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

static int record_barrier(VkCommandBuffer cb, char *err, size_t errsz)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	VKCHECK(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
	barrier_all(cb);
	VKCHECK(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
	return 0;
}

static int alloc_cbs(struct vk_ctx *ctx, VkCommandBuffer *out, uint32_t n,
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

static int prepare_plan(struct vk_ctx *ctx, struct belt_table *t,
			struct plan *pl, char *err, size_t errsz)
{
	uint32_t n = t->n_cmds;
	pl->max_run = t->max_run ? t->max_run : DEFAULT_MAX_RUN;
	pl->max_pos = t->n_ctx ? t->n_ctx : UINT64_MAX;
	pl->cmds = calloc(n ? n : 1, sizeof *pl->cmds);
	struct vk_prep *preps = calloc(n ? n : 1, sizeof *preps);
	VkDescriptorBufferInfo(*bis)[BELT_MAX_BINDINGS + 1] =
		calloc(n ? n : 1, sizeof *bis);
	struct group *g = calloc(1, sizeof *g);
	pl->full = calloc(pl->max_run, sizeof *pl->full);
	pl->nohead = calloc(pl->max_run, sizeof *pl->nohead);
	pl->submit = calloc(pl->max_run + 2, sizeof *pl->submit);
	int rc = -1;
	if (!pl->cmds || !preps || !bis || !g || !pl->full || !pl->nohead ||
	    !pl->submit) {
		belt_errf(err, errsz,
			  "vulkan: table_prepare: out of memory for %u "
			  "commands",
			  n);
		goto out;
	}
	pl->n_cmds = n;
	uint64_t meta_floats = 0;
	uint32_t n_desc = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct belt_cmd *cmd = &t->cmds[i];
		struct vk_cmd *c = &pl->cmds[i];
		if (prepare_cmd(ctx, cmd, i, c, &preps[i], bis[i], err, errsz))
			goto out;
		if (preps[i].max_pos < pl->max_pos)
			pl->max_pos = preps[i].max_pos;
		if (preps[i].n_freq) {
			c->pc.aux[0] = (uint32_t)meta_floats;
			meta_floats += preps[i].n_freq;
		}
		n_desc += cmd->n_bind + 1u;

		struct range r[BELT_MAX_BINDINGS];
		int nr = 0;
		for (int b = 0; b < cmd->n_bind; b++) {
			if (!cmd->bind[b].size)
				continue;
			r[nr++] = (struct range){
				.buf = cmd->bind[b].buf,
				.lo = cmd->bind[b].offset,
				.hi = cmd->bind[b].offset + cmd->bind[b].size,
				.write = preps[i].writes & (1u << b)};
		}
		if (i > 0 && (g->n + nr > GROUP_MAX || conflicts(g, r, nr))) {
			pl->cmds[i - 1].barrier = true;
			g->n = 0;
		}
		memcpy(g->r + g->n, r, (size_t)nr * sizeof *r);
		g->n += nr;
	}
	if (n)
		pl->cmds[n - 1].barrier = true; /* the next token needs all */

	/* meta: the run's base position, then rope frequencies */
	pl->meta = malloc(sizeof *pl->meta);
	if (!pl->meta) {
		belt_errf(err, errsz, "vulkan: out of memory");
		goto out;
	}
	if (buffer_make(ctx, "meta", true, VK_META_HEADER + 4 * meta_floats,
			pl->meta, err, errsz)) {
		free(pl->meta);
		pl->meta = NULL;
		goto out;
	}
	memset(pl->meta->map, 0, (size_t)pl->meta->alloc);
	float *freq = (float *)((char *)pl->meta->map + VK_META_HEADER);
	for (uint32_t i = 0; i < n; i++) {
		const struct vk_op *op = t->cmds[i].kernel->impl;
		if (op->fill_meta)
			op->fill_meta(&t->cmds[i], freq + pl->cmds[i].pc.aux[0]);
	}

	/* one descriptor set per command, written once */
	if (n) {
		VkDescriptorPoolSize ps = {
			.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
			.descriptorCount = n_desc};
		VkDescriptorPoolCreateInfo dpi = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
			.maxSets = n,
			.poolSizeCount = 1,
			.pPoolSizes = &ps,
		};
		VkResult r = vkCreateDescriptorPool(ctx->dev, &dpi, NULL,
						    &pl->dpool);
		if (r != VK_SUCCESS) {
			belt_errf(err, errsz,
				  "vulkan: vkCreateDescriptorPool for %u "
				  "commands: %s",
				  n, vk_result(r));
			goto out;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct belt_cmd *cmd = &t->cmds[i];
		VkDescriptorSetAllocateInfo dai = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
			.descriptorPool = pl->dpool,
			.descriptorSetCount = 1,
			.pSetLayouts = &ctx->dsl[cmd->n_bind],
		};
		VkResult r = vkAllocateDescriptorSets(ctx->dev, &dai,
						      &pl->cmds[i].set);
		if (r != VK_SUCCESS) {
			belt_errf(err, errsz,
				  "vulkan: vkAllocateDescriptorSets: %s",
				  vk_result(r));
			goto out;
		}
		bis[i][cmd->n_bind] = (VkDescriptorBufferInfo){
			.buffer = pl->meta->buf, .offset = 0,
			.range = VK_WHOLE_SIZE};
		VkWriteDescriptorSet w[BELT_MAX_BINDINGS + 1];
		for (int b = 0; b <= cmd->n_bind; b++)
			w[b] = (VkWriteDescriptorSet){
				.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
				.dstSet = pl->cmds[i].set,
				.dstBinding = b < cmd->n_bind ? (uint32_t)b
							      : VK_META_BINDING,
				.descriptorCount = 1,
				.descriptorType =
					VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
				.pBufferInfo = &bis[i][b],
			};
		vkUpdateDescriptorSets(ctx->dev, cmd->n_bind + 1u, w, 0, NULL);
	}

	/* the command buffers: start, a slot per token (twice), tail */
	bool any_head = false;
	for (uint32_t i = 0; i < n; i++)
		any_head |= pl->cmds[i].head;
	if (alloc_cbs(ctx, &pl->start, 1, err, errsz) ||
	    alloc_cbs(ctx, &pl->tail, 1, err, errsz) ||
	    alloc_cbs(ctx, pl->full, pl->max_run, err, errsz) ||
	    (any_head &&
	     alloc_cbs(ctx, pl->nohead, pl->max_run, err, errsz)) ||
	    record_barrier(pl->start, err, errsz) ||
	    record_barrier(pl->tail, err, errsz))
		goto out;
	for (uint32_t s = 0; s < pl->max_run; s++)
		if (record_slot(pl, pl->full[s], s, false, err, errsz) ||
		    (any_head &&
		     record_slot(pl, pl->nohead[s], s, true, err, errsz)))
			goto out;
	rc = check_messages(ctx, "table_prepare", err, errsz);
out:
	free(preps);
	free(bis);
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
	*(volatile uint32_t *)pl->meta->map = pos;
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
	VKCHECK(vkWaitForFences(ctx->dev, 1, &ctx->fence, VK_TRUE, UINT64_MAX),
		"vkWaitForFences");
	VKCHECK(vkResetFences(ctx->dev, 1, &ctx->fence), "vkResetFences");
	return check_messages(ctx, "table_run", err, errsz);
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
};
