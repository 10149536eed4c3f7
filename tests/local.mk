# End-to-end tests of the core through the real plugins and YAML.
noinst_HEADERS += tests/ref.h

check_PROGRAMS += tests/check_golden
TESTS += tests/check_golden
tests_check_golden_SOURCES = tests/golden.c tests/ref.c
tests_check_golden_CFLAGS = $(TEST_CFLAGS)
tests_check_golden_LDADD = $(TEST_LIBS)

# The synthetic-model generator (tests and benchmarks).
noinst_PROGRAMS += tests/belt-synth
noinst_HEADERS += tests/synth/synth.h
tests_belt_synth_SOURCES = tests/synth/main.c tests/synth/synth.c
tests_belt_synth_LDADD = libbelt.la

# Malformed inputs through the CLI, with two deliberately broken plugins.
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

# Zero heap allocations in the decode hot path.
check_PROGRAMS += tests/check_noalloc
TESTS += tests/check_noalloc
tests_check_noalloc_SOURCES = tests/noalloc.c tests/ref.c
tests_check_noalloc_CFLAGS = $(TEST_CFLAGS)
tests_check_noalloc_LDADD = $(TEST_LIBS)

noinst_HEADERS += tests/sampler_ref.h tests/cmd.h

if HAVE_VULKAN
TESTS += tests/golden-vulkan.sh tests/batch-vulkan.sh

# The gumbel sampler's GPU chain ops on the Vulkan backend, against the
# same reference as check_sampler.
check_PROGRAMS += tests/check_sampler_vulkan
TESTS += tests/check_sampler_vulkan
tests_check_sampler_vulkan_SOURCES = tests/sampler_vulkan.c tests/sampler_ref.c
tests_check_sampler_vulkan_CFLAGS = $(TEST_CFLAGS) $(VULKAN_CFLAGS)
tests_check_sampler_vulkan_LDADD = $(TEST_LIBS) $(LTDL_LIBS) -lm
endif
EXTRA_DIST += tests/lsan.supp tests/golden-vulkan.sh tests/batch-vulkan.sh tests/bench-synthetic.sh tests/run-tests.sh tests/device-run.sh

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
tests_check_cli_misuse_LDADD = $(TEST_LIBS)
