/* The module's one export: the plugin descriptor, which registers the
 * grammar "gbnf": llama.cpp's GBNF (kind "gbnf"), and JSON Schemas (kind
 * "json-schema") made into GBNF first (schema.h); doc/grammars.md. */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"
#include "gbnf.h"
#include "schema.h"

static int compile(const char *text, size_t len, const char *kind,
		   const struct belt_tokenizer *tok, void **state, char *err, size_t errsz)
{
	*state = NULL;
	bool schema = kind && !strcmp(kind, "json-schema");
	if (!kind || (strcmp(kind, "gbnf") && !schema))
		return belt_errf(err, errsz,
				 "grammar 'gbnf' reads kinds 'gbnf' and 'json-schema', not '%s'",
				 kind ? kind : "(none)");
	if (!tok || (!text && len))
		return belt_errf(err, errsz, "grammar 'gbnf': no %s given", tok ? "text" : "tokenizer");
	char *made = NULL;
	if (schema) {
		if (sc_convert(text ? text : "", len, &made, err, errsz))
			return -1;
		text = made;
		len = strlen(made);
	}
	struct gb_matcher *m = calloc(1, sizeof *m);
	if (!m) {
		free(made);
		return belt_errf(err, errsz, "grammar 'gbnf': out of memory");
	}
	int rc = 0;
	if (gb_parse(text ? text : "", len, &m->g, err, errsz) ||
	    gb_analyse(&m->g, text, len, err, errsz)) {
		/* a place in the GBNF made of the schema means little: say what */
		if (schema)
			belt_err_prefix(err, errsz, "(root): the grammar made of the schema cannot run");
		rc = -1;
	}
	if (rc || gb_trie_build(&m->trie, tok, err, errsz) || gb_matcher_init(m, err, errsz)) {
		gb_matcher_free(m);
		free(m);
		free(made);
		return -1;
	}
	free(made);
	*state = m;
	return 0;
}

static void gfree(void *state)
{
	if (state) {
		gb_matcher_free(state);
		free(state);
	}
}

static void reset(void *state)
{
	gb_matcher_reset(state);
}

static void allowed(void *state, uint32_t *mask, int32_t n_vocab)
{
	const struct gb_matcher *m = state;
	uint32_t words = n_vocab > 0 ? ((uint32_t)n_vocab + 31) / 32 : 0;
	uint32_t have = words < m->words ? words : m->words;
	memcpy(mask, m->mask, (size_t)have * sizeof *mask);
	memset(mask + have, 0, (size_t)(words - have) * sizeof *mask);
	if (words && n_vocab % 32) /* no bits at or past n_vocab */
		mask[words - 1] &= (1u << (n_vocab % 32)) - 1;
}

static int accept(void *state, int32_t id, char *err, size_t errsz)
{
	return gb_matcher_accept(state, id, err, errsz);
}

static bool is_complete(const void *state)
{
	const struct gb_matcher *m = state;
	return m->ended || m->complete;
}

static const struct belt_grammar_ops gbnf_grammar = {
	.abi = BELT_GRAMMAR_ABI,
	.name = "gbnf",
	.description = "llama.cpp's GBNF grammars and JSON Schemas, matched byte by byte over a "
		       "token trie",
	.compile = compile,
	.free = gfree,
	.reset = reset,
	.allowed = allowed,
	.accept = accept,
	.is_complete = is_complete,
};

static int register_features(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_grammar(r, &gbnf_grammar, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "grammar-gbnf",
	.description = "GBNF grammar: constrained decoding to llama.cpp's grammar language",
	.register_features = register_features,
};

const struct belt_plugin *belt_plugin_entry(void);

const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
