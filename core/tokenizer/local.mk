# core/tokenizer: SentencePiece ("llama"), byte-level BPE ("gpt2") and
# WordPiece ("bert") tokenizers. Needs PCRE2 (pre-tokenizer regexes) and
# utf8proc (WordPiece normalization): configure.ac sets PCRE2_* and
# UTF8PROC_* with PKG_CHECK_MODULES.
libbelt_la_SOURCES += \
	core/tokenizer/tokenizer.c \
	core/tokenizer/encode.c \
	core/tokenizer/spm.c \
	core/tokenizer/bpe.c \
	core/tokenizer/pretok.c \
	core/tokenizer/wpm.c \
	core/tokenizer/detok.c \
	core/tokenizer/mergeheap.c
noinst_HEADERS += core/tokenizer/tokenizer_impl.h core/tokenizer/mergeheap.h
libbelt_la_CFLAGS += $(PCRE2_CFLAGS) $(UTF8PROC_CFLAGS)
libbelt_la_LIBADD += $(PCRE2_LIBS) $(UTF8PROC_LIBS)

check_PROGRAMS += tests/check_tokenizer
TESTS += tests/check_tokenizer
tests_check_tokenizer_SOURCES = tests/tokenizer.c
tests_check_tokenizer_CFLAGS = $(TEST_CFLAGS)
tests_check_tokenizer_LDADD = $(TEST_LIBS)

# Every vocabulary in $(BELT_SHARED_DIR)/vocab with test cases, round trips,
# special tokens, streaming decode.
check_PROGRAMS += tests/check_tokenizer_bpe
TESTS += tests/check_tokenizer_bpe
tests_check_tokenizer_bpe_SOURCES = tests/tokenizer_bpe.c
tests_check_tokenizer_bpe_CFLAGS = $(TEST_CFLAGS)
tests_check_tokenizer_bpe_LDADD = $(TEST_LIBS)

# The fuzz target's standalone driver: deterministic random inputs over
# several vocabularies.
check_PROGRAMS += tests/check_fuzz_tokenizer
TESTS += tests/check_fuzz_tokenizer
tests_check_fuzz_tokenizer_SOURCES = tests/fuzz_tokenizer.c
tests_check_fuzz_tokenizer_CFLAGS = $(AM_CFLAGS)
tests_check_fuzz_tokenizer_LDADD = libbelt.la

# Encoding speed (run by tests/bench-tokenizer.sh).
noinst_PROGRAMS += tests/bench-tokenizer
tests_bench_tokenizer_SOURCES = tests/bench_tokenizer.c
tests_bench_tokenizer_LDADD = libbelt.la
EXTRA_DIST += tests/bench-tokenizer.sh
