/* Prefix reuse (doc/chat.md): a session remembers which tokens its KV
 * cache holds, and belt_generate evaluates a prompt from its first token
 * that differs. Each generation on a session that keeps its cache is
 * compared with the same generation on a session reset before it (which
 * then reuses nothing): the same ids, greedy and sampled, with and
 * without drafts, after errors and after belt_session_eval, eval_all and
 * verify at any position; and the count of reused tokens is what the
 * test's own record of the cache says it must be. BELT_TEST_BACKEND picks
 * the backend (tests/prefix-vulkan.sh). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "ref.h"

#define MAX_TOKENS 1024

static const char *backend(void)
{
	return getenv("BELT_TEST_BACKEND") ? getenv("BELT_TEST_BACKEND") : "cpu";
}

static bool on_cpu(void)
{
	return !strcmp(backend(), "cpu");
}

struct ids {
	int32_t id[MAX_TOKENS];
	size_t n;
};

/* The model, a session that keeps its cache (s) and one reset before
 * each generation (ref), and what s's cache holds by the test's count. */
struct pair {
	struct belt_model *m;
	struct belt_session *s, *ref;
	struct ids held;
	unsigned checks;
	uint64_t reused, prompted;
};

static struct belt_session *session(struct belt_model *m, uint32_t n_ctx)
{
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = n_ctx;
	sp.n_ubatch = 32; /* room for drafts; a long prompt runs in several passes */
	struct belt_session *s;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_session_create(m, &sp, &s, err, sizeof err) == 0, "%s", err);
	return s;
}

static void open_pair(struct pair *p, const char *file, uint32_t n_ctx)
{
	memset(p, 0, sizeof *p);
	p->m = ref_load_model(file);
	p->s = session(p->m, n_ctx);
	p->ref = session(p->m, n_ctx);
}

static void close_pair(struct pair *p, const char *what)
{
	ck_assert_uint_gt(p->reused, 0);
	printf("prefix %-22s %s: %u generations as on a reset session, %llu of %llu prompt tokens reused\n",
	       what, backend(), p->checks, (unsigned long long)p->reused,
	       (unsigned long long)p->prompted);
	belt_session_free(p->s);
	belt_session_free(p->ref);
	belt_model_free(p->m);
}

