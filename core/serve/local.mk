# belt serve: the OpenAI-compatible HTTP server (doc/serve.md), a
# convenience library above libbelt's public API that the belt program
# and the tests link; only it links libmicrohttpd.
noinst_LTLIBRARIES += libbeltserve.la
libbeltserve_la_SOURCES = \
	core/serve/server.c \
	core/serve/http.c \
	core/serve/request.c \
	core/serve/prompt.c \
	core/serve/format.c \
	core/serve/job.c \
	core/serve/stop.c \
	core/serve/sched.c \
	core/serve/openai.c \
	core/serve/page.c
libbeltserve_la_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS)
libbeltserve_la_LIBADD = libbelt.la $(JANSSON_LIBS) $(MHD_LIBS) $(PTHREAD_LIBS)
noinst_HEADERS += core/serve/serve.h
EXTRA_DIST += doc/serve.md
