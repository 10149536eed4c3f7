# plugins/sampler-gumbel: the Gumbel-max sampler module. Its float
# operations are specified exactly (doc/samplers.md) so that GPU kernels
# can match them: no fused multiply-adds.
plugin_LTLIBRARIES += plugins/sampler-gumbel.la
plugins_sampler_gumbel_la_SOURCES = \
	plugins/sampler-gumbel/gumbel.h \
	plugins/sampler-gumbel/philox.h \
	plugins/sampler-gumbel/cpu.c \
	plugins/sampler-gumbel/plugin.c
plugins_sampler_gumbel_la_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
plugins_sampler_gumbel_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_sampler_gumbel_la_LIBADD = libbelt.la -lm

# Loads the module built above through the registry.
check_PROGRAMS += tests/check_sampler
TESTS += tests/check_sampler
tests_check_sampler_SOURCES = tests/sampler.c tests/sampler_ref.c
tests_check_sampler_CFLAGS = $(TEST_CFLAGS)
tests_check_sampler_LDADD = $(TEST_LIBS) $(LTDL_LIBS) -lm
