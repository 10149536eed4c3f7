#!/bin/sh
# The groups-of-sessions suite on the Vulkan backend (lavapipe in CI),
# weights in small buffers as on GPUs; pycoder29M runs on the CPU only.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 \
	exec "${BELT_BUILDDIR:-.}/tests/check_group"
