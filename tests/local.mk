# End-to-end tests of the core through the real plugins and YAML.
noinst_HEADERS += tests/ref.h tests/llref.h tests/kquant_ref.h tests/quant_ref.h

check_PROGRAMS += tests/check_golden
TESTS += tests/check_golden
tests_check_golden_SOURCES = tests/golden.c tests/ref.c tests/ref_model.c
tests_check_golden_CFLAGS = $(TEST_CFLAGS)
tests_check_golden_LDADD = $(TEST_LIBS)

# The synthetic-model generator (tests and benchmarks).
noinst_PROGRAMS += tests/belt-synth
noinst_HEADERS += tests/synth/synth.h
tests_belt_synth_SOURCES = tests/synth/main.c tests/synth/synth.c
tests_belt_synth_LDADD = libbelt.la

# Malformed inputs through the CLI, with two deliberately broken plugins.
# Every quantization type against llama.cpp (models/quant in the shared folder).
check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/quant.c tests/llref.c tests/ref.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
tests_check_quant_LDADD = $(TEST_LIBS) $(JANSSON_LIBS) -lm

# The architectures beyond Llama 1/2 against llama.cpp (models/arch).
check_PROGRAMS += tests/check_archs
TESTS += tests/check_archs
tests_check_archs_SOURCES = tests/archs.c tests/llref.c tests/ref.c tests/synth/synth.c
tests_check_archs_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
tests_check_archs_LDADD = $(TEST_LIBS) $(JANSSON_LIBS) -lm

check_PROGRAMS += tests/check_malformed
TESTS += tests/check_malformed
tests_check_malformed_SOURCES = tests/malformed.c tests/ref.c tests/synth/synth.c
tests_check_malformed_CFLAGS = $(TEST_CFLAGS)
tests_check_malformed_LDADD = $(TEST_LIBS)
check_LTLIBRARIES = tests/plugins/backend-badabi.la tests/plugins/backend-nosym.la
TEST_PLUGIN_FLAGS = -module -avoid-version -shared -rpath /nowhere $(SAN_CFLAGS)
tests_plugins_backend_badabi_la_SOURCES = tests/plugins/badabi.c
tests_plugins_backend_badabi_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_backend_nosym_la_SOURCES = tests/plugins/nosym.c
tests_plugins_backend_nosym_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
AM_TESTS_ENVIRONMENT += BELT_TEST_PLUGINS='$(abs_top_builddir)/tests/plugins'; export BELT_TEST_PLUGINS;

# The registry by (kind, name) and the ABI ranges, with test plugins of
# every kind: ones that work, and backends of the oldest and a newer ABI.
check_PROGRAMS += tests/check_registry
TESTS += tests/check_registry
tests_check_registry_SOURCES = tests/registry.c tests/synth/synth.c
tests_check_registry_CFLAGS = $(TEST_CFLAGS)
tests_check_registry_LDADD = $(TEST_LIBS) -lm
check_LTLIBRARIES += tests/plugins/grammar-test.la tests/plugins/draft-test.la \
	tests/plugins/backend-oldabi.la tests/plugins/backend-newabi.la
tests_plugins_grammar_test_la_SOURCES = tests/plugins/grammar-test.c
tests_plugins_grammar_test_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_grammar_test_la_LIBADD = libbelt.la
tests_plugins_draft_test_la_SOURCES = tests/plugins/draft-test.c
tests_plugins_draft_test_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_draft_test_la_LIBADD = libbelt.la
tests_plugins_backend_oldabi_la_SOURCES = tests/plugins/backend-oldabi.c
tests_plugins_backend_oldabi_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_backend_oldabi_la_LIBADD = libbelt.la
tests_plugins_backend_newabi_la_SOURCES = tests/plugins/backend-newabi.c
tests_plugins_backend_newabi_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_backend_newabi_la_LIBADD = libbelt.la
check_LTLIBRARIES += tests/plugins/arch-broken.la
tests_plugins_arch_broken_la_SOURCES = tests/plugins/arch-broken.c
tests_plugins_arch_broken_la_LDFLAGS = $(TEST_PLUGIN_FLAGS)
tests_plugins_arch_broken_la_LIBADD = libbelt.la

