/* Groups of sessions (continuous batching, core/session/group.c): sessions
 * of a group generating at the same time, each from its own thread, decode
 * in shared passes of a table of sequences, one row each at its own
 * position over its own part of the cache. Each session's greedy ids must
 * be those of a plain session given the same prompt, whatever the others
 * do: longer or shorter prompts, answers that end early, a second turn
 * that reuses the first's cache; sampled sessions (drawn on the host from
 * the pass's logits) give the draws of a plain session's chain for their
 * seed. BELT_TEST_BACKEND picks the backend (tests/group-vulkan.sh). */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "ref.h"

#define N_SEQ 4
#define MAX_IDS 512

static const char *backend(void)
{
	return getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu";
}

static const char *const texts[N_SEQ] = {
	"Once upon a time, there was a little girl named Lily.",
	"The cat sat",
	"One day, a big dog ran to the park and saw a ball. He wanted to play with it, so he",
	"Tom and Sue",
};

struct ids {
	int32_t id[MAX_IDS];
	size_t n;
};

/* Greedy sessions run together: at its second token (the first comes
 * with its prompt's pass, before it decodes), each waits until as many
 * sessions decode as there are greedy ones still generating, so that
 * their next steps share the group's passes however the threads are
 * scheduled (under valgrind one thread runs at a time, and a session that
 * finds itself the only one decoding runs its answer alone). It waits
 * without the turn, counted as decoding: the others run their prompts
 * meanwhile, and a greedy one then waits for its next step. Sampled
 * sessions do not wait: on a backend without the sampler's chain ops
 * they decode on the host, never counted as decoding. */
struct meet {
	const struct belt_group *g;
	uint32_t n;		/* greedy sessions run together */
	atomic_uint finished;	/* of those, whose belt_generate returned */
};

static void meet_others(const struct meet *mt)
{
	while (belt_group_decoding(mt->g) + atomic_load(&mt->finished) < mt->n)
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

struct job;
static bool collect(void *ud, int32_t id, const char *text, size_t len);

/* One generation: prompt, n_predict, its ids and stats. */
struct job {
	struct belt_session *s;
	struct ids prompt;
	uint32_t n_predict;
	const struct belt_sampling *samp; /* NULL: greedy */
	struct ids out;
	struct belt_stats st;
	int rc;
	char err[BELT_ERR_SIZE];
	pthread_barrier_t *start;
	struct meet *meet; /* with start: the others it waits for */
	bool met;
};

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct job *j = ud;
	struct ids *o = &j->out;
	if (j->meet && !j->met && o->n == 1) {
		j->met = true;
		meet_others(j->meet);
	}
	if (id >= 0 && o->n < MAX_IDS)
		o->id[o->n++] = id;
	return true;
}

static void *run_job(void *arg)
{
	struct job *j = arg;
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = j->n_predict;
	gp.sampling = j->samp;
	j->out.n = 0;
	j->met = false;
	if (j->start)
		pthread_barrier_wait(j->start);
	j->rc = belt_generate(j->s, j->prompt.id, j->prompt.n, &gp, collect, j, j->err,
			      sizeof j->err);
	if (j->meet)
		atomic_fetch_add(&j->meet->finished, 1);
	j->st = *belt_session_stats(j->s);
	return NULL;
}

static void encode(struct belt_model *m, const char *text, struct ids *out)
{
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_tok_encode(belt_model_tokenizer(m), text, strlen(text), true, out->id,
				      MAX_IDS, &out->n, err, sizeof err) == 0,
		      "%s", err);
}

/* The ids plain session s gives for j's prompt (s keeps its cache from
 * one turn to the next as j's session does: a prompt that re-reads fewer
 * of its tokens may round otherwise, and a draw is sensitive to that). */
static void reference(struct belt_session *s, struct job *j, struct ids *ref)
{
	struct job r = *j;
	r.s = s;
	r.start = NULL;
	r.meet = NULL;
	run_job(&r);
	ck_assert_msg(r.rc == 0, "%s", r.err);
	*ref = r.out;
}

/* Floats summed in another order (a device's fused decode kernels against
 * the pass's) may flip a near-tie: where a session's ids part from the
 * plain session's, the plain session's logits of the two tokens there must
 * be closer than this, and the rest of that answer is not compared. The
 * CPU backend and lavapipe give decode's floats: nothing parts there. */
#define GROUP_TIE 1e-2

static int turn; /* 1, 2 */

/* The plain session's logit of its own pick minus that of other, after
 * the prompt of j and the first k ids of ref. */
