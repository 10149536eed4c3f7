#!/bin/sh
# The golden end-to-end suite on the Vulkan backend (lavapipe in CI), with
# the weights split into many small buffers, as large models are on GPUs.
# In software Vulkan the 29M model checks each prompt over its first tokens
# only (BELT_GOLDEN_SHORT); the CPU suite and the GPU machine run its long
# rows in full.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 \
	BELT_GOLDEN_SHORT="${BELT_GOLDEN_SHORT-pycoder29M.f16.gguf,pycoder29M.q8_0.gguf}" \
	exec "${BELT_BUILDDIR:-.}/tests/check_golden"