# Speculative decoding: greedy and sampled output with drafts equals it
# without them (doc/drafting.md), on every shipped model.
check_PROGRAMS += tests/check_draft
TESTS += tests/check_draft
tests_check_draft_SOURCES = tests/draft.c tests/ref.c tests/ref_model.c \
	plugins/draft-ngram/ngram.c
tests_check_draft_CFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/plugins/draft-ngram
tests_check_draft_CPPFLAGS = $(AM_CPPFLAGS) -DBELT_TEST_SRCDIR='"$(abs_top_srcdir)/tests"'
tests_check_draft_LDADD = $(TEST_LIBS) -lm
if HAVE_VULKAN
TESTS += tests/draft-vulkan.sh
endif
EXTRA_DIST += tests/draft-vulkan.sh

# Prefix reuse: a session's generations that reuse what its KV cache
# holds give the ids of a reset session (doc/chat.md).
check_PROGRAMS += tests/check_prefix
TESTS += tests/check_prefix
tests_check_prefix_SOURCES = tests/prefix.c tests/ref.c tests/ref_model.c
tests_check_prefix_CFLAGS = $(TEST_CFLAGS)
tests_check_prefix_LDADD = $(TEST_LIBS)
if HAVE_VULKAN
TESTS += tests/prefix-vulkan.sh
endif
EXTRA_DIST += tests/prefix-vulkan.sh
# Groups of sessions (continuous batching): sessions decoding at the same
# time in shared passes give the ids of plain sessions (doc/serve.md).
check_PROGRAMS += tests/check_group
TESTS += tests/check_group
tests_check_group_SOURCES = tests/group.c tests/ref.c tests/ref_model.c
tests_check_group_CFLAGS = $(TEST_CFLAGS) $(PTHREAD_CFLAGS)
tests_check_group_LDADD = $(TEST_LIBS) $(PTHREAD_LIBS)
if HAVE_VULKAN
TESTS += tests/group-vulkan.sh
endif
EXTRA_DIST += tests/group-vulkan.sh
# belt chat driven through tmux: turns that evaluate only their new
# tokens, Ctrl-C, /clear, /exit.
TESTS += tests/chat.sh
EXTRA_DIST += tests/chat.sh tests/chat-template.jinja

# Zero heap allocations in the decode hot path.
check_PROGRAMS += tests/check_noalloc
TESTS += tests/check_noalloc
tests_check_noalloc_SOURCES = tests/noalloc.c tests/ref.c
tests_check_noalloc_CFLAGS = $(TEST_CFLAGS)
tests_check_noalloc_LDADD = $(TEST_LIBS)

noinst_HEADERS += tests/sampler_ref.h tests/cmd.h tests/mask_check.h tests/silu_topk_check.h

if HAVE_VULKAN
TESTS += tests/golden-vulkan.sh tests/batch-vulkan.sh tests/quant-vulkan.sh tests/archs-vulkan.sh

# The gumbel sampler's GPU chain ops on the Vulkan backend, against the
# same reference as check_sampler.
check_PROGRAMS += tests/check_sampler_vulkan
TESTS += tests/check_sampler_vulkan
tests_check_sampler_vulkan_SOURCES = tests/sampler_vulkan.c tests/sampler_ref.c
tests_check_sampler_vulkan_CFLAGS = $(TEST_CFLAGS) $(VULKAN_CFLAGS)
tests_check_sampler_vulkan_LDADD = $(TEST_LIBS) $(LTDL_LIBS) -lm
endif
EXTRA_DIST += tests/lsan.supp tests/golden-vulkan.sh tests/batch-vulkan.sh tests/quant-vulkan.sh tests/archs-vulkan.sh tests/bench-synthetic.sh tests/run-tests.sh tests/device-run.sh tests/device-debs.sh

