# core/tokenizer: SentencePiece-style ("llama") tokenizer.
libbelt_la_SOURCES += \
	core/tokenizer/tokenizer.c \
	core/tokenizer/spm.c \
	core/tokenizer/detok.c
noinst_HEADERS += core/tokenizer/tokenizer_impl.h

check_PROGRAMS += tests/check_tokenizer
TESTS += tests/check_tokenizer
tests_check_tokenizer_SOURCES = tests/tokenizer.c
tests_check_tokenizer_CFLAGS = $(TEST_CFLAGS)
tests_check_tokenizer_LDADD = $(TEST_LIBS)
