# The belt command line.
bin_PROGRAMS += belt
belt_SOURCES = \
	core/cli/main.c \
	core/cli/run.c \
	core/cli/info.c \
	core/cli/tokenize.c \
	core/cli/template.c \
	core/cli/chat.c \
	core/cli/sampling.c \
	core/cli/serve.c \
	core/cli/bench.c \
	core/cli/perplexity.c \
	core/cli/quantize.c \
	core/cli/devices.c \
	core/cli/messages.c \
	core/cli/model_checks.c
noinst_HEADERS += core/cli/cli.h
belt_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
belt_LDADD = libbeltserve.la libbelt.la $(JANSSON_LIBS)
