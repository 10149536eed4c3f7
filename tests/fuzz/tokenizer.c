/* libFuzzer target: the tokenizers, encoding arbitrary bytes with the
 * vocabularies of $BELT_SHARED_DIR/vocab (default: the folder configure
 * was given). The target and its invariants are tests/fuzz_tokenizer.c's:
 * the first byte picks the vocabulary and the flags, the rest is the
 * text; ids in range, counts independent of the buffer, decode emitting
 * only valid UTF-8, and lossless vocabularies giving valid UTF-8 back.
 *
 * That last one only holds for text whose every byte has a piece: a
 * byte-level BPE vocabulary drops a byte it has no piece for, as
 * belt/tokenizer.h says and llama.cpp does, and some lack bytes of valid
 * UTF-8 (starcoder has none for 0xF1, the lead byte of U+40000..U+7FFFF).
 * So the round trip is not asked of a text holding such a byte. */
#include <stdlib.h>

#define BELT_LIBFUZZER
#define LLVMFuzzerTestOneInput fuzz_tokenizer_target
#include "../fuzz_tokenizer.c"
#undef LLVMFuzzerTestOneInput

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool dropped[N_VOCABS][256]; /* encoding the byte alone gives no id */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("BELT_SHARED_DIR", BELT_FUZZ_SHARED_DIR, 0);
	load_vocabs(); /* once, before the first input is timed */
	for (size_t v = 0; v < N_VOCABS; v++) {
		for (unsigned b = 0; b < 256; b++) {
			char c = (char)b, err[BELT_ERR_SIZE];
			int32_t id;
			size_t n = 0;
			if (belt_tok_encode_flags(vocabs[v].t, &c, 1, 0, &id, 1, &n, err, sizeof err))
				fail(vocabs[v].name, err);
			dropped[v][b] = n == 0;
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return fuzz_tokenizer_target(data, size);
	size_t v = data[0] % N_VOCABS;
	bool lossless = vocabs[v].lossless;
	for (size_t i = 1; lossless && i < size; i++)
		if (dropped[v][data[i]])
			vocabs[v].lossless = false;
	fuzz_tokenizer_target(data, size);
	vocabs[v].lossless = lossless;
	return 0;
}
