#!/usr/bin/env python3
"""JSON Schema constrained generations checked by an independent validator.

Each case runs `belt run --json-schema` ($BELT_BIN; the CPU backend, or
$BELT_TEST_BACKEND: tests/schema-validate-vulkan.sh, where the grammar's
mask and the sampler run on the device) greedily and with 20 seeds at
temperature 0.8. Every output that ends at the end of
generation (fewer tokens than -n) must parse as JSON and validate against
its schema with python3-jsonschema (Debian's; its validator for the
schema's draft, 2020-12 by default); outputs cut off by -n are prefixes
and are not judged, but every case must have outputs that end. The cases:
the six schemas of $BELT_SHARED_DIR/grammars/schemas on pycoder29M, and
schemas of each construct the converter reads (given as text, not a
file) on stories260K, and on pycoder29M where keys are free (stories260K
writes stories in them). Exit 0 when all hold, 1 otherwise.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("schema-validate: python3-jsonschema is needed (apt-get install python3-jsonschema)")
    sys.exit(1)

SEEDS = 20
SHARED = os.environ.get("BELT_SHARED_DIR", "")
BIN = os.environ.get("BELT_BIN", "./belt")
BACKEND = os.environ.get("BELT_TEST_BACKEND") or "cpu"
# the cases of these models only (comma-separated; unset: every case)
MODELS = [m for m in os.environ.get("BELT_SCHEMA_MODELS", "").split(",") if m]

# (model, schema: a file under grammars/schemas or the schema itself, prompt, n_predict)
CASES = [
    ("pycoder29M.f16.gguf", "person.json", "person = ", 160),
    ("pycoder29M.f16.gguf", "enum-choice.json", "result = ", 96),
    ("pycoder29M.f16.gguf", "function-call.json", "call = ", 160),
    ("pycoder29M.f16.gguf", "nested-refs.json", "shape = ", 160),
    ("pycoder29M.f16.gguf", "anyof-dates.json", "record = ", 160),
    ("pycoder29M.f16.gguf", "list-of-strings.json", "names = ", 96),
    ("stories260K.f32.gguf", {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20},
                       "n": {"type": "integer", "minimum": -20, "maximum": 1234},
                       "big": {"type": "integer", "minimum": 105},
                       "neg": {"type": "integer", "exclusiveMaximum": -7},
                       "x": {"type": "number"}},
        "required": ["name", "n"]}, "Tom said", 256),
    ("stories260K.f32.gguf", {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[A-Z]{2}-\\d{2,4}(x|yz)?$"},
                       "word": {"type": "string", "pattern": "a.b"},
                       "odd": {"type": "string", "pattern": "^[^a-z0-9 ]{1,3}$"},
                       "w": {"type": "string", "pattern": "^\\w+\\s\\S\\D$"}},
        "required": ["id", "word", "odd", "w"], "additionalProperties": False},
        "Lily wanted", 256),
    ("pycoder29M.f16.gguf", {
        "type": "object",
        "properties": {"a": {"type": "boolean"}, "b": {"type": "null"}},
        "additionalProperties": {"type": ["integer", "string"], "maxLength": 4}},
        "config = ", 128),
    ("pycoder29M.f16.gguf", {
        "type": "object", "properties": {"k": {"const": "v"}}, "additionalProperties": True},
        "config = ", 128),
    ("stories260K.f32.gguf", {
        "$defs": {"node": {"type": "object",
                           "properties": {"v": {"enum": [1, "two", None, [3]]},
                                          "next": {"anyOf": [{"$ref": "#/$defs/node"},
                                                             {"type": "null"}]}},
                           "required": ["v", "next"], "additionalProperties": False}},
        "$ref": "#/$defs/node"}, "Mom asked", 256),
    ("stories260K.f32.gguf", {
        "type": "array",
        "prefixItems": [{"type": "string", "format": "date"},
                        {"type": "string", "format": "time"},
                        {"type": "string", "format": "date-time"},
                        {"type": "string", "format": "uuid"},
                        {"type": "string", "minLength": 2, "maxLength": 3}]},
        "One day", 256),
    ("stories260K.f32.gguf", {
        "allOf": [{"properties": {"p": {"type": "integer", "maximum": 0}}},
                  {"$ref": "#/definitions/q"},
                  {"anyOf": [{"properties": {"r": {"type": "array", "items": {"type": "boolean"},
                                                   "minItems": 1, "maxItems": 3}}}]}],
        "definitions": {"q": {"type": "object", "properties": {"q": {"type": "string"}}}}},
        "She saw", 256),
    ("stories260K.f32.gguf", {
        "oneOf": [{"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                  {"type": "object", "additionalProperties": False},
                  {"type": "string", "maxLength": 1}]},
        "He ran", 128),
]


def run(model, schema_arg, prompt, n, seed):
    argv = [BIN, "run", "-m", os.path.join(SHARED, "models", model), "-p", prompt,
            "-n", str(n), "--json-schema", schema_arg, "--backend", BACKEND, "-t", "1"]
    if seed is not None:
        argv += ["--temp", "0.8", "--seed", str(seed)]
    p = subprocess.run(argv, capture_output=True)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        return None, None, "exit %d: %s" % (p.returncode, err.strip())
    m = re.search(r"decode (\d+) tokens", err)
    if not m:
        return None, None, "no stats line: " + err.strip()
    # belt run ends the text with a newline of its own
    return p.stdout.decode("utf-8")[:-1], int(m.group(1)) < n, None


def main():
    failures = 0
    pool = concurrent.futures.ThreadPoolExecutor(2)  # belt runs on one thread each
    for model, schema, prompt, n in CASES:
        if MODELS and model not in MODELS:
            continue
        if isinstance(schema, str):
            arg = os.path.join(SHARED, "grammars", "schemas", schema)
            with open(arg) as f:
                doc = json.load(f)
            name = schema
        else:
            doc = schema
            arg = json.dumps(schema)
            name = arg[:48] + "..."
        cls = jsonschema.validators.validator_for(doc, default=jsonschema.Draft202012Validator)
        cls.check_schema(doc)
        validator = cls(doc)
        ended = 0
        seeds = [None] + list(range(1, SEEDS + 1))
        results = pool.map(lambda seed: run(model, arg, prompt, n, seed), seeds)
        for seed, (text, eog, why) in zip(seeds, results):
            what = "greedy" if seed is None else "seed %d" % seed
            if why:
                print("FAIL %s %s %s: %s" % (model, name, what, why))
                failures += 1
                continue
            if not eog:
                continue
            ended += 1
            try:
                value = json.loads(text)
                validator.validate(value)
            except (ValueError, jsonschema.ValidationError) as e:
                print("FAIL %s %s %s: %r: %s" % (model, name, what, text,
                                                 str(e).splitlines()[0]))
                failures += 1
        print("%s %s %s: %d of %d outputs ended; each valid JSON under the schema"
              % (BACKEND, model, name, ended, SEEDS + 1))
        if ended == 0:
            print("FAIL %s %s: no output ended: raise n_predict" % (model, name))
            failures += 1
    print("schema-validate: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
