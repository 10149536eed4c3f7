#!/bin/sh
# The golden end-to-end suite on the Vulkan backend (lavapipe in CI), with
# the weights split into many small buffers, as large models are on GPUs.
# In software Vulkan the 29M model checks each prompt over its first tokens
# only (BELT_GOLDEN_SHORT); the CPU suite and the GPU machine run its long
# rows in full. split_kv attention switches to its grouped kernel from 24
# positions here (512 by default), so that the references check both
# kernels and runs that cross from one to the other.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 \
	BELT_VK_ATT_GQA_FROM="${BELT_VK_ATT_GQA_FROM-24}" \
	BELT_GOLDEN_SHORT="${BELT_GOLDEN_SHORT-pycoder29M.f16.gguf,pycoder29M.q8_0.gguf}" \
	exec "${BELT_BUILDDIR:-.}/tests/check_golden"
