# plugins/backend-cpu: the CPU backend module.
plugin_LTLIBRARIES += plugins/backend-cpu.la
plugins_backend_cpu_la_SOURCES = \
	plugins/backend-cpu/cpu.h \
	plugins/backend-cpu/attention.c \
	plugins/backend-cpu/backend.c \
	plugins/backend-cpu/ext.c \
	plugins/backend-cpu/gemm.c \
	plugins/backend-cpu/kernels.c \
	plugins/backend-cpu/kvcache.c \
	plugins/backend-cpu/plugin.c \
	plugins/backend-cpu/pool.c \
	plugins/backend-cpu/vec.c \
	plugins/backend-cpu/vec_avx2.c \
	plugins/backend-cpu/vec_avx512.c
# no FMA contraction: dequantized weights must be ggml's floats, bit for bit
plugins_backend_cpu_la_CFLAGS = $(AM_CFLAGS) -O3 -ffp-contract=off
plugins_backend_cpu_la_LDFLAGS = $(PLUGIN_LINK_FLAGS)
plugins_backend_cpu_la_LIBADD = libbelt.la $(PTHREAD_LIBS) -lm

# Both load the module built above through the registry.
check_PROGRAMS += tests/check_backend_cpu
TESTS += tests/check_backend_cpu
tests_check_backend_cpu_SOURCES = tests/backend_cpu.c tests/ref.c
tests_check_backend_cpu_CFLAGS = $(TEST_CFLAGS)
tests_check_backend_cpu_LDADD = $(TEST_LIBS) $(LTDL_LIBS) -lm

noinst_PROGRAMS += tests/bench-matvec
tests_bench_matvec_SOURCES = tests/bench_matvec.c
tests_bench_matvec_CFLAGS = $(AM_CFLAGS) -O3
tests_bench_matvec_LDADD = libbelt.la -lm

noinst_PROGRAMS += tests/bench-fma-peak
tests_bench_fma_peak_SOURCES = tests/bench_fma_peak.c
tests_bench_fma_peak_CFLAGS = $(AM_CFLAGS) -O2 -pthread
tests_bench_fma_peak_LDFLAGS = -pthread
