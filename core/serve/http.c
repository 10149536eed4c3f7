/* The HTTP side, on libmicrohttpd with a thread per connection: routing,
 * the API key, bounded bodies, JSON answers and server-sent event
 * streams. A connection's thread waits for its job (a non-streamed
 * answer) or inside the stream's reader for the next text; while it
 * waits it watches its socket, so a client that goes away cancels its
 * generation and frees the slot. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "serve/serve.h"

/* How often a waiting connection looks at its socket (ms). */
#define POLL_MS 100
/* Bytes of a too large chunked body read and dropped before the
 * connection is closed without an answer. */
#define DROP_MAX (64u << 20)
/* Seconds a connection may sit idle (keep-alive, a slow body). */
#ifndef IDLE_TIMEOUT
#define IDLE_TIMEOUT 120
#endif

struct serve_http {
	struct serve_http_ctx *ctx;
	struct MHD_Daemon *d;
	atomic_int active; /* requests begun and not completed */
	char last_log[256]; /* libmicrohttpd's last message, for start errors */
};

enum route { R_PAGE, R_HEALTH, R_MODELS, R_CHAT, R_COMPLETIONS };

static const struct {
	const char *path, *method;
	enum route route;
	bool auth; /* needs the API key */
} routes[] = {
	{"/", "GET", R_PAGE, false},
	{"/health", "GET", R_HEALTH, false},
	{"/v1/models", "GET", R_MODELS, true},
	{"/v1/chat/completions", "POST", R_CHAT, true},
	{"/v1/completions", "POST", R_COMPLETIONS, true},
};

/* One request: its route, its body as it arrives, what it answered. */
struct request {
	enum route route;
	const char *method, *url;
	char *body;
	size_t len, cap;
	bool too_large;	/* a chunked body went over --max-body */
	size_t dropped; /* bytes of it read and dropped */
	int status;	/* of the answer queued; 0: none yet */
	struct serve_job *job; /* for the log line */
	double t0;
};

/* A server-sent event stream: the job and the bytes formatted for the
 * client but not yet taken by libmicrohttpd. */
struct stream {
	struct serve_http *h;
	struct MHD_Connection *c;
	struct serve_job *j;
	int fd;
	char *out;
	size_t n_out, off, cap;
	size_t sent; /* bytes of j->text sent */
	bool started, ended;
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve_http *h = cls;
	vsnprintf(h->last_log, sizeof h->last_log, fmt, ap);
	size_t n = strlen(h->last_log);
	while (n && (h->last_log[n - 1] == '\n' || h->last_log[n - 1] == '\r'))
		h->last_log[--n] = 0;
	/* bind errors are reported by serve_http_start; the rest as they come */
	if (h->d)
		serve_log("http: %s", h->last_log);
}

/* Whether the client has closed its side (or the socket failed). */
static bool client_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};
	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static int connection_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

/* The idle timeout counts from the last byte read or written, and
 * libmicrohttpd checks it after the handler returns: off while a request
 * waits for its answer (which may take minutes), on again once it is
 * ready, which restarts its clock. */
static void idle_timeout(struct MHD_Connection *c, bool on)
{
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, on ? (unsigned)IDLE_TIMEOUT : 0u);
}

/* Wait on j's condition for at most POLL_MS (j->mu held). */
static void timed_wait(struct serve_job *j)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += POLL_MS * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&j->cv, &j->mu, &ts);
}

static enum MHD_Result send_text(struct MHD_Connection *c, struct request *r, int status,
				 const char *type, char *text, size_t len, bool take)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, text, take ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (take)
			free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
					r->route == R_CHAT || r->route == R_COMPLETIONS ? "POST" : "GET, HEAD");
	r->status = status;
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* Send o (taken) as JSON. */
static enum MHD_Result send_json(struct MHD_Connection *c, struct request *r, int status,
				 json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!s) {
		static char oom[] = "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\","
				    "\"param\":null,\"code\":null}}";
		return send_text(c, r, 500, "application/json", oom, sizeof oom - 1, false);
	}
	return send_text(c, r, status, "application/json", s, strlen(s), true);
}

static enum MHD_Result send_error(struct MHD_Connection *c, struct request *r,
				  const struct serve_error *e)
{
	return send_json(c, r, e->status, serve_error_json(e));
}