static void tokens(struct belt_model *m, const char *text, bool bos, struct ids *out)
{
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_tok_encode(belt_model_tokenizer(m), text, strlen(text), bos, out->id,
				      MAX_TOKENS, &out->n, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_le(out->n, MAX_TOKENS);
}

/* a + b, into out */
static void join(const struct ids *a, const int32_t *b, size_t nb, struct ids *out)
{
	ck_assert_uint_le(a->n + nb, MAX_TOKENS);
	memmove(out->id, a->id, a->n * sizeof *a->id);
	if (nb)
		memcpy(out->id + a->n, b, nb * sizeof *b);
	out->n = a->n + nb;
}

static bool collect(void *ud, int32_t id, const char *text, size_t len)
{
	(void)text;
	(void)len;
	struct ids *c = ud;
	if (id >= 0 && c->n < MAX_TOKENS)
		c->id[c->n++] = id;
	return true;
}

/* How a generation runs. */
struct how {
	uint32_t n_predict;
	bool stop_at_eog;
	const struct belt_sampling *sampling;
	struct belt_drafter *drafter;
	struct belt_grammar *grammar;
	/* a stop at the end of generation takes that token (at a position
	 * not run); otherwise it stops when the grammar allows only it */
	bool eog_taken;
};

static int generate(struct belt_session *s, const struct ids *prompt, const struct how *h,
		    struct ids *out, char *err, size_t errsz)
{
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = h->n_predict;
	gp.stop_at_eog = h->stop_at_eog;
	gp.sampling = h->sampling;
	gp.drafter = h->drafter;
	gp.grammar = h->grammar;
	gp.draft_unpaced = true;
	out->n = 0;
	return belt_generate(s, prompt->id, prompt->n, &gp, collect, out, err, errsz);
}

static size_t common(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
	size_t k = 0;
	while (k < na && k < nb && a[k] == b[k])
		k++;
	return k;
}

/* What the cache holds after a generation of prompt that gave out: every
 * position before the last token taken (an end-of-generation token that
 * stopped it is taken, though not handed out). */
static void note_held(struct pair *p, const struct ids *prompt, const struct ids *out,
		      bool eog_taken)
{
	size_t n = eog_taken || out->n == 0 ? out->n : out->n - 1;
	join(prompt, out->id, n, &p->held);
}

/* Generate prompt on p->s and on p->ref after a reset: the same ids, the
 * reuse the record predicts; out gets the ids. */
static void check(struct pair *p, const struct ids *prompt, const struct how *h, struct ids *out,
		  const char *what)
{
	static struct ids want;
	char err[BELT_ERR_SIZE];
	belt_session_reset(p->ref);
	ck_assert_msg(generate(p->ref, prompt, h, &want, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(belt_session_stats(p->ref)->n_prompt_reused, 0);
	size_t k = common(prompt->id, prompt->n, p->held.id, p->held.n);
	if (k >= prompt->n)
		k = prompt->n - 1; /* the last token runs again */
	ck_assert_msg(generate(p->s, prompt, h, out, err, sizeof err) == 0, "%s", err);
	const struct belt_stats *st = belt_session_stats(p->s);
	ck_assert_msg(st->n_prompt_reused == k, "%s on %s: %u prompt tokens reused, expected %zu",
		      what, backend(), st->n_prompt_reused, k);
	ck_assert_uint_eq(st->n_prompt, prompt->n);
	ck_assert_int_eq(st->stop, belt_session_stats(p->ref)->stop);
	size_t same = common(out->id, out->n, want.id, want.n);
	ck_assert_msg(same == out->n && same == want.n,
		      "%s on %s (%zu of %zu prompt tokens reused): id %zu is %d, %d on a reset session",
		      what, backend(), k, prompt->n, same, same < out->n ? out->id[same] : -1,
		      same < want.n ? want.id[same] : -1);
	note_held(p, prompt, out, st->stop == BELT_STOP_EOG && h->eog_taken);
	p->checks++;
	p->reused += k;
	p->prompted += prompt->n;
}

static const struct how greedy16 = {.n_predict = 16};

static const char *const story = "Once upon a time, there was a little girl named Lily. She";
static const char *const other = "Tom and his dog went to the park to play with a ball";

/* A prompt, then the same prompt with its answer and more text after it
 * (as a chat's next turn), then a text that extends the first. */
static void extended(const char *file)
{
	struct pair p;
	open_pair(&p, file, 256);
	static struct ids a, more, b, out;
	tokens(p.m, story, true, &a);
	check(&p, &a, &greedy16, &out, "a first prompt");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, 0);
	tokens(p.m, " Then they went home.", false, &more);
	join(&a, out.id, out.n, &b);
	join(&b, more.id, more.n, &b);
	check(&p, &b, &greedy16, &out, "the prompt, its answer and more");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, a.n + 15);
	char text[512];
	snprintf(text, sizeof text, "%s liked to play outside.", story);
	tokens(p.m, text, true, &b);
	check(&p, &b, &greedy16, &out, "a longer text");
	close_pair(&p, "extended");
}

START_TEST(extended_stories) { extended("stories260K.f32.gguf"); }
END_TEST

/* Prompts longer than a pass of the batched table, after which the cache
 * holds positions of decode's one-row table: pycoder29M (CPU only; not
 * where BELT_GOLDEN_ONLY leaves it out). */
START_TEST(extended_pycoder)
{
	/* BELT_GOLDEN_ONLY as for check_golden (valgrind runs skip it) */
	const char *only = getenv("BELT_GOLDEN_ONLY");
	if (!on_cpu() || (only && !strstr(only, "pycoder29M.q8_0.gguf")))
		return;
	struct pair p;
	open_pair(&p, "pycoder29M.q8_0.gguf", 512);
	static struct ids a, more, b, out;
	tokens(p.m,
	       "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"
	       "    if n < 2:\n        return n\n    a, b = 0, 1\n    for _ in range(n):\n",
	       true, &a);
	ck_assert_uint_gt(a.n, 32);
	const struct how h = {.n_predict = 24};
	check(&p, &a, &h, &out, "pycoder prompt");
	tokens(p.m, "\n\ndef factorial(n):\n    result = 1\n    for i in range(2, n + 1):\n", false,
	       &more);
	join(&a, out.id, out.n, &b);
	join(&b, more.id, more.n, &b);
	check(&p, &b, &h, &out, "pycoder prompt, answer and more");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, a.n + 23);
	b.n = a.n / 2 + 3; /* a shorter prompt in the middle of the first */
	check(&p, &b, &h, &out, "pycoder shorter");
	close_pair(&p, "pycoder29M");
}
END_TEST

