/* list_devices: what each Vulkan physical device offers, for `belt info`,
 * from an instance of its own (no create() needed). The default is the
 * device create() picks for options.device < 0: $BELT_VK_DEVICE, else the
 * first discrete GPU, else device 0. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "vk.h"

#define MAX_DEVICES 64

/* Append to buf at *len, cutting at bufsz. */
__attribute__((format(printf, 4, 5)))
static void put(char *buf, size_t bufsz, size_t *len, const char *fmt, ...)
{
	if (*len + 1 >= bufsz)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, bufsz - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < bufsz - *len ? (size_t)n : bufsz - *len - 1;
}

/* "48 KiB", "2048 MiB", "15.6 GiB" */
static void put_bytes(char *buf, size_t bufsz, size_t *len, uint64_t v)
{
	if (v >= 1ull << 30)
		put(buf, bufsz, len, "%.1f GiB", (double)v / (1ull << 30));
	else if (v >= 1ull << 20)
		put(buf, bufsz, len, "%.0f MiB", (double)v / (1ull << 20));
	else
		put(buf, bufsz, len, "%.0f KiB", (double)v / 1024);
}

static const char *type_name(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
	default: return "other";
	}
}

/* The largest device-local heap: the VRAM of a discrete GPU. */
static uint64_t local_heap(VkPhysicalDevice d)
{
	VkPhysicalDeviceMemoryProperties mem;
	vkGetPhysicalDeviceMemoryProperties(d, &mem);
	uint64_t best = 0;
	for (uint32_t i = 0; i < mem.memoryHeapCount; i++)
		if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT &&
		    mem.memoryHeaps[i].size > best)
			best = mem.memoryHeaps[i].size;
	return best;
}

/* The index create() takes for options.device < 0; -1 when
 * $BELT_VK_DEVICE names no device (create() then fails). */
static int default_device(VkPhysicalDevice *devs, uint32_t n)
{
	const char *env = getenv("BELT_VK_DEVICE");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		return !*end && v >= 0 && (uint32_t)v < n ? (int)v : -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceProperties p;
		vkGetPhysicalDeviceProperties(devs[i], &p);
		if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
			return (int)i;
	}
	return 0;
}

bool vk_device_ext(VkPhysicalDevice d, const char *name)
{
	uint32_t n = 0;
	if (vkEnumerateDeviceExtensionProperties(d, NULL, &n, NULL) !=
		    VK_SUCCESS ||
	    !n)
		return false;
	VkExtensionProperties *e = calloc(n, sizeof *e);
	bool found = false;
	if (e && vkEnumerateDeviceExtensionProperties(d, NULL, &n, e) ==
			 VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = !strcmp(e[i].extensionName, name);
	free(e);
	return found;
}

bool vk_cond_rendering(VkPhysicalDevice d)
{
	if (!vk_device_ext(d, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME))
		return false;
	VkPhysicalDeviceConditionalRenderingFeaturesEXT cr = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
	VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					.pNext = &cr};
	vkGetPhysicalDeviceFeatures2(d, &f2);
	return cr.conditionalRendering;
}

bool vk_int8_dot(VkPhysicalDevice d)
{
	if (!vk_device_ext(d, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME))
		return false;
	VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idp = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &idp};
	vkGetPhysicalDeviceFeatures2(d, &f2);
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &sg};
	vkGetPhysicalDeviceProperties2(d, &p2);
	return idp.shaderIntegerDotProduct && sg.subgroupSize >= 4 &&
	       (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
	       (sg.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
}

/* Whether d offers NV cooperative matrices of M x N x K with component
 * types a (A and B) and c (C and D) on a subgroup of 32 in compute
 * shaders, and shaderFloat16 (int8: shaderInt8 too). */
static bool coopmat_has(VkInstance inst, VkPhysicalDevice d, uint32_t k,
			VkComponentTypeNV a, VkComponentTypeNV c)
{
	if (!vk_device_ext(d, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
		return false;
	VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
	VkPhysicalDeviceShaderFloat16Int8Features f16 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
		.pNext = &cm};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f16};
	vkGetPhysicalDeviceFeatures2(d, &f2);
	VkPhysicalDeviceCooperativeMatrixPropertiesNV cp = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
		.pNext = &cp};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &sg};
	vkGetPhysicalDeviceProperties2(d, &p2);
	bool int8 = a == VK_COMPONENT_TYPE_SINT8_NV;
	if (!cm.cooperativeMatrix || !f16.shaderFloat16 || (int8 && !f16.shaderInt8) ||
	    sg.subgroupSize != 32 ||
	    !(cp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT))
		return false;
	PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
		(PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
			inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
	uint32_t n = 0;
	if (!get || get(d, &n, NULL) != VK_SUCCESS || !n)
		return false;
	VkCooperativeMatrixPropertiesNV *p = calloc(n, sizeof *p);
	bool found = false;
	if (p) {
		for (uint32_t i = 0; i < n; i++)
			p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
		if (get(d, &n, p) == VK_SUCCESS)
			for (uint32_t i = 0; i < n && !found; i++)
				found = p[i].MSize == 16 && p[i].NSize == 16 &&
					p[i].KSize == k && p[i].AType == a &&
					p[i].BType == a && p[i].CType == c &&
					p[i].DType == c &&
					p[i].scope == VK_SCOPE_SUBGROUP_NV;
	}
	free(p);
	return found;
}

