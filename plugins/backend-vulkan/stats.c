/* plugins/backend-vulkan/stats.c: the stats setting (BELT_VK_STATS=1):
 * what the driver says of each pipeline it compiles (registers, shared
 * memory, spills, ... as VK_KHR_pipeline_executable_properties names
 * them), one line per pipeline on stderr. A diagnosis for tuning kernels:
 * a workgroup's registers decide how many workgroups an SM holds, which
 * no timing shows directly. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctx.h"

bool vk_stats_supported(VkPhysicalDevice d)
{
	if (!vk_device_ext(d, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
		return false;
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &pe};
	vkGetPhysicalDeviceFeatures2(d, &f2);
	return pe.pipelineExecutableInfo;
}

/* one statistic as text */
static void stat_text(const VkPipelineExecutableStatisticKHR *s, char *out,
		      size_t outsz)
{
	switch (s->format) {
	case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
		snprintf(out, outsz, "%s", s->value.b32 ? "true" : "false");
		break;
	case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
		snprintf(out, outsz, "%" PRId64, s->value.i64);
		break;
	case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
		snprintf(out, outsz, "%" PRIu64, s->value.u64);
		break;
	default:
		snprintf(out, outsz, "%g", s->value.f64);
		break;
	}
}

void vk_stats_print(struct vk_ctx *ctx, enum vk_shader sh,
		    const uint32_t *spec, uint32_t n_spec, VkPipeline pipe)
{
	PFN_vkGetPipelineExecutablePropertiesKHR props =
		(PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
			ctx->dev, "vkGetPipelineExecutablePropertiesKHR");
	PFN_vkGetPipelineExecutableStatisticsKHR stats =
		(PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
			ctx->dev, "vkGetPipelineExecutableStatisticsKHR");
	if (!props || !stats)
		return;
	char line[2048];
	size_t len = (size_t)snprintf(line, sizeof line, "vulkan stats: %s",
				      vk_shader_code(ctx, sh).name);
	for (uint32_t i = 0; i < n_spec && len < sizeof line; i++)
		len += (size_t)snprintf(line + len, sizeof line - len, "%s%u",
					i ? "," : " [", spec[i]);
	if (n_spec && len < sizeof line)
		len += (size_t)snprintf(line + len, sizeof line - len, "]");
	VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR,
				.pipeline = pipe};
	VkPipelineExecutablePropertiesKHR ep[4];
	uint32_t n_ep = 4;
	for (uint32_t i = 0; i < n_ep; i++)
		ep[i] = (VkPipelineExecutablePropertiesKHR){
			.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR};
	if (props(ctx->dev, &pi, &n_ep, ep) < 0)
		return;
	for (uint32_t e = 0; e < n_ep; e++) {
		VkPipelineExecutableInfoKHR ei = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
			.pipeline = pipe,
			.executableIndex = e};
		VkPipelineExecutableStatisticKHR st[32];
		uint32_t n_st = 32;
		for (uint32_t i = 0; i < n_st; i++)
			st[i] = (VkPipelineExecutableStatisticKHR){
				.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
		if (stats(ctx->dev, &ei, &n_st, st) < 0)
			continue;
		for (uint32_t i = 0; i < n_st && len < sizeof line; i++) {
			char v[64];
			stat_text(&st[i], v, sizeof v);
			len += (size_t)snprintf(line + len, sizeof line - len,
						"%s %s=%s", i ? "," : ":",
						st[i].name, v);
		}
	}
	fprintf(stderr, "%s\n", line);
}
