#!/bin/sh
# check_quant (every quantization type against llama.cpp) on the Vulkan
# backend, lavapipe in CI.
BELT_TEST_BACKEND=vulkan exec "${BELT_BUILDDIR:-.}/tests/check_quant"
