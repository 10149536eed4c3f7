/* Tests for core/serve without a socket: stop strings across pieces
 * (held back, never emitted), request checking (each bad field a 400
 * naming it) and the OpenAI objects. The HTTP server itself is driven by
 * tests/serve.sh (curl) and tests/serve-openai.sh (the openai package). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "belt/gguf.h"
#include "ref.h"
#include "serve/serve.h"

/* What the stop matcher emitted, concatenated. */
struct sink {
	char text[1024];
	size_t len;
	int calls;
};

static void to_sink(void *ud, const char *text, size_t len)
{
	struct sink *s = ud;
	ck_assert_uint_lt(s->len + len, sizeof s->text);
	memcpy(s->text + s->len, text, len);
	s->len += len;
	s->text[s->len] = 0;
	s->calls++;
}

/* Feed pieces (NULL-terminated) through stops; the result of the last
 * feed, the text emitted into out (after a flush when no stop matched). */
static int run_stop(const char *const *stops, size_t n, const char *const *pieces,
		    struct sink *out)
{
	struct serve_stop st;
	ck_assert_int_eq(serve_stop_init(&st, stops, n), 0);
	*out = (struct sink){0};
	int r = 0;
	for (size_t i = 0; pieces[i] && r == 0; i++)
		r = serve_stop_feed(&st, pieces[i], strlen(pieces[i]), to_sink, out);
	if (r == 0)
		serve_stop_flush(&st, to_sink, out);
	serve_stop_free(&st);
	return r;
}

START_TEST(test_stop_split)
{
	struct sink s;
	/* "END" split over three pieces; what follows it is dropped */
	const char *stops[] = {"END"};
	ck_assert_int_eq(run_stop(stops, 1, (const char *[]){"Hello E", "N", "D and more", NULL}, &s),
			 1);
	ck_assert_str_eq(s.text, "Hello ");
	/* a false start is emitted once it cannot be one any more */
	ck_assert_int_eq(run_stop(stops, 1, (const char *[]){"a E", "N", "x", "E", NULL}, &s), 0);
	ck_assert_str_eq(s.text, "a ENxE");
	/* nothing of a possible stop string goes out before it is decided */
	struct serve_stop st;
	ck_assert_int_eq(serve_stop_init(&st, stops, 1), 0);
	s = (struct sink){0};
	ck_assert_int_eq(serve_stop_feed(&st, "abcEN", 5, to_sink, &s), 0);
	ck_assert_str_eq(s.text, "abc");
	ck_assert_int_eq(serve_stop_feed(&st, "D", 1, to_sink, &s), 1);
	ck_assert_str_eq(s.text, "abc");
	serve_stop_free(&st);
}
END_TEST

START_TEST(test_stop_several)
{
	struct sink s;
	/* the earliest of several, whichever completes first in the text */
	const char *stops[] = {"world", "lo w", "\n\n"};
	ck_assert_int_eq(run_stop(stops, 3, (const char *[]){"hel", "lo", " wor", "ld", NULL}, &s), 1);
	ck_assert_str_eq(s.text, "hel");
	ck_assert_int_eq(run_stop(stops, 3, (const char *[]){"a\n", "\nb", NULL}, &s), 1);
	ck_assert_str_eq(s.text, "a");
	/* a stop string at the very start emits nothing */
	ck_assert_int_eq(run_stop(stops, 3, (const char *[]){"world", NULL}, &s), 1);
	ck_assert_uint_eq(s.len, 0);
	/* overlapping beginnings: "aab" in "aaab" */
	const char *aab[] = {"aab"};
	ck_assert_int_eq(run_stop(aab, 1, (const char *[]){"a", "a", "a", "b", NULL}, &s), 1);
	ck_assert_str_eq(s.text, "a");
	/* multi-byte characters are held whole */
	const char *e[] = {"\xc3\xa9t\xc3\xa9"};
	ck_assert_int_eq(run_stop(e, 1, (const char *[]){"un \xc3\xa9", "t", "\xc3\xa9", NULL}, &s), 1);
	ck_assert_str_eq(s.text, "un ");
	/* no stop strings: every piece goes out as it comes */
	ck_assert_int_eq(run_stop(NULL, 0, (const char *[]){"a", "b", NULL}, &s), 0);
	ck_assert_str_eq(s.text, "ab");
	ck_assert_int_eq(s.calls, 2);
}
END_TEST

/* A tokenizer and a template to check requests against. */
static struct belt_gguf *g;
static struct belt_tokenizer *tok;
static struct belt_template *tpl;
static struct serve_model sm;

