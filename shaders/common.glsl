// Shared by every shader: push constants, the meta buffer, helpers.
// Must match struct vk_pc, VK_META_BINDING and VK_WORK_BINDING in
// plugins/backend-vulkan/vk.h.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

layout(push_constant, std430) uniform PC {
	uint t;       // token slot within the run; batched: row_base()
	uint aux[3];  // op-specific
	uint o[8];    // binding i starts o[i] elements into its range
	uint p[16];   // params, as 32-bit words
	uint mode;    // the command's patch kind and rows: MODE_* below
} pc;
// a command binding caches: their slots (kv_ring), in the last param
// word, which no such op's params reach (vk.h's VK_PC_KV_SLOTS)
#define KV_SLOTS pc.p[15]

// Meta: the run's values, written by table_run before each submit. A
// batched table's tree runs put (depth, parent) of row r in words
// META_ROWS + 2r, META_ROWS + 2r + 1, a table of sequences (position,
// part of the caches) of its sequence; rope frequencies follow (freq[],
// offsets from the host). VK_META_HEADER in vk.h.
layout(set = 0, binding = 8, std430) readonly buffer Meta {
	uint base_pos;
	uint stop_on; // early exit after an end-of-generation token
	uint n_rows;  // batched: the pass's rows
	uint tree;    // batched: 1 when the rows form a tree (BELT_RUN_TREE)
	uint seqs;    // batched: 1 in a table of sequences (belt_table.seqs)
	uint spare[3];
	float freq[];
} meta;
layout(set = 0, binding = 8, std430) readonly buffer MetaU { uint meta_u[]; };
#define META_ROWS 8u

// The plan's work buffer: per-command scratch (partial results, counters
// that the last workgroup resets); a command's words start at aux[2].
layout(set = 0, binding = 9, std430) coherent buffer WorkF { float workf[]; };
layout(set = 0, binding = 9, std430) coherent buffer WorkU { uint worku[]; };
layout(set = 0, binding = 9, std430) coherent buffer Work4 { vec4 work4[]; };

// Work word 0 is the run's stop word: set by argmax after an
// end-of-generation token, cleared before each run. Every shader starts
// with STOP_CHECK(), so the rest of the run costs only empty dispatches;
// where the device skips a stopped run's dispatches itself (conditional
// rendering, each token slot; the host sets STOP 0: VK_STOP_SPEC_ID in
// vk.h), the check is compiled out: the trip to memory for the word
// delayed every dispatch's first loads (H200, 1B Q4_0 tg128: 3%).
layout(constant_id = 31) const uint STOP = 1u;
#define STOP_CHECK()                        \
	if (STOP != 0u && worku[0] != 0u)   \
		return

// After each workgroup has written its partial result to work: true in
// the last of n workgroups to arrive at work word counter (which it must
// reset), with every other workgroup's writes visible. All threads call it.
// DEFINE_LAST_WORKGROUP makes it for a counter in another array (a shader
// that must not write the work buffer's binding: matvec_fused).
#define DEFINE_LAST_WORKGROUP(NAME, ARR)                                       \
	shared bool NAME##_sh;                                                 \
	bool NAME(uint counter, uint n)                                        \
	{                                                                      \
		memoryBarrierBuffer();                                         \
		barrier();                                                     \
		if (gl_LocalInvocationIndex == 0)                              \
			NAME##_sh = atomicAdd(ARR[counter], 1u) == n - 1;      \
		barrier();                                                     \
		memoryBarrierBuffer();                                         \
		return NAME##_sh;                                              \
	}
DEFINE_LAST_WORKGROUP(last_workgroup, worku)

// pc.mode: bits 0..3 the command's patch kind (enum belt_patch); bits
// 8..11 that of a command fused into it (rope_kv into matvec_fused,
// sample_gumbel into the sampler's argmax); MODE_BATCHED: a batched
// table's command; MODE_LAST: it runs for the pass's last row only
// (BELT_RUN_HEAD_LAST_ONLY); bits 16..31 (batched): the rows of the
// table the dispatch covers, from row pc.t (all of them, or a range
// whose row bindings fit one descriptor range: the host binds them from
// row pc.t on). Must match VK_MODE_* in vk.h.
#define PATCH_NONE 0u
#define PATCH_TOKEN_OFFSET 1u
#define PATCH_POSITION 2u
#define PATCH_KV_LEN 3u
#define PATCH_POS_AND_KV 4u
#define PATCH_ARGMAX_OUTPUT 5u
#define MODE_BATCHED 16u
#define MODE_LAST 32u

