/* The top of libbelt: the public calls that need plugins. The layers below
 * (model, session) take the backend and sampler they use; this layer finds
 * them in the registry by name, loading their modules when needed. */
#include <stdlib.h>

#include "api/api.h"
#include "belt/belt.h"
#include "belt/plugin.h"
#include "session/session.h"

int belt_model_load(const struct belt_model_params *p, struct belt_model **out,
		    char *err, size_t errsz)
{
	*out = NULL;
	if (!p || !p->path)
		return belt_errf(err, errsz, "no model file given");
	const struct belt_backend_ops *be =
		belt_backend_get(p->backend ? p->backend : "cpu", err, errsz);
	if (!be)
		return belt_err_prefix(err, errsz, p->path);
	return belt_model_open(p, be, &api_arch_plugins, out, err, errsz);
}

int belt_grammar_new(const struct belt_tokenizer *tok, const char *name, const char *kind,
		     const char *text, size_t len, struct belt_grammar **out, char *err,
		     size_t errsz)
{
	*out = NULL;
	if (!kind)
		return belt_errf(err, errsz, "grammar: no kind given (e.g. gbnf)");
	const struct belt_grammar_ops *ops = belt_grammar_get(name ? name : kind, err, errsz);
	if (!ops)
		return -1;
	struct belt_grammar *g = malloc(sizeof *g);
	if (!g)
		return belt_errf(err, errsz, "grammar: out of memory");
	g->ops = ops;
	if (ops->compile(text, len, kind, tok, &g->state, err, errsz)) {
		free(g);
		return -1;
	}
	*out = g;
	return 0;
}

int belt_drafter_new(const struct belt_model *m, const char *name, const char *options,
		     struct belt_drafter **out, char *err, size_t errsz)
{
	*out = NULL;
	const struct belt_draft_ops *ops = belt_draft_get(name, err, errsz);
	if (!ops)
		return -1;
	double n_embd = 0;
	belt_model_hparam(m, "n_embd", &n_embd);
	struct belt_drafter *d = malloc(sizeof *d);
	if (!d)
		return belt_errf(err, errsz, "draft: out of memory");
	d->ops = ops;
	d->pace = (struct belt_pace){0};
	if (ops->create(belt_model_n_vocab(m), (uint32_t)n_embd, options, &d->ctx, err, errsz)) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

int belt_generate(struct belt_session *s, const int32_t *prompt, size_t n_prompt,
		  const struct belt_generate_params *gp, belt_token_fn fn, void *ud,
		  char *err, size_t errsz)
{
	const struct belt_sampler_ops *so = NULL;
	if (gp && gp->sampling && !belt_sampling_greedy(gp->sampling)) {
		if (belt_sampling_check(gp->sampling, err, errsz))
			return -1;
		if (!(so = belt_sampler_get("gumbel", err, errsz)))
			return -1;
	}
	return belt_session_generate(s, prompt, n_prompt, gp, so, fn, ud, err, errsz);
}