static double gap_at(struct belt_model *m, struct belt_session *plain, const struct job *j,
		     const struct ids *ref, size_t k, int32_t other)
{
	int32_t n_vocab = belt_model_n_vocab(m);
	int32_t *ids = malloc((j->prompt.n + k) * sizeof *ids);
	float *lg = malloc((size_t)n_vocab * sizeof *lg);
	ck_assert(ids && lg);
	memcpy(ids, j->prompt.id, j->prompt.n * sizeof *ids);
	memcpy(ids + j->prompt.n, ref->id, k * sizeof *ids);
	char err[BELT_ERR_SIZE];
	belt_session_reset(plain);
	ck_assert_msg(belt_session_eval(plain, ids, j->prompt.n + k, 0, lg, err, sizeof err) == 0,
		      "%s", err);
	double gap = (double)lg[ref->id[k]] - lg[other];
	free(ids);
	free(lg);
	return gap;
}

/* Every job at once, each in its thread; each must give its reference
 * (or part from it only at a near-tie); returns the tokens decoded in
 * shared passes, adds those of them decoded ahead of a session's post to
 * *ahead and the answers that parted to *parted. */
static uint32_t run_together(struct belt_model *m, const struct belt_group *g, struct job *jobs,
			     int n, const struct ids *refs, struct belt_session *plain,
			     uint32_t *ahead, unsigned *parted)
{
	pthread_t th[N_SEQ];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)n);
	struct meet mt = {.g = g, .n = 0};
	atomic_init(&mt.finished, 0);
	for (int i = 0; i < n; i++)
		mt.n += !jobs[i].samp;
	for (int i = 0; i < n; i++) {
		jobs[i].start = &start;
		jobs[i].meet = jobs[i].samp ? NULL : &mt;
		ck_assert_int_eq(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
	}
	uint32_t grouped = 0;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++) {
		jobs[i].meet = NULL;
		ck_assert_msg(jobs[i].rc == 0, "session %d: %s", i, jobs[i].err);
		grouped += jobs[i].st.n_grouped;
		*ahead += jobs[i].st.n_grouped_ahead;
	}
	for (int i = 0; i < n; i++) {
		size_t k = 0;
		while (k < refs[i].n && k < jobs[i].out.n && jobs[i].out.id[k] == refs[i].id[k])
			k++;
		if (k == refs[i].n && k == jobs[i].out.n)
			continue;
		if (jobs[i].samp) {
			/* a draw's floats: the CPU's pass is decode's */
			ck_assert_msg(strcmp(backend(), "cpu"),
				      "sampled session %d, turn %d, token %zu: %d, a plain session draws %d", i,
				      turn, k, k < jobs[i].out.n ? jobs[i].out.id[k] : -1,
				      k < refs[i].n ? refs[i].id[k] : -1);
			printf("sampled session %d parts from a plain session at token %zu (turn %d)\n", i, k, turn);
			++*parted;
			continue;
		}
		ck_assert_msg(k < refs[i].n && k < jobs[i].out.n,
			      "session %d: %zu tokens, a plain session gives %zu", i, jobs[i].out.n,
			      refs[i].n);
		double gap = gap_at(m, plain, &jobs[i], &refs[i], k, jobs[i].out.id[k]);
		printf("session %d parts from a plain session at token %zu (%d, not %d): logits %.2g "
		       "apart\n",
		       i, k, jobs[i].out.id[k], refs[i].id[k], gap);
		ck_assert_msg(gap < GROUP_TIE, "session %d, token %zu: %d, a plain session gives %d "
			      "by %g", i, k, jobs[i].out.id[k], refs[i].id[k], gap);
		++*parted;
	}
	pthread_barrier_destroy(&start);
	return grouped;
}

/* runs: 0 for the default run sizes, else passes of that many rows and
 * submissions of that many tokens (a sliding-window model's local
 * layers then keep rings, in the group's sessions too) */
