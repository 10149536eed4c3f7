/* Proves the decode hot path allocates nothing: every heap allocation in
 * the process is counted while 64 decode steps run after the first, on
 * the CPU backend and on the Vulkan backend (there, allocations made
 * inside the Vulkan driver are counted apart: lavapipe allocates as it
 * runs a submission). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "ref.h"

static atomic_int counting;
static atomic_long allocations, driver_allocations;
static _Thread_local int inside;

/* Whether the allocation being made comes from inside a Vulkan driver
 * (lavapipe allocates as it runs a submission; the driver's memory is not
 * belt's hot path): any frame of the call stack in the loader, an ICD, a
 * layer, or LLVM (lavapipe's JIT). */
/* Under ASan with whole stacks at malloc (fast_unwind_on_malloc=0, as
 * make check sets it for tests/lsan.supp), the sanitizer's own unwinding
 * through libgcc_s allocates, once per new place: when the first frame
 * past the allocator (the hook, libasan) is libgcc_s's, the allocation is
 * the runtime's, not belt's, and counts as the driver's do. */
static bool from_driver(void)
{
	void *fr[64];
	int n = backtrace(fr, 64);
	bool past_allocator = false;
	for (int i = 0; i < n; i++) {
		Dl_info di;
		if (!dladdr(fr[i], &di) || !di.dli_fname)
			continue;
		const char *b = strrchr(di.dli_fname, '/');
		b = b ? b + 1 : di.dli_fname;
		if (!strncmp(b, "libvulkan", 9) || !strncmp(b, "libVkLayer", 10) ||
		    !strncmp(b, "libLLVM", 7) || !strncmp(b, "libnvidia", 9) ||
		    !strncmp(b, "libGLX_nvidia", 13))
			return true;
#if defined(__SANITIZE_ADDRESS__)
		if (!strncmp(b, "libasan", 7) || (i < 3 && !past_allocator)) {
			continue; /* backtrace, note, the hook; the allocator */
		}
		if (!past_allocator) {
			past_allocator = true;
			if (!strncmp(b, "libgcc_s", 8))
				return true;
		}
#else
		(void)past_allocator;
#endif
	}
	return false;
}

static void note(void)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed) || inside)
		return;
	inside = 1;
	if (from_driver())
		atomic_fetch_add(&driver_allocations, 1);
	else
		atomic_fetch_add(&allocations, 1);
	inside = 0;
}

#if defined(__SANITIZE_ADDRESS__)
/* from the ASan runtime (its header is not shipped with Debian's gcc) */
int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),
					      void (*f)(const volatile void *));
static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	note();
}
static void on_free(const volatile void *p) { (void)p; }
static void install(void) { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
#else
/* glibc: a definition in the executable interposes on every library. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { note(); return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n)
{
	note();
	*p = __libc_memalign(a, n);
	return *p ? 0 : 12;
}
static void install(void) {}
#endif

struct steps {
	unsigned seen;
	long during, in_driver;
};

static bool on_token(void *ud, int32_t id, const char *text, size_t len)
{
	(void)id;
	(void)text;
	(void)len;
	struct steps *s = ud;
	if (++s->seen == 1) {
		atomic_store(&allocations, 0);
		atomic_store(&driver_allocations, 0);
		atomic_store(&counting, 1);
	} else if (s->seen == 65) {
		atomic_store(&counting, 0);
		s->during = atomic_load(&allocations);
		s->in_driver = atomic_load(&driver_allocations);
		return false;
	}
	return true;
}

static void check(const char *backend, const char *file, int threads,
		  uint32_t chunk)
{
	install();
	void *prime[1];
	backtrace(prime, 1); /* its first call loads libgcc_s: not while counting */
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.backend = backend;
	char rel[128];
	snprintf(rel, sizeof rel, "models/%s", file);
	mp.path = shared_path(rel);
	mp.n_threads = threads;
	struct belt_model *m;
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_model_load(&mp, &m, err, sizeof err) == 0, "%s", err);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.chunk = chunk;
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	int32_t prompt[] = {1, 403, 407, 261, 378};
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.stop_at_eog = false;
	gp.n_predict = 200;
	struct steps st = {0, -1, -1};
	ck_assert_msg(belt_generate(s, prompt, 5, &gp, on_token, &st, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(st.seen, 65);
	printf("%s on %s, %d threads, chunk %u: %ld heap allocations in 64 decode steps (%ld "
	       "more inside the Vulkan driver)\n",
	       file, backend, threads, chunk, st.during, st.in_driver);
	ck_assert_int_eq(st.during, 0);
	belt_session_free(s);
	belt_model_free(m);
}

START_TEST(decode_allocates_nothing)
{
	check("cpu", "stories260K.f32.gguf", 1, 16);
	check("cpu", "stories260K.f32.gguf", 2, 16);
	check("cpu", "pycoder29M.q8_0.gguf", 2, 1);
	/* the other quantized types' rows (Q5_K and Q6_K; a min per block) */
	check("cpu", "quant/quant-base.q5_k_m.gguf", 2, 1);
	check("cpu", "quant/quant-base.q5_1.gguf", 2, 1);
	check("vulkan", "stories260K.f32.gguf", 1, 16);
	check("vulkan", "stories260K.f32.gguf", 1, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("noalloc");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 0); /* no limit: CI bounds the run */
	tcase_add_test(tc, decode_allocates_nothing);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
