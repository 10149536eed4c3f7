/* bench-fma-peak: the machine's float32 multiply-add ceiling, in GFLOPS,
 * with N threads (default 2), each running twelve independent chains of
 * the widest FMA this CPU has (AVX-512, else AVX2 with FMA). A batched
 * product of F16 weights on the CPU is FMA-bound (doc/cpu.md): this is
 * the rate no F16 prefill, belt's or llama.cpp's, can pass here.
 *
 * usage: bench-fma-peak [threads] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define ITERS 100000000L

#define CHAINS(T, FMA, SET)                                                        \
	T a0 = SET(0.f), a1 = SET(.1f), a2 = SET(.2f), a3 = SET(.3f), a4 = SET(.4f); \
	T a5 = SET(.5f), a6 = SET(.6f), a7 = SET(.7f), a8 = SET(.8f), a9 = SET(.9f); \
	T a10 = SET(1.f), a11 = SET(1.1f), x = SET(0.999999f), y = SET(1e-7f);      \
	for (long n = 0; n < ITERS / 12; n++) {                                     \
		a0 = FMA(a0, x, y), a1 = FMA(a1, x, y), a2 = FMA(a2, x, y);          \
		a3 = FMA(a3, x, y), a4 = FMA(a4, x, y), a5 = FMA(a5, x, y);          \
		a6 = FMA(a6, x, y), a7 = FMA(a7, x, y), a8 = FMA(a8, x, y);          \
		a9 = FMA(a9, x, y), a10 = FMA(a10, x, y), a11 = FMA(a11, x, y);      \
	}                                                                           \
	T s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;

static volatile float sink;

__attribute__((target("avx512f"))) static void *run_avx512(void *arg)
{
	(void)arg;
	CHAINS(__m512, _mm512_fmadd_ps, _mm512_set1_ps)
	sink = _mm512_reduce_add_ps(s);
	return NULL;
}

__attribute__((target("avx2,fma"))) static void *run_avx2(void *arg)
{
	(void)arg;
	CHAINS(__m256, _mm256_fmadd_ps, _mm256_set1_ps)
	float v[8];
	_mm256_storeu_ps(v, s);
	sink = v[0];
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	if (threads < 1 || threads > 256) {
		fprintf(stderr, "bench-fma-peak: threads: expected 1 to 256, got '%s'\n", argv[1]);
		return 2;
	}
	__builtin_cpu_init();
	int lanes = __builtin_cpu_supports("avx512f") ? 16
		    : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 8
										       : 0;
	if (!lanes) {
		fprintf(stderr, "bench-fma-peak: this CPU has neither AVX-512 nor AVX2 with FMA\n");
		return 1;
	}
	pthread_t *t = malloc(sizeof *t * (size_t)threads);
	if (!t)
		return 1;
	double t0 = now();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, lanes == 16 ? run_avx512 : run_avx2, NULL)) {
			fprintf(stderr, "bench-fma-peak: cannot start thread %d\n", i);
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double s = now() - t0;
	free(t);
	double flops = 2.0 * lanes * (double)(ITERS / 12 * 12) * threads;
	printf("%s, %d threads: %.1f GFLOPS float32 multiply-add peak\n",
	       lanes == 16 ? "avx512" : "avx2", threads, flops / s / 1e9);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "bench-fma-peak: x86-64 only\n");
	return 1;
}
#endif
