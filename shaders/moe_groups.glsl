// The grouping moe_route leaves in its work area at word g for the
// products grouped by expert (plugins/backend-vulkan/moe.c): word g its
// counter, then n_expert counts, n_expert offsets, then the entries (row
// within the dispatch's bindings times n_used, plus the slot), each
// expert's together from its offset. Included by moe_route.comp,
// matvec.comp and matmul_cm.comp (GROUPED).
uint moe_counts_at(uint g) { return g + 1u; }
uint moe_offsets_at(uint g, uint ne) { return g + 1u + ne; }
uint moe_entries_at(uint g, uint ne) { return g + 1u + 2u * ne; }