static void setup(void)
{
	char err[BELT_ERR_SIZE];
	g = belt_gguf_open(shared_path("models/stories260K.f32.gguf"), err, sizeof err);
	ck_assert_msg(g != NULL, "%s", err);
	ck_assert_msg(belt_tok_load(g, &tok, err, sizeof err) == 0, "%s", err);
	static const char t[] = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
				"{% if add_generation_prompt %}assistant:{% endif %}";
	ck_assert_msg(belt_template_compile(t, sizeof t - 1, &tpl, err, sizeof err) == 0, "%s", err);
	sm = (struct serve_model){.tok = tok, .tpl = tpl, .tpl_name = "test", .bos_text = "<s>",
				  .eos_text = "</s>", .n_ctx = 64, .grammars = false, .sampler = true};
}

static void teardown(void)
{
	belt_template_free(tpl);
	belt_tok_free(tok);
	belt_gguf_close(g);
}

/* Parse body as kind: 0, or the error's status with its param in e. */
static int parse(enum serve_kind kind, const char *body, struct serve_params *p,
		 struct serve_error *e)
{
	*e = (struct serve_error){0};
	if (serve_request_parse(&sm, kind, body, strlen(body), p, e))
		return e->status;
	return 0;
}

START_TEST(test_request_good)
{
	struct serve_params p;
	struct serve_error e;
	ck_assert_int_eq(parse(SERVE_CHAT,
			       "{\"model\":\"x\",\"messages\":[{\"role\":\"developer\",\"content\":\"Be brief.\"},"
			       "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
			       "{\"type\":\"text\",\"text\":\" there\"}]}],\"stream\":true,"
			       "\"stream_options\":{\"include_usage\":true},\"max_tokens\":5,"
			       "\"temperature\":0.5,\"top_k\":3,\"seed\":42,\"stop\":[\"a\",\"bc\"],"
			       "\"user\":\"ignored\",\"n\":1,\"logprobs\":false}", &p, &e),
			 0);
	ck_assert(p.stream && p.include_usage);
	ck_assert_uint_eq(p.max_tokens, 5);
	ck_assert_float_eq(p.samp.temp, 0.5f);
	ck_assert_int_eq(p.samp.top_k, 3);
	ck_assert_uint_eq(p.samp.seed, 42);
	ck_assert_uint_eq(p.n_stop, 2);
	ck_assert_str_eq(p.stop[1], "bc");
	/* the prompt is the rendering, BOS first: compare with encoding it */
	static const char text[] = "system: Be brief.\nuser: Hi there\nassistant:";
	int32_t ids[64];
	size_t n;
	ck_assert_int_eq(belt_tok_encode(tok, text, sizeof text - 1, true, ids, 64, &n, NULL, 0), 0);
	ck_assert_uint_eq(p.n_ids, n);
	ck_assert_mem_eq(p.ids, ids, n * sizeof *ids);
	serve_params_free(&p);
	/* a completion's prompt as token ids, kept as they are */
	ck_assert_int_eq(parse(SERVE_COMPLETION, "{\"prompt\":[1,2,3],\"stop\":\"x\"}", &p, &e), 0);
	ck_assert_uint_eq(p.n_ids, 3);
	ck_assert_int_eq(p.ids[2], 3);
	ck_assert_str_eq(p.stop[0], "x");
	serve_params_free(&p);
	/* null is the default, as OpenAI's clients send it */
	ck_assert_int_eq(parse(SERVE_COMPLETION, "{\"prompt\":\"Once\",\"max_tokens\":null,\"stop\":null}",
			       &p, &e), 0);
	ck_assert_uint_eq(p.max_tokens, 0);
	ck_assert_int_eq(p.ids[0], belt_tok_bos(tok));
	serve_params_free(&p);
}
END_TEST

