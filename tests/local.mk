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