static void check_model(const char *file, uint32_t n_ctx, uint32_t n_predict, uint32_t runs)
{
	struct belt_model *m = ref_load_model(file);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = n_ctx;
	sp.n_ubatch = runs;
	sp.chunk = runs;
	struct belt_group *g;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_group_new(m, &sp, N_SEQ, &g, err, sizeof err) == 0, "%s", err);
	struct job jobs[N_SEQ] = {0};
	struct ids refs[N_SEQ];
	struct belt_session *plains[N_SEQ];
	/* sessions 1 and 3 sampled, one with a repeat penalty */
	struct belt_sampling samp[2];
	for (int i = 0; i < 2; i++) {
		belt_sampling_default(&samp[i]);
		samp[i].temp = 0.9f;
		samp[i].seed = 11 + (uint64_t)i;
		samp[i].repeat_penalty = i ? 1.2f : 1.0f;
	}
	for (int i = 0; i < N_SEQ; i++) {
		ck_assert_msg(belt_group_session(g, (uint32_t)i, NULL, &jobs[i].s, err, sizeof err) == 0,
			      "%s", err);
		encode(m, texts[i], &jobs[i].prompt);
		jobs[i].samp = i % 2 ? &samp[i / 2] : NULL;
		/* answers of different lengths: the group shrinks as they end */
		jobs[i].n_predict = n_predict - (uint32_t)i * n_predict / 8;
		ck_assert_msg(belt_session_create(m, &sp, &plains[i], err, sizeof err) == 0, "%s",
			      err);
		reference(plains[i], &jobs[i], &refs[i]);
	}
	struct belt_session *plain;
	ck_assert_msg(belt_session_create(m, &sp, &plain, err, sizeof err) == 0, "%s", err);
	/* each session's cache: a plain session's, rings and all (its own
	 * sizes were the defaults: the group's runs bound them) */
	for (int i = 0; i < N_SEQ; i++)
		ck_assert_uint_eq(belt_session_kv_bytes(jobs[i].s), belt_session_kv_bytes(plain));
	unsigned parted = 0;
	uint32_t ahead = 0;
	turn = 1;
	uint32_t grouped = run_together(m, g, jobs, N_SEQ, refs, plain, &ahead, &parted);
	/* a second turn: each prompt is its first turn and answer and more
	 * text, so only the new tokens run; the others' turns move on */
	uint32_t grouped2 = 0;
	for (int i = 0; i < N_SEQ; i++) {
		struct ids *p = &jobs[i].prompt;
		memcpy(p->id + p->n, jobs[i].out.id, jobs[i].out.n * sizeof *p->id);
		p->n += jobs[i].out.n;
		struct ids more;
		encode(m, " And then", &more);
		memcpy(p->id + p->n, more.id + 1, (more.n - 1) * sizeof *p->id);
		p->n += more.n - 1;
		reference(plains[i], &jobs[i], &refs[i]);
	}
	turn = 2;
	grouped2 = run_together(m, g, jobs, N_SEQ, refs, plain, &ahead, &parted);
	for (int i = 0; i < N_SEQ; i++)
		ck_assert_uint_gt(jobs[i].st.n_prompt_reused, 0);
	printf("group %-22s %s: %d sessions, two turns as plain sessions (%u of %d answers parted "
	       "at a near-tie); %u and %u tokens decoded in shared passes (%u ahead of a post)\n",
	       file, backend(), N_SEQ, parted, 2 * N_SEQ, grouped, grouped2, ahead);
	/* the CPU's passes are decode's floats */
	if (!strcmp(backend(), "cpu"))
		ck_assert_uint_eq(parted, 0);
	belt_session_free(plain);
	for (int i = 0; i < N_SEQ; i++)
		belt_session_free(plains[i]);
	/* the sessions took part in shared passes, not only in turns */
	ck_assert_uint_gt(grouped + grouped2, 0);
	/* one session freed before the group, the rest with it */
	belt_session_free(jobs[0].s);
	belt_group_free(g);
	belt_model_free(m);
}

START_TEST(test_stories_f32)
{
	check_model("stories260K.f32.gguf", 256, 64, 0);
}
END_TEST

START_TEST(test_stories_f16)
{
	check_model("stories260K.f16.gguf", 256, 64, 0);
}
END_TEST

START_TEST(test_pycoder)
{
	check_model("pycoder29M.q4_0.gguf", 384, 48, 0);
}
END_TEST

/* Sliding-window layers' rings in a group (models/arch: window 8 on
 * gemma2's layers 0 and 2, gemma3's all but 5): passes of 16 rows and
 * submissions of 16 tokens make them rings of 32 slots, against the 256
 * of the context the global layers keep; two turns of 64 tokens and
 * more go round them several times. */
