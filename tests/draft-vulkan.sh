#!/bin/sh
# The speculative-decoding suite on the Vulkan backend (lavapipe in CI),
# weights in small buffers as on GPUs. In software Vulkan each prompt runs
# over its first 16 tokens (BELT_DRAFT_TOKENS); the CPU suite and the GPU
# machine run the references' full lengths.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 \
	BELT_DRAFT_TOKENS="${BELT_DRAFT_TOKENS-16}" \
	exec "${BELT_BUILDDIR:-.}/tests/check_draft"
