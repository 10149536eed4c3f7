/* The server's life: load the model and its chat template, make the
 * slots, listen, wait for SIGINT or SIGTERM, then stop accepting, end
 * what is queued or running (503) and free everything. SIGINT and
 * SIGTERM are blocked in every thread (the mask is set before any thread
 * starts, the backend's included) and taken by sigwait here. */
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "belt/plugin.h"
#include "serve/serve.h"

void serve_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "belt serve: %s\n", line); /* one call: lines do not mix */
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = (n + 4096 + 1) * 2);
			if (!b) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = b;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	int bad = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (bad) {
		free(buf);
		errno = bad;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The chat template: --chat-template FILE, else the model's own; none is
 * not an error (chat requests are then refused). */
static int load_template(const struct serve_config *cfg, struct belt_model *m,
			 struct belt_template **out, const char **name)
{
	char err[BELT_ERR_SIZE];
	size_t len = 0;
	char *text = NULL;
	*out = NULL;
	*name = "tokenizer.chat_template";
	if (cfg->chat_template) {
		*name = cfg->chat_template;
		if (!(text = read_file(cfg->chat_template, &len))) {
			serve_log("--chat-template %s: %s", cfg->chat_template, strerror(errno));
			return -1;
		}
	} else {
		struct belt_gguf_str s;
		int found = belt_gguf_get_str(belt_model_gguf(m), "tokenizer.chat_template", &s, err,
					      sizeof err);
		if (found < 0) {
			serve_log("%s: %s", cfg->model, err);
			return -1;
		}
		if (!found) {
			serve_log("warning: %s has no chat template: /v1/chat/completions needs "
				  "--chat-template FILE", cfg->model);
			return 0;
		}
		if (!(text = malloc(s.len + 1)))
			return -1;
		memcpy(text, s.ptr, s.len);
		text[len = s.len] = 0;
	}
	int rc = belt_template_compile(text, len, out, err, sizeof err);
	if (rc)
		serve_log("%s:%s%s", *name, *err >= '0' && *err <= '9' ? "" : " ", err);
	free(text);
	return rc;
}

static const char *piece_text(const struct belt_tokenizer *tok, int32_t id)
{
	const char *p = id >= 0 ? belt_tok_piece(tok, id) : NULL;
	return p ? p : "";
}

/* Serve until a signal; the model, template and slots are loaded. */
static int serve(const struct serve_config *cfg, struct belt_model *m, struct serve_model *sm,
		 const sigset_t *sigs)
{
	char err[BELT_ERR_SIZE];
	struct belt_session_params sp;
	belt_session_params_default(&sp);
	sp.n_ctx = cfg->n_ctx;
	sp.chunk = cfg->chunk;
	struct serve_sched *sched;
	if (serve_sched_new(m, &sp, cfg->parallel, &sched, err, sizeof err)) {
		serve_log("%s", err);
		return 1;
	}
	sm->n_ctx = serve_sched_n_ctx(sched);
	serve_sched_context_shift(sched, cfg->context_shift, cfg->keep);
	char *path = strdup(cfg->model);
	struct serve_http_ctx ctx = {.cfg = cfg, .sm = sm, .sched = sched,
				     .model_name = path ? basename(path) : cfg->model,
				     .created = (int64_t)time(NULL)};
	atomic_init(&ctx.stopping, false);
	struct serve_http *http;
	int port;
	if (serve_http_start(&ctx, &http, &port, err, sizeof err)) {
		serve_log("%s", err);
		serve_sched_stop(sched);
		serve_sched_free(sched);
		free(path);
		return 1;
	}
	bool v6 = strchr(cfg->host, ':') != NULL;
	serve_log("listening on http://%s%s%s:%d/ (model %s, %d slot%s of %u tokens)",
		  v6 ? "[" : "", cfg->host, v6 ? "]" : "", port, ctx.model_name, cfg->parallel,
		  cfg->parallel == 1 ? "" : "s", sm->n_ctx);
	int sig = 0;
	while (sigwait(sigs, &sig))
		;
	serve_log("%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
	atomic_store(&ctx.stopping, true);
	serve_http_quiesce(http);
	serve_sched_stop(sched);
	serve_http_drain(http, 5); /* clients read their 503 (a stalled one is cut) */
	serve_http_stop(http);
	serve_sched_free(sched);
	free(path);
	serve_log("stopped");
	return 0;
}

static int run(const struct serve_config *cfg, const sigset_t *sigs)
{
	char err[BELT_ERR_SIZE];
	struct belt_model_params mp;
	belt_model_params_default(&mp);
	mp.path = cfg->model;
	mp.backend = cfg->backend;
	mp.n_threads = cfg->threads;
	mp.device = cfg->device;
	mp.kernels = cfg->kernels;
	struct belt_model *m;
	if (belt_model_load(&mp, &m, err, sizeof err)) {
		serve_log("%s", err);
		return 1;
	}
	struct serve_model sm = {.tok = belt_model_tokenizer(m)};
	struct belt_template *tpl;
	if (load_template(cfg, m, &tpl, &sm.tpl_name)) {
		belt_model_free(m);
		return 1;
	}
	sm.tpl = tpl;
	sm.bos_text = piece_text(sm.tok, belt_tok_bos(sm.tok));
	sm.eos_text = piece_text(sm.tok, belt_tok_eos(sm.tok));
	uint32_t n_ctx_train = belt_model_n_ctx_train(m);
	if (cfg->n_ctx > n_ctx_train && n_ctx_train)
		serve_log("warning: -c %u is above the model's training context (%u)", cfg->n_ctx,
			  n_ctx_train);
	/* Load the plugins requests may need now: the registry is not to be
	 * changed while connections read it. */
	if (!(sm.sampler = belt_sampler_get("gumbel", err, sizeof err) != NULL))
		serve_log("warning: %s: requests must be greedy (temperature 0)", err);
	if (!(sm.grammars = belt_grammar_get("gbnf", err, sizeof err) != NULL))
		serve_log("warning: %s: response_format is refused", err);
	int rc = serve(cfg, m, &sm, sigs);
	belt_template_free(tpl);
	belt_model_free(m);
	return rc;
}

int serve_run(const struct serve_config *cfg)
{
#ifdef M_ARENA_MAX
	/* a thread per connection: with glibc's arena per thread the heap
	 * grew by fragments over 10,000 requests (19.6 to 20.9 MB), with
	 * one it stays flat (18.8 to 19.0 MB; tests/serve-soak.sh); nothing
	 * allocates in the decode loop, so one costs no speed */
	mallopt(M_ARENA_MAX, 1);
#endif
	sigset_t sigs, old_mask;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	int rc = run(cfg, &sigs);
	sigaction(SIGPIPE, &old_pipe, NULL);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}
