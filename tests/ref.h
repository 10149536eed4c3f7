/* Test helpers: paths into the shared reference directory and a reader
 * for its tab-separated files (escapes \\ \t \n \r, one header line). */
#ifndef BELT_TESTS_REF_H
#define BELT_TESTS_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tsv {
	size_t n_cols, n_rows;
	char **header;
	char ***rows; /* rows[r][c], unescaped, NUL-terminated */
};

struct belt_model;
/* models/FILE of the shared folder on $BELT_TEST_BACKEND's backend (the
 * CPU's when unset), 2 threads; fails the test if it does not load. */
struct belt_model *ref_load_model(const char *file);
struct belt_tokenizer;
/* A tokenizer ("llama" model) of n tokens: their texts and GGUF token
 * types, scores 0, end-of-sequence id eos and, unless eot < 0, an
 * end-of-turn id eot; written to a temporary GGUF and loaded. Fails the
 * test if it cannot be. */
struct belt_tokenizer *ref_vocab(const char *const *tokens, const int32_t *types, int n,
				 int32_t eos, int32_t eot);
/* Put $BELT_TEST_PLUGINS (the test plugins' folder) on BELT_PLUGIN_PATH,
 * after what it holds; false (with a message naming prog) if unset. */
bool ref_use_test_plugins(const char *prog);
/* "$BELT_SHARED_DIR/rel" in a static buffer (rotating over 4 calls). */
const char *shared_path(const char *rel);
/* Read a whole TSV file; NULL (with a message on stderr) on failure. */
struct tsv *tsv_load(const char *path);
void tsv_free(struct tsv *t);
/* Field of row r in the column named col; aborts the test if missing. */
const char *tsv_get(const struct tsv *t, size_t r, const char *col);
/* Parse space-separated ids into a new array; *n gets the count. */
int32_t *parse_ids(const char *s, size_t *n);
/* A file's text into buf (at most cap - 1 bytes, NUL-terminated; empty if
 * it cannot be read). */
void slurp_buf(const char *path, char *buf, size_t cap);
/* N of belt's stats line ("belt: prompt ...; decode N tokens") in text;
 * -1 if absent. */
long decoded(const char *text);

#endif