/* The API key, compared in constant time. */
static bool authorized(struct serve_http *h, struct MHD_Connection *c)
{
	const char *key = h->ctx->cfg->api_key;
	if (!key)
		return true;
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!v || strncasecmp(v, "Bearer ", 7))
		return false;
	v += 7;
	while (*v == ' ')
		v++;
	size_t n = strlen(key);
	if (strlen(v) != n)
		return false;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(v[i] ^ key[i]);
	return diff == 0;
}

/* Append the event "data: <o>\n\n" (o taken) to the stream's bytes. */
static int put_event(struct stream *st, json_t *o, const char *raw)
{
	char *s = raw ? NULL : o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!raw && !s)
		return -1;
	const char *data = raw ? raw : s;
	size_t len = strlen(data) + 8;
	if (st->n_out + len + 1 > st->cap) {
		size_t cap = (st->n_out + len + 1) * 2;
		char *out = realloc(st->out, cap);
		if (!out) {
			free(s);
			return -1;
		}
		st->out = out;
		st->cap = cap;
	}
	st->n_out += (size_t)sprintf(st->out + st->n_out, "data: %s\n\n", data);
	free(s);
	return 0;
}

/* Format what the job has added since the last call; wait for it first.
 * -1: the client left (or memory ran out): end the stream. */