/* A prompt that shares only its first tokens with what the cache holds,
 * the same prompt again, and a shorter one (a prefix of it). */
START_TEST(shared_identical_shorter)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	static struct ids a, b, out;
	tokens(p.m, story, true, &a);
	check(&p, &a, &greedy16, &out, "first");
	char text[256];
	snprintf(text, sizeof text, "Once upon a time, %s", other);
	tokens(p.m, text, true, &b);
	ck_assert_uint_gt(common(a.id, a.n, b.id, b.n), 2);
	check(&p, &b, &greedy16, &out, "a shared prefix");
	check(&p, &b, &greedy16, &out, "an identical prompt");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, b.n - 1);
	b.n = 6;
	check(&p, &b, &greedy16, &out, "a shorter prompt");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, 5);
	b.n = 1; /* BOS alone: nothing to reuse, it runs again */
	check(&p, &b, &greedy16, &out, "BOS alone");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, 0);
	/* to the end of the context, then a prompt within it */
	tokens(p.m, story, true, &a);
	const struct how full = {.n_predict = 0};
	check(&p, &a, &full, &out, "until the context is full");
	ck_assert_int_eq(belt_session_stats(p.s)->stop, BELT_STOP_CONTEXT_FULL);
	ck_assert_uint_eq(p.held.n, belt_session_n_ctx(p.s));
	join(&a, out.id, 100, &b);
	check(&p, &b, &greedy16, &out, "after a full context");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, b.n - 1);
	close_pair(&p, "shared/identical/shorter");
}
END_TEST

/* Stops at the end of generation, which stories260K never picks on its
 * own: grammars that allow only the end, at once (the end token is then
 * taken) or after a sentence (the last token has not run); then the
 * answer, the end token and more, as a chat template writes them. */
START_TEST(end_of_generation)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	static struct ids a, b, out;
	tokens(p.m, story, true, &a);
	const char *gbnf[2] = {"root ::= \"\"", "root ::= \" liked to\" [a-z ]* \".\""};
	int32_t eos = belt_tok_eos(belt_model_tokenizer(p.m));
	for (int i = 0; i < 2; i++) {
		struct belt_grammar *g;
		char err[BELT_ERR_SIZE];
		ck_assert_msg(belt_grammar_new(belt_model_tokenizer(p.m), NULL, "gbnf", gbnf[i],
					       strlen(gbnf[i]), &g, err, sizeof err) == 0, "%s", err);
		const struct how h = {.n_predict = 64, .stop_at_eog = true, .grammar = g,
				      .eog_taken = i == 0};
		check(&p, &a, &h, &out, "a grammar's end");
		ck_assert_int_eq(belt_session_stats(p.s)->stop, BELT_STOP_EOG);
		ck_assert_uint_eq(out.n == 0, i == 0);
		size_t held = a.n + (i == 0 ? 0 : out.n - 1);
		ck_assert_uint_eq(p.held.n, held);
		join(&a, out.id, out.n, &b);
		join(&b, &eos, 1, &b);
		join(&b, a.id + 1, a.n - 1, &b);
		check(&p, &b, &greedy16, &out, "answer, end token and more");
		ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, held);
		belt_grammar_free(g);
	}
	close_pair(&p, "end of generation");
}
END_TEST