START_TEST(test_rings)
{
	static const char *const files[] = {"arch/gemma2.gguf", "arch/gemma3.gguf"};
	check_model(files[_i], 256, 64, 16);
	/* what the rings save: the group's cache against whole contexts */
	struct belt_model *m = ref_load_model(files[_i]);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 256;
	sp.n_ubatch = sp.chunk = 16;
	uint64_t bytes[2];
	char err[BELT_ERR_SIZE];
	for (int full = 0; full < 2; full++) {
		sp.swa_full = full;
		struct belt_group *g;
		struct belt_session *s;
		ck_assert_msg(belt_group_new(m, &sp, N_SEQ, &g, err, sizeof err) == 0, "%s", err);
		ck_assert_msg(belt_group_session(g, 1, NULL, &s, err, sizeof err) == 0, "%s", err);
		bytes[full] = belt_session_kv_bytes(s);
		belt_group_free(g);
	}
	/* gemma2: 2 of 4 layers local, gemma3: 6 of 7 */
	uint64_t nl = _i ? 7 : 4, loc = _i ? 6 : 2;
	ck_assert_msg(bytes[0] * nl * 256 == bytes[1] * ((nl - loc) * 256 + loc * 32),
		      "%s: a group's session's KV cache of %llu bytes with rings, %llu without",
		      files[_i], (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
	belt_model_free(m);
}
END_TEST

/* Greedy sessions alone in the group's passes (none drawing on the
 * host): once they meet, a pass goes on for the steps their sessions may
 * take (chunk 8 here), each taking those tokens without posting; the
 * answers are the plain sessions' (on the CPU token for token, elsewhere
 * but at a near-tie), also where an answer ends (n_predict) within the
 * steps run ahead for it. */
START_TEST(test_ahead)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 128;
	sp.chunk = 8;
	struct belt_group *g;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_group_new(m, &sp, 2, &g, err, sizeof err) == 0, "%s", err);
	struct job jobs[N_SEQ] = {0};
	struct ids refs[N_SEQ];
	for (int i = 0; i < 2; i++) {
		ck_assert_msg(belt_group_session(g, (uint32_t)i, NULL, &jobs[i].s, err, sizeof err) ==
				      0,
			      "%s", err);
		encode(m, texts[2 * i], &jobs[i].prompt);
		jobs[i].n_predict = 37 - 8 * (uint32_t)i; /* not a multiple of 8 */
		struct belt_session *plain;
		ck_assert_msg(belt_session_create(m, &sp, &plain, err, sizeof err) == 0, "%s", err);
		reference(plain, &jobs[i], &refs[i]);
		belt_session_free(plain);
	}
	struct belt_session *plain;
	ck_assert_msg(belt_session_create(m, &sp, &plain, err, sizeof err) == 0, "%s", err);
	unsigned parted = 0;
	turn = 1;
	uint32_t ahead = 0;
	uint32_t grouped = run_together(m, g, jobs, 2, refs, plain, &ahead, &parted);
	printf("group ahead %s: 2 greedy sessions, %u tokens decoded in shared passes, %u ahead of "
	       "a post (%u of 2 answers parted at a near-tie)\n",
	       backend(), grouped, ahead, parted);
	if (!strcmp(backend(), "cpu"))
		ck_assert_uint_eq(parted, 0);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(jobs[i].out.n, jobs[i].n_predict);
	ck_assert_uint_gt(ahead, 0);
	belt_session_free(plain);
	belt_group_free(g);
	belt_model_free(m);
}
END_TEST

START_TEST(test_misuse)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = 64;
	struct belt_group *g;
	struct belt_session *s, *s2;
	char err[BELT_ERR_SIZE];
	ck_assert_int_ne(belt_group_new(m, &sp, 0, &g, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "expected 1 .. 256"), "%s", err);
	ck_assert_msg(belt_group_new(m, &sp, 2, &g, err, sizeof err) == 0, "%s", err);
	ck_assert_int_ne(belt_group_session(g, 2, NULL, &s, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "expected 0 .. 1"), "%s", err);
	ck_assert_msg(belt_group_session(g, 1, NULL, &s, err, sizeof err) == 0, "%s", err);
	ck_assert_int_ne(belt_group_session(g, 1, NULL, &s2, err, sizeof err), 0);
	ck_assert_msg(strstr(err, "exists already"), "%s", err);
	/* a session of the group alone decodes as a plain one */
	struct job j = {.s = s, .n_predict = 20};
	encode(m, texts[0], &j.prompt);
	struct ids ref;
	struct belt_session *plain;
	ck_assert_msg(belt_session_create(m, &sp, &plain, err, sizeof err) == 0, "%s", err);
	reference(plain, &j, &ref);
	belt_session_free(plain);
	run_job(&j);
	ck_assert_msg(j.rc == 0, "%s", j.err);
	ck_assert_uint_eq(j.out.n, ref.n);
	ck_assert_mem_eq(j.out.id, ref.id, ref.n * sizeof *ref.id);
	ck_assert_uint_eq(j.st.n_grouped, 0);
	belt_group_free(g);
	belt_group_free(NULL);
	belt_model_free(m);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("group");
	/* "light" is what CI runs under valgrind (tests/run-tests.sh) */
	TCase *tc = tcase_create("light");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_misuse);
	tcase_add_test(tc, test_ahead);
	tcase_add_test(tc, test_stories_f32);
	suite_add_tcase(su, tc);
	TCase *more = tcase_create("more");
	tcase_set_timeout(more, 0);
	tcase_add_test(more, test_stories_f16);
	if (!getenv("BELT_TEST_BACKEND") || !strcmp(backend(), "cpu"))
		tcase_add_test(more, test_pycoder);
	suite_add_tcase(su, more);
	/* "rings" is small enough for valgrind too (tests/run-tests.sh) */
	TCase *rings = tcase_create("rings");
	tcase_set_timeout(rings, 0);
	tcase_add_loop_test(rings, test_rings, 0, 2);
	suite_add_tcase(su, rings);
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
