/* Reads conf/belt.yaml (libyaml's document API). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "arch/arch.h"
#include "arch/config.h"
#include "belt/error.h"

static int kernels(const char *path, yaml_document_t *doc, yaml_node_t *map, char *out,
		   size_t outsz, char *err, size_t errsz)
{
	if (map->type != YAML_MAPPING_NODE)
		return belt_errf(err, errsz, "%s:%zu:%zu: kernels: expected a mapping of op: variant",
				 path, map->start_mark.line + 1, map->start_mark.column + 1);
	size_t len = 0;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE ||
		    !k->data.scalar.length || !v->data.scalar.length)
			return belt_errf(err, errsz, "%s:%zu:%zu: kernels: expected op: variant", path,
					 k->start_mark.line + 1, k->start_mark.column + 1);
		int n = snprintf(out + len, outsz - len, "%s%s=%s", len ? "," : "",
				 (const char *)k->data.scalar.value, (const char *)v->data.scalar.value);
		if (n < 0 || (size_t)n >= outsz - len)
			return belt_errf(err, errsz, "%s: kernels: too many choices", path);
		len += (size_t)n;
	}
	return 0;
}

/* backends: {name: {key: value, ...}, ...}: keep the settings of `want`. */
static int backends(const char *path, yaml_document_t *doc, yaml_node_t *map, const char *want,
		    struct belt_config *c, char *err, size_t errsz)
{
	if (map->type != YAML_MAPPING_NODE)
		return belt_errf(err, errsz, "%s:%zu:%zu: backends: expected a mapping of backend: settings",
				 path, map->start_mark.line + 1, map->start_mark.column + 1);
	size_t len = 0;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k->type != YAML_SCALAR_NODE || v->type != YAML_MAPPING_NODE)
			return belt_errf(err, errsz, "%s:%zu:%zu: backends: expected name: {setting: value}",
					 path, k->start_mark.line + 1, k->start_mark.column + 1);
		if (strcmp((const char *)k->data.scalar.value, want ? want : ""))
			continue;
		for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
			yaml_node_t *sk = yaml_document_get_node(doc, q->key);
			yaml_node_t *sv = yaml_document_get_node(doc, q->value);
			if (sk->type != YAML_SCALAR_NODE || sv->type != YAML_SCALAR_NODE ||
			    !sk->data.scalar.length)
				return belt_errf(err, errsz, "%s:%zu:%zu: backends.%s: expected setting: value",
						 path, sk->start_mark.line + 1, sk->start_mark.column + 1, want);
			size_t kl = sk->data.scalar.length, vl = sv->data.scalar.length;
			if (c->n_setting == BELT_CONFIG_SETTINGS || len + kl + vl + 2 > sizeof c->text)
				return belt_errf(err, errsz, "%s:%zu:%zu: backends.%s: too many settings",
						 path, sk->start_mark.line + 1, sk->start_mark.column + 1, want);
			char *key = c->text + len;
			memcpy(key, sk->data.scalar.value, kl + 1);
			char *val = key + kl + 1;
			memcpy(val, sv->data.scalar.value, vl + 1);
			len += kl + vl + 2;
			c->setting[c->n_setting++] = (struct belt_setting){key, val};
		}
	}
	return 0;
}

int belt_config_load(const char *dirs, const char *backend, struct belt_config *c, char *err,
		     size_t errsz)
{
	char path[4096];
	memset(c, 0, sizeof *c);
	char *out = c->kernels;
	size_t outsz = sizeof c->kernels;
	if (belt_arch_find("belt", dirs, path, sizeof path))
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return belt_errf(err, errsz, "%s: %s", path, strerror(errno));
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = belt_errf(err, errsz, "%s:%zu:%zu: YAML syntax error: %s", path,
			       parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			       parser.problem ? parser.problem : "unknown");
		yaml_parser_delete(&parser);
		fclose(f);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE)
		rc = belt_errf(err, errsz, "%s:1:1: expected a mapping", path);
	bool seen_kernels = false, seen_backends = false;
	for (yaml_node_pair_t *p = root && !rc ? root->data.mapping.pairs.start : NULL;
	     p && p < root->data.mapping.pairs.top && !rc; p++) {
		yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		const char *name = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
		bool *seen = !strcmp(name, "kernels") ? &seen_kernels
			   : !strcmp(name, "backends") ? &seen_backends : NULL;
		/* libyaml keeps a key given twice; a second backends: would
		 * overwrite the text the first one's settings point into */
		if (seen && *seen) {
			rc = belt_errf(err, errsz, "%s:%zu:%zu: '%s' given twice", path,
				       k->start_mark.line + 1, k->start_mark.column + 1, name);
			break;
		}
		if (seen)
			*seen = true;
		if (!strcmp(name, "kernels"))
			rc = kernels(path, &doc, yaml_document_get_node(&doc, p->value), out, outsz, err, errsz);
		else if (!strcmp(name, "backends"))
			rc = backends(path, &doc, yaml_document_get_node(&doc, p->value), backend, c, err,
				      errsz);
		else
			rc = belt_errf(err, errsz, "%s:%zu:%zu: unknown setting '%s' (expected kernels or backends)",
				       path, k->start_mark.line + 1, k->start_mark.column + 1, name);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}
