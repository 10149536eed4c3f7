#!/bin/sh
# The batched-pass suite on the Vulkan backend (lavapipe in CI), with the
# weights split into many small buffers, as large models are on GPUs.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 exec "${BELT_BUILDDIR:-.}/tests/check_batch"
