/* Moving cache entries between positions (a tree pass's accepted branch,
 * speculate.c): position p of a layer's slice lies in slot p mod slots
 * (doc/ops.md, "Slots"), a row of the cache's type per slot, so an entry
 * is one contiguous region per layer of each cache. */
#include "belt/plugin.h"
#include "session/session.h"

bool belt_session_kv_movable(const struct belt_session *s)
{
	const struct belt_backend_ops *be = s->m->be;
	return BELT_ABI_HAS(be, 7) && be->buffer_copy && !s->group && !s->seqs;
}

uint32_t belt_session_kv_regions(const struct belt_session *s)
{
	uint32_t n = 0;
	for (unsigned b = 0; b < s->n_bufs; b++)
		if (s->bufs[b].kv)
			n += s->m->n_layer;
	return n;
}

int belt_session_kv_move(struct belt_session *s, const uint32_t *from, const uint32_t *to,
			 uint32_t n, struct belt_copy *regions, char *err, size_t errsz)
{
	uint32_t nr = 0;
	for (uint32_t i = 0; i < n; i++)
		for (unsigned b = 0; b < s->n_bufs; b++) {
			const struct dispatch_buffer *sb = &s->bufs[b];
			for (uint32_t l = 0; sb->kv && l < s->m->n_layer; l++) {
				const struct dispatch_kv_layer *kl = &sb->layers[l];
				if (!kl->slots || !kl->bytes)
					continue;
				uint64_t row = kl->bytes / kl->slots;
				regions[nr++] = (struct belt_copy){
					.src = kl->buf,
					.dst = kl->buf,
					.src_off = kl->offset + (uint64_t)(from[i] % kl->slots) * row,
					.dst_off = kl->offset + (uint64_t)(to[i] % kl->slots) * row,
					.size = row};
			}
		}
	if (s->m->be->buffer_copy(s->m->be_ctx, regions, nr, err, errsz))
		return belt_err_prefix(err, errsz, "moving cache entries");
	return 0;
}
