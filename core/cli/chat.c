/* belt chat: a conversation in the terminal. Each turn renders the whole
 * conversation with the chat template and hands it to belt_generate,
 * whose prefix reuse evaluates only the tokens the session's KV cache
 * does not hold yet (doc/chat.md). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "belt/belt.h"
#include "belt/sampler.h"
#include "belt/template.h"
#include "cli/cli.h"

static const char help[] =
	"usage: belt chat -m MODEL [OPTIONS]\n"
	"\n"
	"Chat with MODEL in the terminal; answers stream as they are generated.\n"
	"Each turn the conversation is rendered with the chat template, and only the\n"
	"tokens the session does not hold yet are evaluated: after each answer a line\n"
	"on stderr says how many prompt tokens were evaluated and how many reused.\n"
	"A line that ends with \\ goes on on the next line (the \\ becomes a newline).\n"
	"Ctrl-C stops an answer (a second one ends belt); at the prompt it leaves,\n"
	"as Ctrl-D and /exit do.\n"
	"/clear starts the conversation over. Sampling is belt run's (doc/samplers.md).\n"
	"\n"
	"  -m, --model FILE     GGUF model\n"
	"  -sys, --system-prompt TEXT  the system message of the conversation\n"
	"      --chat-template FILE  Jinja chat template (default: the model's\n"
	"                       tokenizer.chat_template; doc/chat-templates.md)\n"
	"  -n, --n-predict N    tokens per answer at most (default -1: until the model ends it)\n"
	"  -c, --ctx-size N     context length (default: the model's)\n"
	"  -t, --threads N      CPU threads (default: one per core)\n"
	"      --backend NAME   backend plugin (default cpu)\n"
	"      --device N       the backend's device N (default: its choice)\n"
	CLI_SAMPLING_HELP
	"  -h, --help           this help\n";

struct chat_opts {
	const char *model, *system, *template_file, *backend;
	long n_predict, n_ctx, threads, device;
	bool seed_given;
	struct belt_sampling samp;
};

/* The value of llama.cpp's "-sys TEXT" (getopt reads it as -s with the
 * value "ys") or of --system-prompt TEXT; NULL after the usage message. */
static const char *system_value(int argc, char **argv, bool long_form)
{
	if (long_form)
		return optarg;
	if (strcmp(argv[optind - 1], "-sys")) {
		cli_usage_error("chat", "unknown option '-s': expected -sys TEXT or --system-prompt TEXT");
		return NULL;
	}
	if (optind >= argc) {
		cli_usage_error("chat", "option '-sys' needs a value");
		return NULL;
	}
	return argv[optind++];
}

