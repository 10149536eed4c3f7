/* Persistent worker threads for the CPU backend.
 *
 * table_run hands the whole run (all positions, all commands) to the pool
 * once. Every thread walks the same commands; each command's work is cut
 * into chunks numbered consecutively over the run, and threads claim the
 * next chunk from one shared counter. After a command whose results the
 * next one needs, a thread waits until the count of finished chunks covers
 * it. A thread that is descheduled (2 cores shared with other work) thus
 * delays the others only by the chunk it holds, never by a whole step.
 *
 * Counters only grow, so a worker still walking an earlier run (late)
 * finds every chunk claimed and every wait satisfied, and cannot disturb
 * the current one. The job is published under a sequence lock; `busy`
 * lets table_release wait until no worker reads a plan. Idle workers spin,
 * then yield, then sleep on a futex. */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "belt/error.h"
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* Spins before a waiting thread starts yielding its core. */
#define SPINS 2000
/* How long an idle worker polls for the next run before it sleeps. */
#define IDLE_POLL_NS 300000L
#define JOB_WORDS 8

struct pool_thread {
	struct cpu_pool *pool;
	int ith;
	pthread_t tid;
};

/* Chunks each thread has finished, a cache line each so that finishing
 * one costs no line transfer; waiting sums them. */
struct done_count {
	alignas(CPU_ALIGN) _Atomic uint64_t v;
};

struct job_msg {
	cpu_job_fn fn; /* NULL: nothing to do */
	uint64_t arg[JOB_WORDS - 1];
};

struct cpu_pool {
	int n;
	struct pool_thread *threads; /* [1 .. n-1] are workers */

	alignas(CPU_ALIGN) _Atomic uint32_t gen; /* futex word */
	_Atomic int n_sleeping;
	_Atomic bool stop;
	_Atomic uint32_t seq; /* sequence lock over job; odd while written */
	_Atomic uint64_t job[JOB_WORDS];

	alignas(CPU_ALIGN) _Atomic int busy; /* workers inside a job */
	alignas(CPU_ALIGN) _Atomic uint64_t next; /* next chunk to claim */
	struct done_count *done; /* [n] */
};

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, NULL,
		NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX,
		NULL, NULL, 0);
}

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void backoff(int *spin)
{
	if (*spin < SPINS) {
		++*spin;
		cpu_relax();
	} else {
		sched_yield();
	}
}

/* ---- chunks ---- */

uint64_t cpu_pool_frontier(struct cpu_pool *p)
{
	return atomic_load_explicit(&p->next, memory_order_acquire);
}

bool cpu_pool_claim(struct cpu_pool *p, uint64_t end, uint64_t *idx)
{
	uint64_t cur = atomic_load_explicit(&p->next, memory_order_relaxed);
	while (cur < end)
		if (atomic_compare_exchange_weak_explicit(
			    &p->next, &cur, cur + 1, memory_order_acquire,
			    memory_order_relaxed)) {
			*idx = cur;
			return true;
		}
	return false;
}

void cpu_pool_finish(struct cpu_pool *p, int ith)
{
	/* only thread ith writes its count: a plain increment suffices */
	_Atomic uint64_t *d = &p->done[ith].v;
	atomic_store_explicit(d,
			      atomic_load_explicit(d, memory_order_relaxed) + 1,
			      memory_order_release);
}

static uint64_t done_total(struct cpu_pool *p)
{
	uint64_t sum = 0;
	for (int i = 0; i < p->n; i++)
		sum += atomic_load_explicit(&p->done[i].v,
					    memory_order_acquire);
	return sum;
}

void cpu_pool_wait(struct cpu_pool *p, uint64_t target)
{
	int spin = 0;
	while (done_total(p) < target)
		backoff(&spin);
}

/* ---- jobs ---- */

static void publish(struct cpu_pool *p, const struct job_msg *m)
{
	uint64_t w[JOB_WORDS];
	memcpy(w, m, sizeof w);
	uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed);
	atomic_store_explicit(&p->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (int i = 0; i < JOB_WORDS; i++)
		atomic_store_explicit(&p->job[i], w[i], memory_order_relaxed);
	atomic_store_explicit(&p->seq, s + 2, memory_order_release);
	/* seq_cst pairs with wait_for_job: either a sleeper is counted
	 * here and woken, or its futex sees the new gen */
	atomic_fetch_add(&p->gen, 1);
	if (atomic_load(&p->n_sleeping) > 0)
		futex_wake_all(&p->gen);
}

