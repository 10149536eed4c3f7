# core/gguf: the GGUF reader and writer.
libbelt_la_SOURCES += \
	core/gguf/gguf.c \
	core/gguf/index.c \
	core/gguf/query.c \
	core/gguf/writer.c
noinst_HEADERS += core/gguf/gguf_priv.h

check_PROGRAMS += tests/check_gguf
TESTS += tests/check_gguf
tests_check_gguf_SOURCES = tests/gguf.c
tests_check_gguf_CFLAGS = $(TEST_CFLAGS)
tests_check_gguf_LDADD = $(TEST_LIBS)

# The fuzz target's standalone driver: replays its arguments, then mutates
# a writer-made image.
check_PROGRAMS += tests/check_fuzz_gguf
TESTS += tests/check_fuzz_gguf
tests_check_fuzz_gguf_SOURCES = tests/fuzz_gguf.c
tests_check_fuzz_gguf_CFLAGS = $(AM_CFLAGS)
tests_check_fuzz_gguf_LDADD = libbelt.la
