# plugins/grammar-gbnf: the GBNF grammar module (doc/grammars.md): the
# parser, the checks, character classes, the vocabulary's trie, the parse
# stacks and the matcher, each in a file of its own; JSON Schema to GBNF
# (schema*.c, with jansson).
plugin_LTLIBRARIES += plugins/grammar-gbnf.la
plugins_grammar_gbnf_la_SOURCES = \
	plugins/grammar-gbnf/gbnf.h \
	plugins/grammar-gbnf/errors.c \
	plugins/grammar-gbnf/parse.c \
	plugins/grammar-gbnf/build.c \
	plugins/grammar-gbnf/classes.c \
	plugins/grammar-gbnf/analyse.c \
	plugins/grammar-gbnf/trie.c \
	plugins/grammar-gbnf/subtrees.c \
	plugins/grammar-gbnf/loops.c \
	plugins/grammar-gbnf/stacks.c \
	plugins/grammar-gbnf/step.c \
	plugins/grammar-gbnf/walk.c \
	plugins/grammar-gbnf/cache.c \
	plugins/grammar-gbnf/match.c \
	plugins/grammar-gbnf/schema.h \
	plugins/grammar-gbnf/schema.c \
	plugins/grammar-gbnf/schema_object.c \
	plugins/grammar-gbnf/schema_int.c \
	plugins/grammar-gbnf/schema_regex.c \
	plugins/grammar-gbnf/schema_formats.c \
	plugins/grammar-gbnf/schema_text.c \
	plugins/grammar-gbnf/plugin.c
plugins_grammar_gbnf_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
plugins_grammar_gbnf_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_grammar_gbnf_la_LIBADD = libbelt.la $(JANSSON_LIBS)