static void read_job(struct cpu_pool *p, struct job_msg *m)
{
	uint64_t w[JOB_WORDS];
	for (;;) {
		uint32_t s = atomic_load_explicit(&p->seq, memory_order_acquire);
		if (s & 1) {
			cpu_relax();
			continue;
		}
		for (int i = 0; i < JOB_WORDS; i++)
			w[i] = atomic_load_explicit(&p->job[i],
						    memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&p->seq, memory_order_relaxed) == s)
			break;
	}
	memcpy(m, w, sizeof w);
}

/* Wait until gen moves past seen: poll, then sleep. */
static uint32_t wait_for_job(struct cpu_pool *p, uint32_t seen)
{
	long start = 0;
	int spin = 0;
	for (;;) {
		uint32_t g = atomic_load_explicit(&p->gen,
						  memory_order_acquire);
		if (g != seen)
			return g;
		if (spin < SPINS) {
			backoff(&spin);
			continue;
		}
		if (!start)
			start = now_ns();
		if (now_ns() - start < IDLE_POLL_NS) {
			sched_yield();
			continue;
		}
		atomic_fetch_add(&p->n_sleeping, 1);
		futex_wait(&p->gen, seen);
		atomic_fetch_sub(&p->n_sleeping, 1);
		start = 0;
		spin = 0;
	}
}

static void *worker_main(void *arg)
{
	struct pool_thread *t = arg;
	struct cpu_pool *p = t->pool;
	uint32_t seen = 0;
	for (;;) {
		seen = wait_for_job(p, seen);
		if (atomic_load(&p->stop))
			return NULL;
		/* counted busy before reading the job, so that quiesce (which
		 * publishes "no job" first) either sees us or we see that */
		atomic_fetch_add(&p->busy, 1);
		struct job_msg m;
		read_job(p, &m);
		if (m.fn)
			m.fn(m.arg, t->ith, p->n);
		atomic_fetch_sub_explicit(&p->busy, 1, memory_order_release);
	}
}

void cpu_pool_run(struct cpu_pool *p, cpu_job_fn fn, const void *arg,
		  size_t size)
{
	struct job_msg m = {.fn = fn};
	memcpy(m.arg, arg, size);
	publish(p, &m);
	fn(m.arg, 0, p->n);
}

void cpu_pool_quiesce(struct cpu_pool *p)
{
	if (!p)
		return;
	struct job_msg m = {.fn = NULL};
	publish(p, &m);
	int spin = 0;
	while (atomic_load_explicit(&p->busy, memory_order_acquire) > 0)
		backoff(&spin);
}

int cpu_pool_create(int n, struct cpu_pool **out, char *err, size_t errsz)
{
	struct cpu_pool *p;
	if (posix_memalign((void **)&p, CPU_ALIGN, sizeof *p))
		return belt_errf(err, errsz,
				 "cpu: cannot allocate a pool of %d threads", n);
	memset(p, 0, sizeof *p);
	p->done = NULL;
	p->n = n;
	p->threads = calloc((size_t)n, sizeof *p->threads);
	if (!p->threads || posix_memalign((void **)&p->done, CPU_ALIGN,
					  (size_t)n * sizeof *p->done)) {
		free(p->threads);
		free(p);
		return belt_errf(err, errsz,
				 "cpu: cannot allocate a pool of %d threads", n);
	}
	memset(p->done, 0, (size_t)n * sizeof *p->done);
	for (int i = 1; i < n; i++) {
		struct pool_thread *t = &p->threads[i];
		t->pool = p;
		t->ith = i;
		int rc = pthread_create(&t->tid, NULL, worker_main, t);
		if (rc) {
			p->n = i; /* join the ones started */
			cpu_pool_destroy(p);
			return belt_errf(err, errsz,
					 "cpu: cannot start worker thread %d "
					 "of %d: %s",
					 i, n, strerror(rc));
		}
	}
	*out = p;
	return 0;
}

void cpu_pool_destroy(struct cpu_pool *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	struct job_msg m = {.fn = NULL};
	publish(p, &m);
	for (int i = 1; i < p->n; i++)
		pthread_join(p->threads[i].tid, NULL);
	free(p->threads);
	free(p->done);
	free(p);
}
