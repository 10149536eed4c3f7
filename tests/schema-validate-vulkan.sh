#!/bin/sh
# JSON Schema outputs validated by python3-jsonschema (schema_validate.py)
# on the Vulkan backend (lavapipe in CI), where the grammar's mask, the
# sampler and the pick run on the device: the cases on stories260K (a
# pycoder29M token costs lavapipe too long for 21 runs a schema).
BELT_TEST_BACKEND=vulkan BELT_SCHEMA_MODELS=stories260K.f32.gguf \
	exec python3 "$(dirname "$0")/schema_validate.py"
