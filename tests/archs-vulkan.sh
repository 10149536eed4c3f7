#!/bin/sh
# check_archs (the architectures beyond Llama 1/2 against llama.cpp) on
# the Vulkan backend, lavapipe in CI.
BELT_TEST_BACKEND=vulkan exec "${BELT_BUILDDIR:-.}/tests/check_archs"
