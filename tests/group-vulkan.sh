#!/bin/sh
# The groups-of-sessions suite on the Vulkan backend (lavapipe in CI),
# weights in small buffers as on GPUs, the KV caches in pieces of two
# layers (stories260K's group: 64 KiB a layer); pycoder29M runs on the CPU
# only.
BELT_TEST_BACKEND=vulkan BELT_WEIGHT_PIECE_MAX=262144 BELT_KV_PIECE_MAX=131072 \
	exec "${BELT_BUILDDIR:-.}/tests/check_group"