static struct belt_drafter *drafter(struct belt_model *m, const char *name, const char *options)
{
	struct belt_drafter *d;
	char err[BELT_ERR_SIZE];
	ck_assert_msg(belt_drafter_new(m, name, options, &d, err, sizeof err) == 0, "%s", err);
	return d;
}

/* After drafted generations (rejected drafts left in slots past the last
 * position), greedy and sampled. */
START_TEST(after_drafts)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	struct belt_drafter *ds[2] = {drafter(p.m, "ngram", "min=1,max=3"), drafter(p.m, "test", "4")};
	static struct ids a, b, out;
	tokens(p.m, story, true, &a);
	struct belt_sampling samp;
	belt_sampling_default(&samp);
	samp.seed = 7;
	samp.repeat_penalty = 1.3f; /* the penalties read the history */
	for (int i = 0; i < 2; i++) {
		const struct how drafted = {.n_predict = 40, .drafter = ds[i]};
		check(&p, &a, &drafted, &out, "drafted");
		ck_assert_uint_gt(belt_session_stats(p.s)->n_verify, 0);
		/* the drafted answer and more, plain then drafted */
		join(&a, out.id, 30, &b);
		check(&p, &b, &greedy16, &out, "after drafts, plain");
		check(&p, &a, &drafted, &out, "after drafts, drafted");
		join(&a, out.id, 39, &b);
		const struct how sampled = {.n_predict = 24, .sampling = &samp, .drafter = ds[i]};
		check(&p, &b, &sampled, &out, "after drafts, sampled and drafted");
		join(&b, out.id, 10, &b);
		check(&p, &b, &drafted, &out, "after sampled drafts");
	}
	belt_drafter_free(ds[0]);
	belt_drafter_free(ds[1]);
	close_pair(&p, "after drafts");
}
END_TEST

/* After sampled generations (in a chain where the backend has the
 * sampler's ops, on the host otherwise), with penalties over the reused
 * history: the same draws for the seed. */
START_TEST(after_sampled)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	static struct ids a, b, out;
	tokens(p.m, story, true, &a);
	/* software Vulkan: fewer of them */
	for (uint64_t seed = 1; seed <= (on_cpu() ? 6 : 2); seed++) {
		struct belt_sampling samp;
		belt_sampling_default(&samp);
		samp.seed = seed;
		samp.temp = 0.9f;
		samp.repeat_penalty = seed % 2 ? 1.0f : 1.2f;
		samp.repeat_last_n = -1;
		const struct how h = {.n_predict = 20, .sampling = &samp};
		check(&p, &a, &h, &out, "sampled");
		join(&a, out.id, out.n, &b);
		check(&p, &b, &h, &out, "sampled after sampled");
		check(&p, &b, &greedy16, &out, "greedy after sampled");
		join(&b, out.id, 5, &b);
		check(&p, &b, &h, &out, "sampled after greedy");
	}
	close_pair(&p, "after sampled");
}
END_TEST

/* After errors: one found before anything runs keeps the cache as it
 * was; one half-way (the drafter fails after some tokens) keeps only the
 * prompt, and nothing after it is reused. */
