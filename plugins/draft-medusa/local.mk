# plugins/draft-medusa: Medusa heads for speculative decoding: the side
# file and its tap commands, the tree of candidates, the plugin's table.
plugin_LTLIBRARIES += plugins/draft-medusa.la
plugins_draft_medusa_la_SOURCES = \
	plugins/draft-medusa/medusa.h \
	plugins/draft-medusa/heads.c \
	plugins/draft-medusa/tree.c \
	plugins/draft-medusa/plugin.c
plugins_draft_medusa_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_draft_medusa_la_LIBADD = libbelt.la