bool vk_coopmat(VkInstance inst, VkPhysicalDevice d)
{
	return coopmat_has(inst, d, 16, VK_COMPONENT_TYPE_FLOAT16_NV,
			   VK_COMPONENT_TYPE_FLOAT32_NV);
}

bool vk_coopmat_int8(VkInstance inst, VkPhysicalDevice d)
{
	return coopmat_has(inst, d, 32, VK_COMPONENT_TYPE_SINT8_NV,
			   VK_COMPONENT_TYPE_SINT32_NV);
}

static void describe(VkInstance inst, VkPhysicalDevice d, uint32_t i, bool dflt, bool has_p2,
		     char *buf, size_t bufsz, size_t *len)
{
	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &sg};
	vkGetPhysicalDeviceProperties(d, &p2.properties);
	const VkPhysicalDeviceProperties *p = &p2.properties;
	/* properties2 needs an instance and a device of Vulkan 1.1 */
	if (has_p2 && p->apiVersion >= VK_API_VERSION_1_1)
		vkGetPhysicalDeviceProperties2(d, &p2);
	const VkPhysicalDeviceLimits *l = &p->limits;
	put(buf, bufsz, len, "%u: %s, %s, Vulkan %u.%u.%u, device-local ", i,
	    p->deviceName, type_name(p->deviceType),
	    VK_API_VERSION_MAJOR(p->apiVersion),
	    VK_API_VERSION_MINOR(p->apiVersion),
	    VK_API_VERSION_PATCH(p->apiVersion));
	put_bytes(buf, bufsz, len, local_heap(d));
	if (sg.subgroupSize)
		put(buf, bufsz, len, ", subgroup %u", sg.subgroupSize);
	put(buf, bufsz, len, ", maxStorageBufferRange ");
	put_bytes(buf, bufsz, len, l->maxStorageBufferRange);
	put(buf, bufsz, len, ", maxComputeSharedMemorySize ");
	put_bytes(buf, bufsz, len, l->maxComputeSharedMemorySize);
	put(buf, bufsz, len, ", maxComputeWorkGroupInvocations %u",
	    l->maxComputeWorkGroupInvocations);
	if (p->apiVersion < VK_API_VERSION_1_2)
		put(buf, bufsz, len, ", unusable: belt needs Vulkan 1.2");
	else if (has_p2 && vk_int8_dot(d))
		put(buf, bufsz, len, ", int8 dot products");
	if (p->apiVersion >= VK_API_VERSION_1_2 && has_p2 && vk_coopmat(inst, d))
		put(buf, bufsz, len, ", cooperative matrices%s",
		    vk_coopmat_int8(inst, d) ? " (float16, int8)" : "");
	put(buf, bufsz, len, "%s\n", dflt ? " (default)" : "");
}

uint32_t vk_loader_version(void)
{
	uint32_t ver = VK_API_VERSION_1_0;
	PFN_vkEnumerateInstanceVersion eiv =
		(PFN_vkEnumerateInstanceVersion)vkGetInstanceProcAddr(
			NULL, "vkEnumerateInstanceVersion");
	if (eiv)
		eiv(&ver);
	return ver;
}

int vk_list_devices(char *buf, size_t bufsz, char *err, size_t errsz)
{
	size_t len = 0;
	if (bufsz)
		buf[0] = 0;
	uint32_t ver = vk_loader_version();
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "belt",
		.pEngineName = "belt",
		.apiVersion = ver < VK_API_VERSION_1_2 ? ver : VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkInstance inst;
	VkResult r = vkCreateInstance(&ici, NULL, &inst);
	if (r != VK_SUCCESS)
		return belt_errf(err, errsz, "vulkan: vkCreateInstance: error %d",
				 (int)r);
	VkPhysicalDevice devs[MAX_DEVICES];
	uint32_t n = MAX_DEVICES;
	r = vkEnumeratePhysicalDevices(inst, &n, devs);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		vkDestroyInstance(inst, NULL);
		return belt_errf(err, errsz,
				 "vulkan: vkEnumeratePhysicalDevices: error %d",
				 (int)r);
	}
	int dflt = default_device(devs, n);
	for (uint32_t i = 0; i < n; i++)
		describe(inst, devs[i], i, (int)i == dflt,
			 app.apiVersion >= VK_API_VERSION_1_1, buf, bufsz, &len);
	vkDestroyInstance(inst, NULL);
	return (int)n;
}