START_TEST(after_errors)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	static struct ids a, b, out;
	tokens(p.m, story, true, &a);
	check(&p, &a, &greedy16, &out, "first");
	char err[BELT_ERR_SIZE];
	join(&a, out.id, out.n, &b);
	b.id[b.n - 1] = belt_model_n_vocab(p.m); /* out of range */
	ck_assert_int_eq(generate(p.s, &b, &greedy16, &out, err, sizeof err), -1);
	ck_assert_int_eq(belt_session_stats(p.s)->stop, BELT_STOP_ERROR);
	b.n = 0;
	ck_assert_int_eq(generate(p.s, &b, &greedy16, &out, err, sizeof err), -1);
	join(&a, p.held.id + a.n, p.held.n - a.n, &b);
	check(&p, &b, &greedy16, &out, "after a bad prompt");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, b.n - 1);

	/* the third proposal fails: tokens were generated, drafts verified */
	struct belt_drafter *d = drafter(p.m, "test", "4,fail=3");
	const struct how failing = {.n_predict = 60, .drafter = d};
	tokens(p.m, other, true, &a);
	ck_assert_int_eq(generate(p.s, &a, &failing, &out, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "failing proposal"), "%s", err);
	ck_assert_uint_gt(out.n, 0);
	/* the prompt ran whole; of what followed nothing is known */
	join(&a, NULL, 0, &p.held);
	join(&a, out.id, out.n, &b);
	check(&p, &b, &greedy16, &out, "after a failed generation");
	ck_assert_uint_eq(belt_session_stats(p.s)->n_prompt_reused, a.n);
	check(&p, &a, &greedy16, &out, "its prompt again");
	belt_drafter_free(d);
	close_pair(&p, "after errors");
}
END_TEST

/* Many requests alternating on one session: three conversations that
 * each grow by their answer and more text, some turns sampled, some
 * drafted, now and then a shorter prompt. */
START_TEST(alternating)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 512);
	struct belt_drafter *d = drafter(p.m, "ngram", "min=1,max=3");
	static struct ids conv[3], more, out;
	const char *starts[3] = {story, other, "The sun was shining and the birds"};
	const char *adds[4] = {" Then", " The next day,", " She said,", " They"};
	for (int c = 0; c < 3; c++)
		tokens(p.m, starts[c], true, &conv[c]);
	struct belt_sampling samp;
	belt_sampling_default(&samp);
	for (int turn = 0; turn < (on_cpu() ? 24 : 12); turn++) {
		int c = turn / 2 % 3; /* two turns of each in a row */
		struct how h = {.n_predict = 8 + (uint32_t)(turn % 5) * 3};
		if (turn % 4 == 1) {
			samp.seed = (uint64_t)turn;
			h.sampling = &samp;
		}
		if (turn % 5 == 3)
			h.drafter = d;
		struct ids *cv = &conv[c];
		if (cv->n + 40 + h.n_predict > 480) /* start that conversation over */
			tokens(p.m, starts[c], true, cv);
		if (turn % 7 == 6 && cv->n > 4) {
			static struct ids part;
			join(cv, NULL, 0, &part);
			part.n = cv->n / 2;
			check(&p, &part, &h, &out, "alternating, a part");
			continue;
		}
		check(&p, cv, &h, &out, "alternating");
		tokens(p.m, adds[turn % 4], false, &more);
		join(cv, out.id, out.n, cv);
		join(cv, more.id, more.n, cv);
	}
	belt_drafter_free(d);
	close_pair(&p, "alternating");
}
END_TEST

/* belt_session_eval, eval_all and verify at any position keep the record:
 * at the end of what the cache holds they extend it, inside it they cut
 * it there, past it (a gap) they leave it; a tree keeps only its first
 * chain; belt_session_reset forgets it all. */
