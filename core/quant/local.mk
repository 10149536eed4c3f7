# core/quant: the quantizers and belt_quantize_file. A convenience library
# of its own so that it alone is built with -ffp-contract=off: a fused
# multiply-add would round differently from ggml and change the bytes.
noinst_LTLIBRARIES += libbeltquant.la
libbeltquant_la_SOURCES = \
	core/quant/legacy.c \
	core/quant/fit.c \
	core/quant/kquant.c \
	core/quant/iq4.c \
	core/quant/row.c \
	core/quant/mix.c \
	core/quant/stream.c \
	core/quant/file.c
libbeltquant_la_CFLAGS = $(AM_CFLAGS) -ffp-contract=off
libbelt_la_LIBADD += libbeltquant.la
noinst_HEADERS += core/quant/quant_priv.h core/quant/mix.h core/quant/job.h