START_TEST(test_request_bad)
{
	static const struct {
		enum serve_kind kind;
		const char *body, *param, *words;
	} cases[] = {
		{SERVE_CHAT, "{\"messages\": [", "", "not JSON"},
		{SERVE_CHAT, "[1]", "", "JSON object"},
		{SERVE_CHAT, "{}", "messages", "required"},
		{SERVE_CHAT, "{\"messages\": []}", "messages", "non-empty"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"wizard\", \"content\": \"x\"}]}", "messages",
		 "'wizard'"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"tool\", \"content\": \"x\"}]}", "messages",
		 "expected system"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": 3}]}", "messages",
		 "content"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\"}]}]}",
		 "messages", "text"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"temperature\": \"hot\"}",
		 "temperature", "number"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"top_p\": 2}",
		 "top_p", "0 to 1"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 0}",
		 "max_tokens", "1 to"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 1.5}",
		 "max_tokens", "integer"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stream\": 1}",
		 "stream", "boolean"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stop\": [\"\"]}",
		 "stop", "1 to"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"stop\": 5}",
		 "stop", "string"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"n\": 2}", "n",
		 "must be 1"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{}]}",
		 "tools", "not supported"},
		{SERVE_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"response_format\": "
			     "{\"type\": \"yaml\"}}", "response_format", "json_schema"},
		{SERVE_COMPLETION, "{}", "prompt", "required"},
		{SERVE_COMPLETION, "{\"prompt\": {}}", "prompt", "a string"},
		{SERVE_COMPLETION, "{\"prompt\": [1, 100000]}", "prompt", "token id"},
		{SERVE_COMPLETION, "{\"prompt\": \"x\", \"seed\": \"1\"}", "seed", "integer"},
		{SERVE_COMPLETION, "{\"prompt\": \"x\", \"echo\": true}", "echo", "not supported"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct serve_params p;
		struct serve_error e;
		ck_assert_msg(parse(cases[i].kind, cases[i].body, &p, &e) == 400, "%s: status %d",
			      cases[i].body, e.status);
		ck_assert_msg(!strcmp(e.param, cases[i].param), "%s: param '%s', expected '%s'",
			      cases[i].body, e.param, cases[i].param);
		ck_assert_msg(strstr(e.msg, cases[i].words), "%s: message '%s' lacks '%s'",
			      cases[i].body, e.msg, cases[i].words);
		ck_assert_str_eq(e.type, "invalid_request_error");
	}
	/* longer than the context (64 here): 400 naming the field and sizes */
	char body[4096];
	int n = snprintf(body, sizeof body, "{\"prompt\": \"");
	for (int i = 0; i < 100; i++)
		n += snprintf(body + n, sizeof body - (size_t)n, "Once upon a time ");
	snprintf(body + n, sizeof body - (size_t)n, "\"}");
	struct serve_params p;
	struct serve_error e;
	ck_assert_int_eq(parse(SERVE_COMPLETION, body, &p, &e), 400);
	ck_assert_str_eq(e.param, "prompt");
	ck_assert_ptr_nonnull(strstr(e.msg, "the context holds 64"));
	/* response_format without the grammar plugin loaded: refused, not crashed */
	ck_assert_int_eq(parse(SERVE_COMPLETION, "{\"prompt\": \"x\", \"response_format\": "
						 "{\"type\": \"json_object\"}}", &p, &e), 500);
	ck_assert_str_eq(e.param, "response_format");
}
END_TEST

START_TEST(test_objects)
{
	struct serve_params p = {.kind = SERVE_CHAT, .include_usage = true};
	struct serve_job *j = serve_job_new(&p);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(strncmp(j->id, "chatcmpl-", 9), 0);
	ck_assert_uint_eq(strlen(j->id), 9 + 24);
	serve_job_emit(j, "Hi \"you\"", 8);
	serve_job_finish(j, "length", 7, 3, NULL);
	json_t *o = serve_response_json(j, "m.gguf");
	char *s = json_dumps(o, JSON_COMPACT);
	ck_assert_ptr_nonnull(strstr(s, "\"object\":\"chat.completion\""));
	ck_assert_ptr_nonnull(strstr(s, "\"message\":{\"role\":\"assistant\",\"content\":\"Hi \\\"you\\\"\"}"));
	ck_assert_ptr_nonnull(strstr(s, "\"finish_reason\":\"length\""));
	ck_assert_ptr_nonnull(strstr(s, "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}"));
	free(s);
	json_decref(o);
	o = serve_chunk_json(j, "m.gguf", "", 0, NULL, true);
	s = json_dumps(o, JSON_COMPACT);
	ck_assert_ptr_nonnull(strstr(s, "\"object\":\"chat.completion.chunk\""));
	ck_assert_ptr_nonnull(strstr(s, "\"delta\":{\"role\":\"assistant\",\"content\":\"\"}"));
	ck_assert_ptr_nonnull(strstr(s, "\"finish_reason\":null"));
	ck_assert_ptr_nonnull(strstr(s, "\"usage\":null"));
	free(s);
	json_decref(o);
	struct serve_error e;
	serve_err(&e, 400, "stop", "bad");
	o = serve_error_json(&e);
	s = json_dumps(o, JSON_COMPACT);
	ck_assert_str_eq(s, "{\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\","
			    "\"param\":\"stop\",\"code\":null}}");
	free(s);
	json_decref(o);
	serve_job_unref(j);
}
END_TEST

static Suite *serve_suite(void)
{
	Suite *s = suite_create("serve");
	TCase *tc = tcase_create("stop");
	tcase_add_test(tc, test_stop_split);
	tcase_add_test(tc, test_stop_several);
	suite_add_tcase(s, tc);
	tc = tcase_create("request");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_request_good);
	tcase_add_test(tc, test_request_bad);
	tcase_add_test(tc, test_objects);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(serve_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