# The batched pass against the one-token path, on every shipped model.
check_PROGRAMS += tests/check_batch
TESTS += tests/check_batch
tests_check_batch_SOURCES = tests/batch.c tests/ref.c
tests_check_batch_CFLAGS = $(TEST_CFLAGS)
tests_check_batch_LDADD = $(TEST_LIBS)

# belt perplexity against llama.cpp's figures ($BELT_SHARED_DIR/ppl), and
# the -b / -ub / -d flags of run, bench and perplexity, through $BELT_BIN.
check_PROGRAMS += tests/check_perplexity
TESTS += tests/check_perplexity
tests_check_perplexity_SOURCES = tests/perplexity.c tests/ref.c
tests_check_perplexity_CFLAGS = $(TEST_CFLAGS)
tests_check_perplexity_LDADD = $(CHECK_LIBS) -lm

# The real belt binary under misuse (issue 13): write errors, signals, a
# full context, odd flag values, corrupt keys; and the stop reasons.
check_PROGRAMS += tests/check_cli_misuse
TESTS += tests/check_cli_misuse
tests_check_cli_misuse_SOURCES = tests/cli_misuse.c tests/ref.c tests/synth/synth.c
tests_check_cli_misuse_CFLAGS = $(TEST_CFLAGS)
tests_check_cli_misuse_CPPFLAGS = $(AM_CPPFLAGS) -DBELT_TEST_SRCDIR='"$(abs_top_srcdir)/tests"'
tests_check_cli_misuse_LDADD = $(TEST_LIBS)