// What a command's patch gives row r of its pass, as belt_row_at in
// core/dispatch/ops.c: every field the patch does not name is 0. A
// one-row table's pass is at position base + t and has row 0 only; a
// batched table's starts at base, row r at base + r (base + depth(r) in a
// tree).
bool is_batched() { return (pc.mode & MODE_BATCHED) != 0u; }
uint pass_pos() { return meta.base_pos + (is_batched() ? 0u : pc.t); }
uint row_depth(uint r)
{
	return is_batched() && meta.tree != 0u ? meta_u[META_ROWS + 2u * r] : r;
}
int row_parent(uint r) { return int(meta_u[META_ROWS + 2u * r + 1u]); }
uint patch_of(uint which) { return (pc.mode >> (8u * which)) & 15u; }
uint at_token(uint r)
{
	return patch_of(0u) == PATCH_TOKEN_OFFSET ? pass_pos() + r : 0u;
}
bool patch_positions(uint pt)
{
	return pt == PATCH_POSITION || pt == PATCH_POS_AND_KV;
}
// A table of sequences: row r at its own position seq_pos(r), its cache
// entries in part seq_part(r) of each cache, parts of KV_SLOTS slots
// (belt_table.seq_ctx).
bool is_seqs() { return is_batched() && meta.seqs != 0u; }
uint seq_pos(uint r) { return meta_u[META_ROWS + 2u * r]; }
uint seq_part(uint r) { return meta_u[META_ROWS + 2u * r + 1u]; }
// which: 0 the command's own patch, 1 its fused-in command's
uint at_position(uint which, uint r)
{
	if (!patch_positions(patch_of(which)))
		return 0u;
	return is_seqs() ? seq_pos(r) : pass_pos() + row_depth(r);
}
// A cache (or a sequence's part of it) of KV_SLOTS slots keeps position
// p in slot p mod KV_SLOTS: a sliding-window layer's ring where that is
// fewer than the context (doc/ops.md); its readers read the window only.
uint kv_ring(uint s)
{
	return KV_SLOTS == 0u || s < KV_SLOTS ? s : s % KV_SLOTS;
}
uint at_slot(uint which, uint r)
{
	if (!patch_positions(patch_of(which)))
		return 0u;
	if (is_seqs())
		return seq_part(r) * KV_SLOTS + kv_ring(seq_pos(r));
	return kv_ring(pass_pos() + r);
}
bool patch_kv(uint pt) { return pt == PATCH_KV_LEN || pt == PATCH_POS_AND_KV; }
uint at_n_kv(uint r)
{
	if (!patch_kv(patch_of(0u)))
		return 0u;
	return is_seqs() ? seq_pos(r) + 1u : pass_pos() + r + 1u;
}
// the first cache slot row r attends (0 but in a table of sequences)
uint at_kv_base(uint r)
{
	return patch_kv(patch_of(0u)) && is_seqs() ? seq_part(r) * KV_SLOTS : 0u;
}
uint at_out(uint r)
{
	if (patch_of(0u) != PATCH_ARGMAX_OUTPUT)
		return 0u;
	return is_batched() ? r : pass_pos() + 1u;
}
// The rows this dispatch computes: [row_first(), row_end()), the run's
// within the dispatch's; row-wise kernels take row row_first() +
// gl_WorkGroupID.z (the host dispatches a z layer per row it covers, or
// one with MODE_LAST) and return at once past row_end(). Row r of the
// pass is row row_in(r) of the dispatch's row bindings.
uint row_base() { return is_batched() ? pc.t : 0u; }
uint row_in(uint r) { return r - row_base(); }
uint row_end()
{
	return is_batched() ? min(meta.n_rows, pc.t + (pc.mode >> 16)) : 1u;
}
uint row_first()
{
	uint f = is_batched() && (pc.mode & MODE_LAST) != 0u ? meta.n_rows - 1u : 0u;
	return max(f, row_base());
}
uint row_z() { return row_first() + gl_WorkGroupID.z; }
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

// float f >= 0 rounded to fp16 (to nearest, ties to even) and back, as the
// CPU's _cvtss_sh(f, 0): packHalf2x16 leaves the rounding to the device
float half_rte(float f)
{
	if (f < 6.103515625e-05) // fp16 subnormal: steps of 2^-24
		return roundEven(f * 16777216.0) * 5.9604644775390625e-08;
	uint b = floatBitsToUint(f);
	b = (b + 0xfffu + ((b >> 13) & 1u)) & ~0x1fffu;
	float r = uintBitsToFloat(b);
	return r > 65504.0 ? uintBitsToFloat(0x7f800000u) : r;
}

uint pack_s8(ivec4 q)
{
	uvec4 b = uvec4(q) & 0xffu;
	return b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
}
