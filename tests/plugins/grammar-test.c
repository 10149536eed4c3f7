/* Grammar "test": sentences of exactly N even token ids, N the grammar
 * text ("3"), so that tests see allowed(), accept() and is_complete()
 * follow a real state without a real grammar engine. */
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "belt/plugin.h"

struct state {
	int32_t n_vocab; /* the tokenizer's: larger ids are never allowed */
	long length, done;
};

static int compile(const char *text, size_t len, const char *kind,
		   const struct belt_tokenizer *tok, void **out, char *err, size_t errsz)
{
	if (strcmp(kind, "gbnf"))
		return belt_errf(err, errsz, "grammar 'test' reads gbnf, not '%s'", kind);
	char buf[16], *end;
	if (len == 0 || len >= sizeof buf)
		return belt_errf(err, errsz, "grammar 'test': expected a length, 1 to 15 digits");
	memcpy(buf, text, len);
	buf[len] = 0;
	long n = strtol(buf, &end, 10);
	if (*end || n < 0)
		return belt_errf(err, errsz, "grammar 'test': expected a length, got '%s'", buf);
	struct state *s = malloc(sizeof *s);
	if (!s)
		return belt_errf(err, errsz, "grammar 'test': out of memory");
	*s = (struct state){.n_vocab = belt_tok_n_vocab(tok), .length = n};
	*out = s;
	return 0;
}

static void gfree(void *state)
{
	free(state);
}

static void reset(void *state)
{
	((struct state *)state)->done = 0;
}

static bool allows(const struct state *s, int32_t id)
{
	return s->done < s->length && id >= 0 && id < s->n_vocab && id % 2 == 0;
}

static void allowed(void *state, uint32_t *mask, int32_t n_vocab)
{
	for (int32_t w = 0; w < (n_vocab + 31) / 32; w++)
		mask[w] = 0;
	for (int32_t id = 0; id < n_vocab; id++)
		if (allows(state, id))
			mask[id / 32] |= 1u << (id % 32);
}

static int accept(void *state, int32_t id, char *err, size_t errsz)
{
	struct state *s = state;
	if (!allows(s, id))
		return belt_errf(err, errsz, "grammar 'test': token %d not allowed after %ld",
				 id, s->done);
	s->done++;
	return 0;
}

static bool is_complete(const void *state)
{
	const struct state *s = state;
	return s->done == s->length;
}

static const struct belt_grammar_ops test_grammar = {
	.abi = BELT_GRAMMAR_ABI,
	.name = "test",
	.description = "test grammar: N even token ids",
	.compile = compile,
	.free = gfree,
	.reset = reset,
	.allowed = allowed,
	.accept = accept,
	.is_complete = is_complete,
};

static int reg(struct belt_registry *r, char *err, size_t errsz)
{
	return belt_registry_add_grammar(r, &test_grammar, err, errsz);
}

static const struct belt_plugin plugin = {
	.abi = BELT_PLUGIN_ABI,
	.name = "grammar-test",
	.description = "test plugin: a grammar of even token ids",
	.register_features = reg,
};

const struct belt_plugin *belt_plugin_entry(void);
const struct belt_plugin *belt_plugin_entry(void)
{
	return &plugin;
}