/* The options; -1 after --help, CLI_USAGE after a usage message. */
static int parse(int argc, char **argv, struct chat_opts *o)
{
	enum { O_BACKEND = 256, O_DEVICE, O_TEMPLATE };
	static const struct option opts[] = {
		{"model", required_argument, 0, 'm'}, {"system-prompt", required_argument, 0, 's'},
		{"chat-template", required_argument, 0, O_TEMPLATE},
		{"n-predict", required_argument, 0, 'n'}, {"ctx-size", required_argument, 0, 'c'},
		{"threads", required_argument, 0, 't'}, {"backend", required_argument, 0, O_BACKEND},
		{"device", required_argument, 0, O_DEVICE}, CLI_SAMPLING_OPTIONS,
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	*o = (struct chat_opts){.backend = "cpu", .n_predict = -1, .device = -1};
	belt_sampling_default(&o->samp);
	o->samp.temp = 0.0f; /* greedy unless --temp is given */
	opterr = 0;
	optind = 0; /* glibc: restart the scan from argv[1], forgetting any earlier one */
	int c, li = -1;
	while ((c = getopt_long(argc, argv, ":m:s:n:c:t:h", opts, &li)) != -1) {
		int sampling = cli_sampling_option("chat", c, optarg, &o->samp, &o->seed_given);
		if (sampling < 0)
			return CLI_USAGE;
		if (sampling > 0) {
			li = -1;
			continue;
		}
		switch (c) {
		case 'm': o->model = optarg; break;
		case 's': if (!(o->system = system_value(argc, argv, li >= 0))) return CLI_USAGE; break;
		case O_TEMPLATE: o->template_file = optarg; break;
		case 'n': if (!cli_int("chat", "-n", optarg, -1, 1L << 24, &o->n_predict)) return CLI_USAGE; break;
		case 'c':
			if (!cli_int("chat", "-c", optarg, 0, 1L << 24, &o->n_ctx)) return CLI_USAGE;
			if (o->n_ctx == 1)
				return cli_usage_error("chat", "-c: expected 0 (the model's context) or 2..%ld, got '%s'",
						       1L << 24, optarg);
			break;
		case 't': if (!cli_int("chat", "-t", optarg, 1, 1024, &o->threads)) return CLI_USAGE; break;
		case O_BACKEND: o->backend = optarg; break;
		case O_DEVICE: if (!cli_int("chat", "--device", optarg, 0, 1023, &o->device)) return CLI_USAGE; break;
		case 'h': fputs(help, stdout); return -1;
		case ':': return cli_usage_error("chat", "option '%s' needs a value", argv[optind - 1]);
		default: return cli_usage_error("chat", "unknown option '%s'", argv[optind - 1]);
		}
		li = -1;
	}
	if (optind < argc)
		return cli_usage_error("chat", "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return cli_usage_error("chat", "-m MODEL is required");
	if (o->n_predict == 0)
		return cli_usage_error("chat", "-n: expected -1 or 1..%ld, got 0", 1L << 24);
	char err[BELT_ERR_SIZE];
	if (belt_sampling_check(&o->samp, err, sizeof err))
		return cli_usage_error("chat", "%s", err);
	if (o->device >= 0)
		return cli_check_device("chat", o->backend, o->device);
	return 0;
}

/* Ctrl-C: set by SIGINT; it stops an answer, or ends a read at the
 * prompt (the handler is installed without SA_RESTART there). */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* While reading, a signal ends the read (EINTR); while answering, writes
 * go on (SA_RESTART) and a second Ctrl-C ends belt at once (SA_RESETHAND),
 * as in belt run. */
static void catch_sigint(bool answering)
{
	struct sigaction sa = {.sa_handler = on_sigint,
			       .sa_flags = answering ? SA_RESTART | SA_RESETHAND : 0};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

/* A growing text. */
struct text {
	char *p;
	size_t len, cap;
};

static bool text_add(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p)
			return false;
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
	return true;
}

/* Standard input, read as it comes: lines, an interrupted read, the end. */
struct input {
	char buf[4096];
	size_t at, have;
	bool eof;
};

enum { LINE, INTERRUPTED, END };

/* The next line into *line (its newline dropped), appended. */
static int read_line(struct input *in, struct text *line)
{
	for (;;) {
		while (in->at < in->have) {
			char c = in->buf[in->at++];
			if (c == '\n')
				return LINE;
			if (!text_add(line, &c, 1))
				return END;
		}
		if (in->eof)
			return line->len ? LINE : END;
		ssize_t n = read(0, in->buf, sizeof in->buf);
		if (n < 0 && errno == EINTR && interrupted)
			return INTERRUPTED;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			in->eof = true;
		else
			in->have = (size_t)n, in->at = 0;
	}
}

/* The user's next message: lines that end with \ go on; *msg empty for
 * an empty line. */
static int read_message(struct input *in, bool tty, struct text *msg)
{
	msg->len = 0;
	if (tty) {
		fputs("> ", stdout);
		fflush(stdout);
	}
	for (;;) {
		size_t start = msg->len;
		int r = read_line(in, msg);
		if (r == INTERRUPTED && msg->len > 0) {
			/* Ctrl-C in a message of several lines drops it */
			fputc('\n', stdout);
			msg->len = 0;
			interrupted = 0;
			return LINE;
		}
		if (r != LINE)
			return r;
		if (msg->len == start || msg->p[msg->len - 1] != '\\')
			break;
		msg->p[msg->len - 1] = '\n';
		if (tty) {
			fputs("... ", stdout);
			fflush(stdout);
		}
	}
	if (!text_add(msg, "", 0))
		return END;
	return LINE;
}

/* The conversation and what renders it. */
struct chat {
	struct belt_model *m;
	struct belt_session *s;
	const struct chat_opts *o;
	struct belt_template *tmpl;
	json_t *vars, *messages; /* messages belongs to vars */
	int32_t *ids;
	size_t cap;
	struct text answer;
	int werr; /* errno of a failed write of the answer; 0: none */
};

/* {"role": role, "content": text[0..len)}; NULL if text is not UTF-8. */
static json_t *message(const char *role, const char *text, size_t len)
{
	json_t *content = json_stringn(text, len);
	return content ? json_pack("{s:s, s:o}", "role", role, "content", content) : NULL;
}

static void clear(struct chat *c)
{
	json_array_clear(c->messages);
	if (c->o->system)
		json_array_append_new(c->messages,
				      message("system", c->o->system, strlen(c->o->system)));
	belt_session_reset(c->s);
}

/* The conversation rendered and encoded into c->ids; its token count, or
 * -1 after the message. */
static long encode(struct chat *c)
{
	char err[CLI_ERR_SIZE], *text = NULL;
	size_t len = 0, n = 0;
	if (belt_template_render(c->tmpl, c->vars, NULL, &text, &len, err, sizeof err)) {
		cli_error("chat", "the chat template: %s", err);
		return -1;
	}
	/* the template writes BOS where it wants one; else BOS if the model asks */
	const struct belt_tokenizer *tok = belt_model_tokenizer(c->m);
	int32_t bos = belt_tok_bos(tok);
	int rc = belt_tok_encode_flags(tok, text, len, BELT_TOK_PARSE_SPECIAL, NULL, 0, &n, err,
				       sizeof err);
	if (rc == 0 && n + 1 > c->cap) {
		int32_t *ids = realloc(c->ids, (n + 1) * sizeof *ids);
		if (ids) {
			c->ids = ids;
			c->cap = n + 1;
		} else {
			rc = belt_errf(err, sizeof err, "out of memory for %zu tokens", n + 1);
		}
	}
	if (rc == 0)
		rc = belt_tok_encode_flags(tok, text, len, BELT_TOK_PARSE_SPECIAL, c->ids + 1, n,
					   &n, err, sizeof err);
	free(text);
	if (rc) {
		cli_fail(err);
		return -1;
	}
	if (belt_tok_add_bos(tok) && bos >= 0 && (n == 0 || c->ids[1] != bos)) {
		c->ids[0] = bos;
		n++;
	} else {
		memmove(c->ids, c->ids + 1, n * sizeof *c->ids);
	}
	return (long)n;
}

/* Stream the answer to stdout and keep its text. */
static bool on_token(void *ud, int32_t id, const char *text, size_t len)
{
	(void)id;
	struct chat *c = ud;
	errno = 0;
	if (len && (fwrite(text, 1, len, stdout) != len || fflush(stdout) == EOF))
		c->werr = errno ? errno : EIO;
	else if (len && !text_add(&c->answer, text, len))
		c->werr = ENOMEM;
	return !c->werr && !interrupted;
}

/* The line after an answer, on stderr. */
static void report(const struct chat *c, bool stopped)
{
	const struct belt_stats *st = belt_session_stats(c->s);
	uint32_t evaluated = st->n_prompt - st->n_prompt_reused;
	fprintf(stderr,
		"belt: %u prompt tokens evaluated, %u reused, in %.3f s; %u tokens generated in %.3f s (%.1f tokens/s)%s\n",
		evaluated, st->n_prompt_reused, st->prefill_s, st->n_generated, st->decode_s,
		st->decode_s > 0 && st->n_generated > 1 ? (st->n_generated - 1) / st->decode_s : 0,
		stopped ? "; stopped" : "");
	if (st->stop == BELT_STOP_CONTEXT_FULL)
		cli_error("chat", "the context is full (%u tokens, -c): /clear starts over",
			  belt_session_n_ctx(c->s));
}

/* One turn: the user's message, the answer. false when belt chat must
 * end (output that cannot be written). */
static bool turn(struct chat *c, const char *text)
{
	json_t *msg = message("user", text, strlen(text));
	if (!msg) {
		cli_error("chat", "the message is not valid UTF-8: not sent");
		return true;
	}
	json_array_append_new(c->messages, msg);
	long n = encode(c);
	uint32_t n_ctx = belt_session_n_ctx(c->s);
	if (n >= 0 && (uint64_t)n >= n_ctx)
		cli_error("chat", "the conversation is %ld tokens, the context %u (-c): /clear starts over",
			  n, n_ctx);
	if (n < 0 || (uint64_t)n >= n_ctx) {
		json_array_remove(c->messages, json_array_size(c->messages) - 1);
		return true;
	}
	struct belt_generate_params gp;
	belt_generate_params_default(&gp);
	gp.n_predict = c->o->n_predict < 0 ? 0 : (uint32_t)c->o->n_predict;
	gp.sampling = &c->o->samp;
	c->answer.len = 0;
	text_add(&c->answer, "", 0);
	char err[CLI_ERR_SIZE];
	interrupted = 0;
	catch_sigint(true);
	int rc = belt_generate(c->s, c->ids, (size_t)n, &gp, on_token, c, err, sizeof err);
	bool stopped = interrupted;
	catch_sigint(false);
	interrupted = 0;
	fputc('\n', stdout);
	fflush(stdout);
	if (c->werr) {
		cli_error("chat", "cannot write the answer: %s", strerror(c->werr));
		return false;
	}
	if (rc) {
		cli_fail(err);
		json_array_remove(c->messages, json_array_size(c->messages) - 1);
		return true;
	}
	/* what was said stays said, also an answer cut short */
	json_array_append_new(c->messages, message("assistant", c->answer.p, c->answer.len));
	report(c, stopped);
	return true;
}

/* The conversation loop; the exit status. */
static int converse(struct chat *c)
{
	struct input in = {.eof = false};
	struct text msg = {0};
	bool tty = isatty(0);
	catch_sigint(false);
	int rc = 0;
	for (;;) {
		int r = read_message(&in, tty, &msg);
		if (r == INTERRUPTED || r == END) {
			if (tty)
				fputc('\n', stdout);
			break;
		}
		const char *t = msg.p + strspn(msg.p, " \t\r");
		size_t tl = strlen(t);
		while (tl && strchr(" \t\r", t[tl - 1]))
			tl--;
		if (tl == 0)
			continue;
		if (tl == 5 && !strncmp(t, "/exit", 5))
			break;
		if (tl == 6 && !strncmp(t, "/clear", 6)) {
			clear(c);
			fputs("(the conversation is cleared)\n", stdout);
			continue;
		}
		if (!turn(c, msg.p)) {
			rc = CLI_FAIL;
			break;
		}
	}
	signal(SIGINT, SIG_DFL);
	free(msg.p);
	return rc;
}

/* The chat template: FILE's, or the model's; NULL after the message. */
static char *template_text(const struct chat_opts *o, const struct belt_model *m, size_t *len)
{
	if (o->template_file) {
		char *text = cli_read_file(o->template_file, len);
		if (!text)
			cli_error("chat", "--chat-template %s: %s", o->template_file, strerror(errno));
		return text;
	}
	char err[CLI_ERR_SIZE];
	struct belt_gguf_str s;
	int found = belt_gguf_get_str(belt_model_gguf(m), "tokenizer.chat_template", &s, err,
				      sizeof err);
	if (found < 0) {
		cli_fail(err);
		return NULL;
	}
	if (!found) {
		cli_error("chat", "%s has no chat template (tokenizer.chat_template): give one with --chat-template FILE",
			  o->model);
		return NULL;
	}
	char *text = malloc(s.len + 1);
	if (!text) {
		cli_error("chat", "out of memory");
		return NULL;
	}
	memcpy(text, s.ptr, s.len);
	text[s.len] = 0;
	*len = s.len;
	return text;
}

/* The template's variables: the messages, the generation prompt, the
 * model's BOS and EOS text. */
static json_t *make_vars(const struct belt_model *m, json_t **messages)
{
	const struct belt_tokenizer *tok = belt_model_tokenizer(m);
	int32_t bos = belt_tok_bos(tok), eos = belt_tok_eos(tok);
	const char *b = bos >= 0 ? belt_tok_piece(tok, bos) : NULL;
	const char *e = eos >= 0 ? belt_tok_piece(tok, eos) : NULL;
	*messages = json_array();
	return json_pack("{s:o, s:b, s:s, s:s}", "messages", *messages, "add_generation_prompt", 1,
			 "bos_token", b ? b : "", "eos_token", e ? e : "");
}

static int chat(struct belt_model *m, const struct chat_opts *o)
{
	char err[CLI_ERR_SIZE];
	size_t len = 0;
	char *src = template_text(o, m, &len);
	if (!src)
		return CLI_FAIL;
	struct chat c = {.m = m, .o = o};
	int rc = belt_template_compile(src, len, &c.tmpl, err, sizeof err);
	free(src);
	if (rc)
		return cli_error("chat", "%s:%s", o->template_file ? o->template_file : "tokenizer.chat_template",
				 err);
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = (uint32_t)o->n_ctx;
	if (belt_session_create(m, &sp, &c.s, err, sizeof err)) {
		belt_template_free(c.tmpl);
		return cli_fail(err);
	}
	cli_model_warnings("chat", m, belt_session_n_ctx(c.s));
	c.vars = make_vars(m, &c.messages);
	if (!c.vars) {
		rc = cli_error("chat", "out of memory");
	} else {
		clear(&c);
		rc = converse(&c);
	}
	json_decref(c.vars);
	free(c.ids);
	free(c.answer.p);
	belt_session_free(c.s);
	belt_template_free(c.tmpl);
	return rc;
}

int cmd_chat(int argc, char **argv)
{
	struct chat_opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	cli_sampling_seed(&o.samp, o.seed_given);
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = o.model;
	mp.backend = o.backend;
	mp.n_threads = (int)o.threads;
	mp.device = (int)o.device;
	char err[CLI_ERR_SIZE];
	struct belt_model *m;
	if (belt_model_load(&mp, &m, err, sizeof err))
		return cli_fail(err);
	rc = chat(m, &o);
	belt_model_free(m);
	return rc;
}
