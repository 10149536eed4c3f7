/* plugins/backend-vulkan/device.c: the instance (with the Khronos
 * validation layer and its debug messenger when validation is on), the
 * physical device create() picks and the logical device, queue, command
 * pool and pipeline cache it makes; create() and destroy(), and the
 * validation message count every entry point checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "ctx.h"

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
					 "vulkan: validation is on "
					 "(BELT_VK_VALIDATION or belt.yaml "
					 "backends.vulkan.validation) but %s is "
					 "not installed",
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

uint32_t vk_queue_families(const struct vk_ctx *ctx, VkQueueFamilyProperties *qf, uint32_t max)
{
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, NULL);
	if (nq > max)
		nq = max;
	vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &nq, qf);
	return nq;
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
	ctx->sg_shuffle = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
			  (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
	vk_tune_matvec(ctx, &p2.properties);
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
	ctx->q8x = vk_tune_q8x(ctx);
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
	if (ctx->props.limits.maxPerStageDescriptorStorageBuffers < VK_SET_MAX)
		return belt_errf(err, errsz,
				 "vulkan: %s: %u storage buffers a shader stage, need %d",
				 name, ctx->props.limits.maxPerStageDescriptorStorageBuffers,
				 VK_SET_MAX);

	VkQueueFamilyProperties qf[32];
	uint32_t nq = vk_queue_families(ctx, qf, 32);
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
	/* the features and extensions of the paths the device runs: int8 x
	 * (q8x), the matrix units (coopmat) */
	const char *exts[4];
	uint32_t n_ext = 0;
	void *chain = NULL;
	VkPhysicalDeviceCooperativeMatrixFeaturesNV en_cm = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
		.cooperativeMatrix = VK_TRUE,
	};
	VkPhysicalDeviceShaderFloat16Int8Features en_f16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
		.pNext = &en_cm,
		.shaderFloat16 = VK_TRUE,
	};
	ctx->coopmat = ctx->tune.coopmat && vk_coopmat(ctx->inst, ctx->phys);
	ctx->coopmat_int8 = ctx->coopmat && ctx->tune.coopmat_int8 &&
			    vk_coopmat_int8(ctx->inst, ctx->phys);
	en_f16.shaderInt8 = ctx->coopmat_int8;
	if (ctx->coopmat) {
		chain = &en_f16;
		exts[n_ext++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
	}
	VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR en_idp = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR,
		.pNext = chain,
		.shaderIntegerDotProduct = VK_TRUE,
	};
	if (ctx->q8x) {
		chain = &en_idp;
		exts[n_ext++] = VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME;
	}
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR en_pe = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
		.pNext = chain,
		.pipelineExecutableInfo = VK_TRUE,
	};
	ctx->stats = ctx->tune.stats && vk_stats_supported(ctx->phys);
	if (ctx->tune.stats && !ctx->stats)
		fprintf(stderr, "vulkan: %s gives no pipeline statistics "
				"(VK_KHR_pipeline_executable_properties); "
				"stats ignored\n",
			name);
	if (ctx->stats) {
		chain = &en_pe;
		exts[n_ext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
	}
	/* early exit without the shaders' read of the stop word (cond_stop) */
	VkPhysicalDeviceConditionalRenderingFeaturesEXT en_cr = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT,
		.pNext = chain,
		.conditionalRendering = VK_TRUE,
	};
	bool cond = ctx->tune.cond_stop && vk_cond_rendering(ctx->phys);
	if (cond) {
		chain = &en_cr;
		exts[n_ext++] = VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME;
	}
	VkPhysicalDevice16BitStorageFeatures en16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
		.pNext = chain,
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
		.enabledExtensionCount = n_ext,
		.ppEnabledExtensionNames = n_ext ? exts : NULL,
	};
	VKCHECK(vkCreateDevice(ctx->phys, &dci, NULL, &ctx->dev),
		"vkCreateDevice");
	vkGetDeviceQueue(ctx->dev, ctx->qfamily, 0, &ctx->queue);
	if (cond) {
		ctx->cond_begin = (PFN_vkCmdBeginConditionalRenderingEXT)vkGetDeviceProcAddr(
			ctx->dev, "vkCmdBeginConditionalRenderingEXT");
		ctx->cond_end = (PFN_vkCmdEndConditionalRenderingEXT)vkGetDeviceProcAddr(
			ctx->dev, "vkCmdEndConditionalRenderingEXT");
		if (!ctx->cond_begin || !ctx->cond_end)
			ctx->cond_begin = NULL, ctx->cond_end = NULL;
	}

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
	VkEventCreateInfo eci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
	for (int i = 0; i < 2; i++) {
		VKCHECK(vkCreateFence(ctx->dev, &fci, NULL, &ctx->gate_fence[i]),
			"vkCreateFence");
		VKCHECK(vkCreateEvent(ctx->dev, &eci, NULL, &ctx->gate_ev[i]),
			"vkCreateEvent");
	}
	VkPipelineCacheCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
	VKCHECK(vkCreatePipelineCache(ctx->dev, &pci, NULL, &ctx->cache),
		"vkCreatePipelineCache");
	return 0;
}

int vk_create(const struct belt_backend_options *opt, void **out,
	      char *err, size_t errsz)
{
	struct vk_ctx *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return belt_errf(err, errsz, "vulkan: out of memory");
	/* belt.yaml's backends: vulkan: (tuning.c) */
	if (vk_tune_read(ctx, opt, err, errsz)) {
		free(ctx);
		return -1;
	}
	ctx->validation = ctx->tune.validation;
	ctx->no_map = ctx->tune.staging;
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

void vk_destroy(void *vctx)
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
		for (int i = 0; i < VK_SH_COUNT + VK_EXT_MAX; i++) {
			if (ctx->pipe[i])
				vkDestroyPipeline(ctx->dev, ctx->pipe[i], NULL);
			if (ctx->module[i])
				vkDestroyShaderModule(ctx->dev, ctx->module[i],
						      NULL);
		}
		for (uint32_t i = 0; i < ctx->n_spipe; i++)
			vkDestroyPipeline(ctx->dev, ctx->spipe[i].pipe, NULL);
		for (int i = 0; i <= VK_FMV_BINDINGS; i++) {
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
		for (int i = 0; i < 2; i++) {
			if (ctx->gate_fence[i])
				vkDestroyFence(ctx->dev, ctx->gate_fence[i], NULL);
			if (ctx->gate_ev[i])
				vkDestroyEvent(ctx->dev, ctx->gate_ev[i], NULL);
		}
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
