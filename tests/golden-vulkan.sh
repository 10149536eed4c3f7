#!/bin/sh
# The golden end-to-end suite on the Vulkan backend (lavapipe in CI).
BELT_TEST_BACKEND=vulkan exec "${BELT_BUILDDIR:-.}/tests/check_golden"
