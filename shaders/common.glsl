// Shared by every shader: push constants, the meta buffer, helpers.
// Must match struct vk_pc, VK_META_BINDING and VK_WORK_BINDING in
// plugins/backend-vulkan/vk.h.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

layout(push_constant, std430) uniform PC {
	uint t;       // token index within the run
	uint aux[3];  // op-specific
	uint o[8];    // binding i starts o[i] elements into its range
	uint p[16];   // params, as 32-bit words
} pc;

layout(set = 0, binding = 8, std430) readonly buffer Meta {
	uint base_pos;
	uint stop_on; // early exit after an end-of-generation token
	uint spare[2];
	float freq[];
} meta;

// The plan's work buffer: per-command scratch (partial results, counters
// that the last workgroup resets); a command's words start at aux[2].
layout(set = 0, binding = 9, std430) coherent buffer WorkF { float workf[]; };
layout(set = 0, binding = 9, std430) coherent buffer WorkU { uint worku[]; };
layout(set = 0, binding = 9, std430) coherent buffer Work4 { vec4 work4[]; };

// Work word 0 is the run's stop word: set by argmax after an
// end-of-generation token, cleared before each run. Every shader starts
// with STOP_CHECK(), so the rest of the run costs only empty dispatches.
#define STOP_CHECK()               \
	if (worku[0] != 0u)        \
		return

// After each workgroup has written its partial result to work: true in
// the last of n workgroups to arrive at work word counter (which it must
// reset), with every other workgroup's writes visible. All threads call it.
shared bool last_wg_sh;
bool last_workgroup(uint counter, uint n)
{
	memoryBarrierBuffer();
	barrier();
	if (gl_LocalInvocationIndex == 0)
		last_wg_sh = atomicAdd(worku[counter], 1u) == n - 1;
	barrier();
	memoryBarrierBuffer();
	return last_wg_sh;
}

uint cur_pos() { return meta.base_pos + pc.t; }
uint wg_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
int pint(uint i) { return int(pc.p[i]); }
float pflt(uint i) { return uintBitsToFloat(pc.p[i]); }

float half_f(uint h) { return unpackHalf2x16(h).x; }
float bf16_f(uint h) { return uintBitsToFloat(h << 16); }

// Reductions over the workgroup, any subgroup size; every thread gets the
// result.
shared float red_sh[256];

float wg_sum(float v)
{
	v = subgroupAdd(v);
	if (subgroupElect())
		red_sh[gl_SubgroupID] = v;
	barrier();
	float s = 0.0;
	for (uint i = 0; i < gl_NumSubgroups; i++)
		s += red_sh[i];
	barrier();
	return s;
}

float wg_max(float v)
{
	v = subgroupMax(v);
	if (subgroupElect())
		red_sh[gl_SubgroupID] = v;
	barrier();
	float s = red_sh[0];
	for (uint i = 1; i < gl_NumSubgroups; i++)
		s = max(s, red_sh[i]);
	barrier();
	return s;
}
