#!/bin/sh
# llama.cpp's greedy constrained generations (tests/grammar_refs.c) on the
# Vulkan backend (lavapipe in CI): the mask applied and the token picked on
# the device, in gated runs whose host writes each mask while the device
# runs the position's layers (core/session/gated.c).
BELT_TEST_BACKEND=vulkan exec "${BELT_BUILDDIR:-.}/tests/check_grammar_refs"