START_TEST(eval_calls)
{
	struct pair p;
	open_pair(&p, "stories260K.f32.gguf", 256);
	static struct ids a, b, x, out;
	tokens(p.m, story, true, &a);
	tokens(p.m, " Tom and his dog", false, &x);
	char err[BELT_ERR_SIZE];
	float *logits = malloc((size_t)belt_model_n_vocab(p.m) * sizeof *logits);
	ck_assert(logits);
	struct belt_session *s = p.s;

	/* eval of the whole prompt, then a prompt that extends it */
	ck_assert_msg(belt_session_eval(s, a.id, a.n, 0, logits, err, sizeof err) == 0, "%s", err);
	join(&a, NULL, 0, &p.held);
	join(&a, x.id, x.n, &b);
	check(&p, &b, &greedy16, &out, "after eval");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, a.n);

	/* eval inside what the cache holds: it holds up to there, then x */
	ck_assert_msg(belt_session_eval(s, x.id, x.n, 5, NULL, err, sizeof err) == 0, "%s", err);
	join(&a, NULL, 0, &p.held);
	p.held.n = 5;
	join(&p.held, x.id, x.n, &p.held);
	check(&p, &a, &greedy16, &out, "after eval inside");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, 5);
	join(&a, NULL, 0, &b);
	b.n = 5;
	join(&b, x.id, x.n, &b);
	ck_assert_msg(belt_session_eval(s, x.id, x.n, 5, NULL, err, sizeof err) == 0, "%s", err);
	join(&b, NULL, 0, &p.held);
	check(&p, &b, &greedy16, &out, "its tokens");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, b.n - 1);

	/* past the end: a gap, the record stays */
	size_t held = p.held.n;
	ck_assert_msg(belt_session_eval(s, x.id, x.n, (uint32_t)held + 3, NULL, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_msg(belt_session_eval_all(s, x.id, x.n, (uint32_t)held + 10, NULL, err,
					    sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(p.held.n, held);
	join(&p.held, x.id, x.n, &b);
	check(&p, &b, &greedy16, &out, "after a gap");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, held);

	/* eval_all from the start */
	ck_assert_msg(belt_session_eval_all(s, a.id, a.n, 0, NULL, err, sizeof err) == 0, "%s", err);
	join(&a, NULL, 0, &p.held);
	join(&a, x.id, x.n, &b);
	check(&p, &b, &greedy16, &out, "after eval_all");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, a.n);

	/* verify a chain at the end: it extends the record */
	int32_t rows[8];
	ck_assert_msg(belt_session_eval(s, a.id, a.n, 0, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(belt_session_verify(s, x.id, NULL, x.n, (uint32_t)a.n, rows, err,
					  sizeof err) == 0, "%s", err);
	join(&a, x.id, x.n, &p.held);
	join(&p.held, a.id + 1, 3, &b);
	check(&p, &b, &greedy16, &out, "after verify");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, a.n + x.n);

	/* a tree: the rows of its first chain (0, 1) sit at their positions */
	static const int32_t parent[] = {-1, 0, 0, 1};
	ck_assert_msg(belt_session_eval(s, a.id, a.n, 0, NULL, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(belt_session_verify(s, x.id, parent, 4, (uint32_t)a.n, rows, err,
					  sizeof err) == 0, "%s", err);
	join(&a, x.id, 2, &p.held);
	join(&a, x.id, x.n, &b);
	check(&p, &b, &greedy16, &out, "after a tree");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, a.n + 2);

	/* reset */
	belt_session_reset(s);
	p.held.n = 0;
	check(&p, &b, &greedy16, &out, "after reset");
	ck_assert_uint_eq(belt_session_stats(s)->n_prompt_reused, 0);
	free(logits);
	close_pair(&p, "eval, eval_all, verify");
}
END_TEST

/* Context shift (belt_generate_params.context_shift): a generation far
 * longer than the context goes on, and after each shift it is what a
 * session given the shifted history as its prompt generates (that
 * session keeps the first n_keep tokens the same way, from its earlier
 * prompt). The shifted history is made here: when position n_ctx is
 * reached, the first keep tokens stay and (n_ctx - keep) / 2 after them
 * go. Greedy (a chain), sampled with penalties, drafted. */
static void shift_case(struct belt_model *m, const char *what, uint32_t keep,
		       const struct belt_sampling *samp, struct belt_drafter *d)
{
	enum { N_CTX = 48, N_PREDICT = 150 };
	struct belt_session *s = session(m, N_CTX), *r = session(m, N_CTX);
	static struct ids prompt, out, hist, want;
	tokens(m, story, true, &prompt);
	ck_assert_uint_gt(prompt.n, keep + 1);
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = N_PREDICT;
	gp.sampling = samp;
	gp.drafter = d;
	gp.draft_unpaced = true;
	gp.context_shift = true;
	gp.n_keep = keep;
	gp.stop_at_eog = false;
	char err[BELT_ERR_SIZE];
	out.n = 0;
	ck_assert_msg(belt_generate(s, prompt.id, prompt.n, &gp, collect, &out, err, sizeof err) == 0,
		      "%s", err);
	const struct belt_stats *st = belt_session_stats(s);
	ck_assert_int_eq(st->stop, BELT_STOP_N_PREDICT);
	ck_assert_uint_eq(out.n, N_PREDICT);
	/* each shift leaves N_CTX + 1 - drop tokens, the pending one among them */
	uint32_t drop = (N_CTX - keep) / 2, shifts = 0;
	join(&prompt, NULL, 0, &hist);
	for (size_t i = 0; i < out.n;) {
		size_t seg = N_CTX + 1 - hist.n;
		if (seg > out.n - i)
			seg = out.n - i;
		gp.n_predict = (uint32_t)seg;
		gp.context_shift = false;
		want.n = 0;
		ck_assert_msg(belt_generate(r, hist.id, hist.n, &gp, collect, &want, err,
					    sizeof err) == 0, "%s", err);
		size_t same = common(out.id + i, seg, want.id, want.n);
		ck_assert_msg(same == seg && want.n == seg,
			      "shift %s on %s: after %u shifts, token %zu is %d, %d from the shifted "
			      "history as a prompt",
			      what, backend(), shifts, i + same, out.id[i + same],
			      same < want.n ? want.id[same] : -1);
		join(&hist, out.id + i, seg, &hist);
		i += seg;
		if (i < out.n) {
			memmove(hist.id + keep, hist.id + keep + drop,
				(hist.n - keep - drop) * sizeof *hist.id);
			hist.n -= drop;
			shifts++;
		}
	}
	ck_assert_uint_eq(st->n_shifts, shifts);
	ck_assert_uint_ge(shifts, 3);
	printf("prefix shift %-16s %s: %u tokens in a context of %u, %u shifts keeping %u, "
	       "each as from the shifted history\n",
	       what, backend(), N_PREDICT, N_CTX, shifts, keep);
	belt_session_free(s);
	belt_session_free(r);
}

START_TEST(context_shift)
{
	struct belt_model *m = ref_load_model("stories260K.f32.gguf");
	shift_case(m, "greedy, keep 0", 0, NULL, NULL);
	shift_case(m, "greedy, keep 5", 5, NULL, NULL);
	struct belt_sampling samp;
	belt_sampling_default(&samp);
	samp.seed = 3;
	samp.temp = 0.9f;
	samp.repeat_penalty = 1.2f;
	shift_case(m, "sampled, keep 1", 1, &samp, NULL);
	struct belt_drafter *d = drafter(m, "ngram", "min=1,max=3");
	shift_case(m, "drafted, keep 1", 1, NULL, d);
	belt_drafter_free(d);
	belt_model_free(m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("prefix");
	TCase *t = tcase_create("reuse");
	tcase_set_timeout(t, 0); /* no limit: CI bounds the run */
	tcase_add_test(t, extended_stories);
	tcase_add_test(t, extended_pycoder);
	tcase_add_test(t, shared_identical_shorter);
	tcase_add_test(t, end_of_generation);
	tcase_add_test(t, after_drafts);
	tcase_add_test(t, after_sampled);
	tcase_add_test(t, after_errors);
	tcase_add_test(t, alternating);
	tcase_add_test(t, eval_calls);
	tcase_add_test(t, context_shift);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	/* the test drafter lives with the test plugins */
	if (!ref_use_test_plugins("check_prefix"))
		return EXIT_FAILURE;
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
