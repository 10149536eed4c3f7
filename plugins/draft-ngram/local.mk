# plugins/draft-ngram: the n-gram drafter (prompt lookup) for speculative
# decoding: the index and lookup, and the plugin's table and policy.
plugin_LTLIBRARIES += plugins/draft-ngram.la
plugins_draft_ngram_la_SOURCES = \
	plugins/draft-ngram/ngram.h \
	plugins/draft-ngram/ngram.c \
	plugins/draft-ngram/plugin.c
plugins_draft_ngram_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_draft_ngram_la_LIBADD = libbelt.la