# core/template: chat templates against $BELT_SHARED_DIR/templates'
# reference renderings and, for new conversations, the reference renderer
# itself (python3-jinja2); the language, its errors and its limits.
check_PROGRAMS += tests/check_template
TESTS += tests/check_template
tests_check_template_SOURCES = tests/template.c
tests_check_template_CPPFLAGS = $(AM_CPPFLAGS) -DBELT_TEST_SRCDIR='"$(abs_top_srcdir)/tests"'
tests_check_template_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
tests_check_template_LDADD = $(TEST_LIBS) $(JANSSON_LIBS)
EXTRA_DIST += tests/template-cases.json tests/fuzz/template.dict
# The template fuzz target (tests/fuzz/README.md) over the shared templates.
check_PROGRAMS += tests/fuzz/replay-template
tests_fuzz_replay_template_SOURCES = tests/fuzz/template.c tests/fuzz/replay.c
tests_fuzz_replay_template_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_replay_template_LDADD = libbelt.la $(JANSSON_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-template
tests_fuzz_fuzz_template_SOURCES = tests/fuzz/template.c
tests_fuzz_fuzz_template_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_template_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_template_LDADD = libbelt.la $(JANSSON_LIBS)
endif

# core/arch: the YAML loaders and expressions, with what fuzzing found.
check_PROGRAMS += tests/check_arch
TESTS += tests/check_arch
tests_check_arch_SOURCES = tests/arch.c
tests_check_arch_CFLAGS = $(TEST_CFLAGS)
tests_check_arch_LDADD = $(TEST_LIBS)

# What fuzzing found in core/gguf and core/tokenizer (tests/fuzz/).
check_PROGRAMS += tests/check_fuzz_found
TESTS += tests/check_fuzz_found
tests_check_fuzz_found_SOURCES = tests/fuzz_found.c
tests_check_fuzz_found_CFLAGS = $(TEST_CFLAGS)
tests_check_fuzz_found_LDADD = $(TEST_LIBS)

# The installed belt runs from its prefix alone, with no environment: a
# copy of the source is configured, built, installed and deleted first
# (doc/install.md).
TESTS += tests/install-test.sh
EXTRA_DIST += tests/install-test.sh

# The fuzz targets of tests/fuzz (the GGUF reader and tokenizer loader,
# the architecture YAML loader, the tokenizer, the command line), each
# built with tests/fuzz/replay.c as its main: every make check runs each
# over its seeds (tests/fuzz/seeds.sh) and a fixed set of deterministic
# mutations, with any compiler (tests/fuzz/README.md).
check_PROGRAMS += tests/fuzz/gguf-seeds tests/fuzz/replay-gguf tests/fuzz/replay-arch \
	tests/fuzz/replay-tokenizer tests/fuzz/replay-cli tests/fuzz/replay-quantize
TESTS += tests/fuzz/replay-check.sh
tests_fuzz_gguf_seeds_SOURCES = tests/fuzz/gguf-seeds.c
tests_fuzz_gguf_seeds_LDADD = libbelt.la
FUZZ_CLI_SOURCES = tests/fuzz/cli.c $(belt_SOURCES)
FUZZ_CLI_CPPFLAGS = $(AM_CPPFLAGS) -Dmain=belt_cli_main
FUZZ_TOKENIZER_CPPFLAGS = $(AM_CPPFLAGS) -DBELT_FUZZ_SHARED_DIR='"$(BELT_SHARED_DIR)"'
tests_fuzz_replay_gguf_SOURCES = tests/fuzz/gguf.c tests/fuzz/replay.c
tests_fuzz_replay_gguf_LDADD = libbelt.la
tests_fuzz_replay_arch_SOURCES = tests/fuzz/arch.c tests/fuzz/replay.c
tests_fuzz_replay_arch_LDADD = libbelt.la
tests_fuzz_replay_tokenizer_SOURCES = tests/fuzz/tokenizer.c tests/fuzz/replay.c
tests_fuzz_replay_tokenizer_CPPFLAGS = $(FUZZ_TOKENIZER_CPPFLAGS)
tests_fuzz_replay_tokenizer_LDADD = libbelt.la
tests_fuzz_replay_cli_SOURCES = $(FUZZ_CLI_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_cli_CPPFLAGS = $(FUZZ_CLI_CPPFLAGS)
tests_fuzz_replay_cli_LDADD = libbeltserve.la libbelt.la $(JANSSON_LIBS)
tests_fuzz_replay_quantize_SOURCES = tests/fuzz/quantize.c tests/fuzz/replay.c
tests_fuzz_replay_quantize_LDADD = libbelt.la -lm

# The same targets linked with libFuzzer, for long runs (configure
# --enable-fuzzing; tests/fuzz/README.md); make check then also runs each
# briefly. -no-install: no libtool wrapper, so they run (and libFuzzer's
# -fork/-jobs re-run them) as they are.
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-gguf tests/fuzz/fuzz-arch tests/fuzz/fuzz-tokenizer \
	tests/fuzz/fuzz-cli tests/fuzz/fuzz-quantize
FUZZ_LINK_FLAGS = $(AM_LDFLAGS) -no-install -fsanitize=fuzzer
tests_fuzz_fuzz_gguf_SOURCES = tests/fuzz/gguf.c
tests_fuzz_fuzz_gguf_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_gguf_LDADD = libbelt.la
tests_fuzz_fuzz_arch_SOURCES = tests/fuzz/arch.c
tests_fuzz_fuzz_arch_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_arch_LDADD = libbelt.la
tests_fuzz_fuzz_tokenizer_SOURCES = tests/fuzz/tokenizer.c
tests_fuzz_fuzz_tokenizer_CPPFLAGS = $(FUZZ_TOKENIZER_CPPFLAGS)
tests_fuzz_fuzz_tokenizer_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_tokenizer_LDADD = libbelt.la
tests_fuzz_fuzz_cli_SOURCES = $(FUZZ_CLI_SOURCES)
tests_fuzz_fuzz_cli_CPPFLAGS = $(FUZZ_CLI_CPPFLAGS)
tests_fuzz_fuzz_cli_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_cli_LDADD = libbeltserve.la libbelt.la $(JANSSON_LIBS)
tests_fuzz_fuzz_quantize_SOURCES = tests/fuzz/quantize.c
tests_fuzz_fuzz_quantize_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_quantize_LDADD = libbelt.la -lm
TESTS += tests/fuzz/run-fuzz.sh
endif
EXTRA_DIST += tests/fuzz/README.md tests/fuzz/run-fuzz.sh tests/fuzz/replay-check.sh \
	tests/fuzz/seeds.sh tests/fuzz/arch.dict tests/fuzz/cli.dict

# belt quantize: each type's round trip through tests/quant_ref.h, byte
# equality with llama-quantize's files ($BELT_SHARED_DIR/models/quant),
# the mix rules, malformed input and the CLI through $BELT_BIN.
check_PROGRAMS += tests/check_quantize
TESTS += tests/check_quantize
tests_check_quantize_SOURCES = tests/quantize.c tests/ref.c tests/synth/synth.c
tests_check_quantize_CFLAGS = $(TEST_CFLAGS) -ffp-contract=off
tests_check_quantize_LDADD = $(TEST_LIBS) -lm

# plugins/grammar-gbnf: the GBNF language construct by construct on a tiny
# vocabulary and on real ones, the shared grammars, errors and the mask's
# cost (tests/grammar_gbnf.c); llama.cpp's greedy constrained generations
# of $BELT_SHARED_DIR/grammars/references.tsv through belt run
# (tests/grammar_refs.c); the GBNF parser's fuzz target (tests/fuzz/gbnf.c).
check_PROGRAMS += tests/check_grammar_gbnf
TESTS += tests/check_grammar_gbnf
tests_check_grammar_gbnf_SOURCES = tests/grammar_gbnf.c tests/ref.c tests/ref_model.c \
	tests/synth/synth.c
tests_check_grammar_gbnf_CFLAGS = $(TEST_CFLAGS)
tests_check_grammar_gbnf_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/check_grammar_refs
TESTS += tests/check_grammar_refs tests/grammar-refs-vulkan.sh
EXTRA_DIST += tests/grammar-refs-vulkan.sh
tests_check_grammar_refs_SOURCES = tests/grammar_refs.c tests/ref.c
tests_check_grammar_refs_CFLAGS = $(TEST_CFLAGS)
tests_check_grammar_refs_LDADD = $(CHECK_LIBS)
# JSON Schemas (kind json-schema of plugins/grammar-gbnf): the language of
# each construct on a byte vocabulary, integer bounds, errors with their
# JSON pointers (tests/grammar_schema.c); greedy and sampled generations
# that end validate against their schemas with python3-jsonschema
# (tests/schema-validate.sh; on Vulkan, the mask and sampler on the
# device: tests/schema-validate-vulkan.sh).
check_PROGRAMS += tests/check_grammar_schema
TESTS += tests/check_grammar_schema tests/schema-validate.sh tests/schema-validate-vulkan.sh
tests_check_grammar_schema_SOURCES = tests/grammar_schema.c tests/ref.c tests/ref_model.c
tests_check_grammar_schema_CFLAGS = $(TEST_CFLAGS)
tests_check_grammar_schema_LDADD = $(TEST_LIBS)
EXTRA_DIST += tests/schema-validate.sh tests/schema-validate-vulkan.sh tests/schema_validate.py
# The GBNF fuzz target links the plugin's sources (not its module) and
# runs over the shared grammars (tests/fuzz/README.md).
FUZZ_GBNF_SOURCES = tests/fuzz/gbnf.c tests/fuzz/grammar_vocab.c tests/fuzz/grammar_vocab.h \
	$(GBNF_PLUGIN_SOURCES)
GBNF_PLUGIN_SOURCES = plugins/grammar-gbnf/errors.c \
	plugins/grammar-gbnf/parse.c plugins/grammar-gbnf/build.c plugins/grammar-gbnf/classes.c \
	plugins/grammar-gbnf/analyse.c plugins/grammar-gbnf/trie.c \
	plugins/grammar-gbnf/subtrees.c plugins/grammar-gbnf/loops.c plugins/grammar-gbnf/stacks.c \
	plugins/grammar-gbnf/step.c plugins/grammar-gbnf/walk.c plugins/grammar-gbnf/cache.c \
	plugins/grammar-gbnf/match.c
FUZZ_GBNF_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/plugins/grammar-gbnf
# the classes whose tables the plugin makes at compile (loops.c)
check_PROGRAMS += tests/check_grammar_loops
TESTS += tests/check_grammar_loops
tests_check_grammar_loops_SOURCES = tests/grammar_loops.c $(GBNF_PLUGIN_SOURCES)
tests_check_grammar_loops_CPPFLAGS = $(FUZZ_GBNF_CPPFLAGS)
tests_check_grammar_loops_CFLAGS = $(TEST_CFLAGS)
tests_check_grammar_loops_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/fuzz/replay-gbnf
tests_fuzz_replay_gbnf_SOURCES = $(FUZZ_GBNF_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_gbnf_CPPFLAGS = $(FUZZ_GBNF_CPPFLAGS)
tests_fuzz_replay_gbnf_LDADD = libbelt.la
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-gbnf
tests_fuzz_fuzz_gbnf_SOURCES = $(FUZZ_GBNF_SOURCES)
tests_fuzz_fuzz_gbnf_CPPFLAGS = $(FUZZ_GBNF_CPPFLAGS)
tests_fuzz_fuzz_gbnf_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_gbnf_LDADD = libbelt.la
endif
EXTRA_DIST += tests/fuzz/gbnf.dict
# The JSON Schema fuzz target: the converter's sources and the GBNF ones.
FUZZ_SCHEMA_SOURCES = tests/fuzz/schema.c $(FUZZ_GBNF_SOURCES:tests/fuzz/gbnf.c=) \
	plugins/grammar-gbnf/schema.c plugins/grammar-gbnf/schema_object.c \
	plugins/grammar-gbnf/schema_int.c plugins/grammar-gbnf/schema_regex.c \
	plugins/grammar-gbnf/schema_formats.c plugins/grammar-gbnf/schema_text.c
check_PROGRAMS += tests/fuzz/replay-schema
tests_fuzz_replay_schema_SOURCES = $(FUZZ_SCHEMA_SOURCES) tests/fuzz/replay.c
tests_fuzz_replay_schema_CPPFLAGS = $(FUZZ_GBNF_CPPFLAGS)
tests_fuzz_replay_schema_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_replay_schema_LDADD = libbelt.la $(JANSSON_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz-schema
tests_fuzz_fuzz_schema_SOURCES = $(FUZZ_SCHEMA_SOURCES)
tests_fuzz_fuzz_schema_CPPFLAGS = $(FUZZ_GBNF_CPPFLAGS)
tests_fuzz_fuzz_schema_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_schema_LDFLAGS = $(FUZZ_LINK_FLAGS)
tests_fuzz_fuzz_schema_LDADD = libbelt.la $(JANSSON_LIBS)
endif
EXTRA_DIST += tests/fuzz/schema.dict

# belt serve (core/serve, doc/serve.md): the stop strings, request
# checking and the OpenAI objects without a socket (tests/serve.c); the
# server driven with curl, answers compared with belt run, errors, slots,
# disconnects and signals (tests/serve.sh); the real openai npm package
# against it (tests/serve-openai.sh, installed into the build folder);
# the chat page in headless Chromium (tests/serve-page.sh, playwright-core
# installed likewise).
check_PROGRAMS += tests/check_serve
TESTS += tests/check_serve tests/serve.sh tests/serve-openai.sh tests/serve-page.sh
tests_check_serve_SOURCES = tests/serve.c tests/ref.c
tests_check_serve_CFLAGS = $(TEST_CFLAGS) $(JANSSON_CFLAGS)
tests_check_serve_LDADD = libbeltserve.la $(TEST_LIBS) $(JANSSON_LIBS)
EXTRA_DIST += tests/serve.sh tests/serve-openai.sh tests/serve_openai.mjs \
	tests/serve-page.sh tests/serve_page.mjs tests/serve-node.sh \
	tests/serve-template.jinja tests/serve-soak.sh
# the npm installs of serve-openai.sh and serve-page.sh go with make clean
# (distcheck's distcleancheck wants an empty build folder)
clean-local: clean-node-openai
clean-node-openai:
	rm -rf tests/node-openai tests/node-page
.PHONY: clean-node-openai