static int fill(struct stream *st)
{
	struct serve_job *j = st->j;
	const char *model = st->h->ctx->model_name;
	int rc = 0;
	pthread_mutex_lock(&j->mu);
	if (!st->started) { /* the chat's first chunk names the role, as OpenAI's */
		st->started = true;
		if (j->p.kind == SERVE_CHAT)
			rc = put_event(st, serve_chunk_json(j, model, "", 0, NULL, true), NULL);
		pthread_mutex_unlock(&j->mu);
		return rc;
	}
	while (!j->done && j->len == st->sent) {
		timed_wait(j);
		if (!j->done && j->len == st->sent && client_gone(st->fd)) {
			atomic_store(&j->cancel, true);
			pthread_mutex_unlock(&j->mu);
			return -1;
		}
	}
	if (j->len > st->sent && !j->err.status) {
		rc = put_event(st, serve_chunk_json(j, model, j->text + st->sent, j->len - st->sent,
						    NULL, false), NULL);
		st->sent = j->len;
	}
	if (j->done && rc == 0) {
		if (j->err.status) {
			rc = put_event(st, serve_error_json(&j->err), NULL);
		} else {
			rc = put_event(st, serve_chunk_json(j, model, NULL, 0, j->finish, false), NULL);
			if (rc == 0 && j->p.include_usage)
				rc = put_event(st, serve_usage_chunk_json(j, model), NULL);
			if (rc == 0)
				rc = put_event(st, NULL, "[DONE]");
		}
		st->ended = true;
		idle_timeout(st->c, true);
	}
	pthread_mutex_unlock(&j->mu);
	return rc;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	(void)pos;
	while (st->off == st->n_out) {
		if (st->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		st->off = st->n_out = 0;
		if (fill(st))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	size_t n = st->n_out - st->off < max ? st->n_out - st->off : max;
	memcpy(buf, st->out + st->off, n);
	st->off += n;
	return (ssize_t)n;
}

/* The stream is done with, sent or not: a generation still running has
 * nobody to go to. */
static void stream_free(void *cls)
{
	struct stream *st = cls;
	atomic_store(&st->j->cancel, true);
	serve_job_unref(st->j);
	free(st->out);
	free(st);
}

static enum MHD_Result send_stream(struct serve_http *h, struct MHD_Connection *c,
				   struct request *r, struct serve_job *j)
{
	struct stream *st = calloc(1, sizeof *st);
	if (!st)
		return MHD_NO;
	st->h = h;
	st->c = c;
	st->j = j;
	st->fd = connection_fd(c);
	serve_job_ref(j);
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st, stream_free);
	if (!resp) {
		stream_free(st);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	r->status = 200;
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* A non-streamed answer: wait for the job, watching the client. */
static enum MHD_Result send_answer(struct serve_http *h, struct MHD_Connection *c,
				   struct request *r, struct serve_job *j)
{
	int fd = connection_fd(c);
	pthread_mutex_lock(&j->mu);
	while (!j->done) {
		timed_wait(j);
		if (!j->done && client_gone(fd)) {
			atomic_store(&j->cancel, true);
			pthread_mutex_unlock(&j->mu);
			r->status = 499; /* nginx's "client closed request", for the log */
			return MHD_NO;
		}
	}
	struct serve_error e = j->err;
	json_t *o = e.status ? NULL : serve_response_json(j, h->ctx->model_name);
	pthread_mutex_unlock(&j->mu);
	idle_timeout(c, true);
	return e.status ? send_error(c, r, &e) : send_json(c, r, 200, o);
}

static enum MHD_Result completion(struct serve_http *h, struct MHD_Connection *c,
				  struct request *r)
{
	struct serve_error e;
	struct serve_params p;
	if (atomic_load(&h->ctx->stopping))
		return send_error(c, r, (serve_err(&e, 503, NULL, "the server is shutting down"), &e));
	if (serve_request_parse(h->ctx->sm, r->route == R_CHAT ? SERVE_CHAT : SERVE_COMPLETION,
				r->body ? r->body : "", r->len, &p, &e))
		return send_error(c, r, &e);
	bool stream = p.stream;
	struct serve_job *j = serve_job_new(&p);
	if (!j) {
		serve_params_free(&p);
		return send_error(c, r, (serve_err(&e, 500, NULL, "out of memory"), &e));
	}
	r->job = j;
	idle_timeout(c, false);
	if (serve_sched_submit(h->ctx->sched, j))
		return send_error(c, r, (serve_err(&e, 503, NULL, "the server is shutting down"), &e));
	return stream ? send_stream(h, c, r, j) : send_answer(h, c, r, j);
}

static enum MHD_Result get(struct serve_http *h, struct MHD_Connection *c, struct request *r)
{
	struct serve_http_ctx *x = h->ctx;
	if (r->route == R_PAGE)
		return send_text(c, r, 200, "text/html; charset=utf-8", (char *)serve_page_html,
				 strlen(serve_page_html), false);
	if (r->route == R_MODELS)
		return send_json(c, r, 200,
				 json_pack("{s:s, s:[{s:s, s:s, s:I, s:s}]}", "object", "list", "data",
					   "id", x->model_name, "object", "model", "created",
					   (json_int_t)x->created, "owned_by", "belt"));
	int busy, queued;
	serve_sched_load(x->sched, &busy, &queued);
	return send_json(c, r, 200,
			 json_pack("{s:s, s:i, s:i, s:i}", "status", "ok", "slots_idle",
				   x->cfg->parallel - busy, "slots_busy", busy, "queued", queued));
}

/* The first call for a request: route it, check the key and the
 * announced size; answer a GET, or MHD_YES to read a POST's body. */
static enum MHD_Result begin(struct serve_http *h, struct MHD_Connection *c, struct request *r,
			     const char *url, const char *method)
{
	struct serve_error e;
	bool head = !strcmp(method, "HEAD");
	size_t i, n = sizeof routes / sizeof *routes;
	for (i = 0; i < n && strcmp(routes[i].path, url); i++)
		;
	if (i == n) {
		serve_err(&e, 404, NULL, "unknown path '%.200s': the API is /v1/chat/completions, "
			  "/v1/completions, /v1/models", url);
		snprintf(e.code, sizeof e.code, "not_found");
		return send_error(c, r, &e);
	}
	r->route = routes[i].route;
	if (strcmp(routes[i].method, method) && !(head && !strcmp(routes[i].method, "GET"))) {
		serve_err(&e, 405, NULL, "%.200s takes %s, not %.16s", url, routes[i].method, method);
		snprintf(e.code, sizeof e.code, "method_not_allowed");
		return send_error(c, r, &e);
	}
	if (routes[i].auth && !authorized(h, c)) {
		serve_err(&e, 401, NULL, "a valid API key is needed: the header Authorization: Bearer KEY");
		snprintf(e.code, sizeof e.code, "invalid_api_key");
		return send_error(c, r, &e);
	}
	if (strcmp(routes[i].method, "POST"))
		return get(h, c, r);
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned long long len = cl ? strtoull(cl, NULL, 10) : 0;
	if (len > h->ctx->cfg->max_body) {
		serve_err(&e, 413, NULL, "the body is %llu bytes: at most %zu (--max-body)", len,
			  h->ctx->cfg->max_body);
		snprintf(e.code, sizeof e.code, "request_too_large");
		return send_error(c, r, &e);
	}
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct serve_http *h = cls;
	struct request *r = *con_cls;
	(void)version;
	if (!r) {
		if (!(r = calloc(1, sizeof *r)))
			return MHD_NO;
		*con_cls = r;
		atomic_fetch_add(&h->active, 1);
		r->method = method;
		r->url = url;
		r->t0 = serve_now();
		return begin(h, c, r, url, method);
	}
	if (r->status) { /* answered at the first call: nothing more to read */
		*data_size = 0;
		return MHD_YES;
	}
	if (*data_size) {
		size_t n = *data_size;
		*data_size = 0;
		/* a body without Content-Length (chunked) that grows too large
		 * is read on and dropped, and answered at its end; libmicrohttpd
		 * takes no answer before the body is read */
		if (r->too_large || n > h->ctx->cfg->max_body - r->len) {
			r->too_large = true;
			r->dropped += n;
			return r->dropped > DROP_MAX ? MHD_NO : MHD_YES;
		}
		if (r->len + n + 1 > r->cap) {
			size_t cap = (r->len + n + 1) * 2;
			char *b = realloc(r->body, cap);
			if (!b)
				return MHD_NO;
			r->body = b;
			r->cap = cap;
		}
		memcpy(r->body + r->len, data, n);
		r->len += n;
		return MHD_YES;
	}
	if (r->too_large) {
		struct serve_error e;
		serve_err(&e, 413, NULL, "the body is over %zu bytes, the most it may have (--max-body)",
			  h->ctx->cfg->max_body);
		snprintf(e.code, sizeof e.code, "request_too_large");
		return send_error(c, r, &e);
	}
	return completion(h, c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve_http *h = cls;
	struct request *r = *con_cls;
	(void)c;
	if (!r)
		return;
	atomic_fetch_sub(&h->active, 1);
	*con_cls = NULL;
	const char *how = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection closed)";
	if (r->job) {
		struct serve_job *j = r->job;
		pthread_mutex_lock(&j->mu);
		if (j->done)
			serve_log("%s %s %d %.3f s, %u + %u tokens%s", r->method, r->url, r->status,
				  serve_now() - r->t0, j->n_prompt, j->n_completion, how);
		else
			serve_log("%s %s %d %.3f s, cancelled%s", r->method, r->url, r->status,
				  serve_now() - r->t0, how);
		pthread_mutex_unlock(&j->mu);
		serve_job_unref(j);
	} else if (r->status != 200) {
		serve_log("%s %s %d%s", r->method, r->url, r->status, how);
	}
	free(r->body);
	free(r);
}

int serve_http_start(struct serve_http_ctx *ctx, struct serve_http **out, int *port, char *err,
		     size_t errsz)
{
	*out = NULL;
	struct serve_http *h = calloc(1, sizeof *h);
	if (!h)
		return belt_errf(err, errsz, "out of memory");
	h->ctx = ctx;
	atomic_init(&h->active, 0);
	char service[16];
	snprintf(service, sizeof service, "%d", ctx->cfg->port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai;
	int gai = getaddrinfo(ctx->cfg->host, service, &hints, &ai);
	if (gai) {
		free(h);
		return belt_errf(err, errsz, "--host %s: %s", ctx->cfg->host, gai_strerror(gai));
	}
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	struct MHD_Daemon *d = MHD_start_daemon(
		flags, (uint16_t)ctx->cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
		ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)ctx->cfg->max_conns,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!d) {
		belt_errf(err, errsz, "cannot listen on %s port %d: %s", ctx->cfg->host, ctx->cfg->port,
			  h->last_log[0] ? h->last_log : strerror(errno));
		free(h);
		return -1;
	}
	h->d = d;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : ctx->cfg->port;
	*out = h;
	return 0;
}

void serve_http_quiesce(struct serve_http *h)
{
	MHD_socket s = MHD_quiesce_daemon(h->d);
	if (s != MHD_INVALID_SOCKET)
		close(s);
}

void serve_http_drain(struct serve_http *h, double seconds)
{
	for (double t0 = serve_now(); atomic_load(&h->active) && serve_now() - t0 < seconds;) {
		struct timespec ts = {.tv_nsec = 10000000L};
		nanosleep(&ts, NULL);
	}
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
