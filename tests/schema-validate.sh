#!/bin/sh
# JSON Schema constrained generations of belt run, greedy and sampled,
# parsed and validated by python3-jsonschema (tests/schema_validate.py).
# Needs BELT_BIN and BELT_SHARED_DIR, as make check sets them.
: "${BELT_BIN:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
exec python3 "$(dirname "$0")/schema_validate.py"
