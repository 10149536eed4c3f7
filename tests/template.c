/* core/template: chat templates against the reference renderings of
 * $BELT_SHARED_DIR/templates (57 real templates x 7 conversations,
 * Python's Jinja set up as transformers does), new conversations
 * (tests/template-cases.json) rendered by both belt and the reference
 * renderer, the language construct by construct, error messages with
 * their line numbers, and the limits a hostile template runs into. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "belt/error.h"
#include "belt/template.h"

/* Renderings that do not match the reference yet, "TEMPLATE|CASE"; each
 * is explained in doc/chat-templates.md. A line listed here that matches
 * fails the test too, so the table cannot go stale. */
static const char *const known_failing[] = {NULL};

static const char *shared(const char *rel)
{
	static char buf[4][4096];
	static int k;
	const char *dir = getenv("BELT_SHARED_DIR");
	char *out = buf[k++ % 4];
	snprintf(out, sizeof buf[0], "%s/templates/%s", dir && *dir ? dir : "../shared", rel);
	return out;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (cap - n < 2)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* The 2025-01-15 10:30:00 clock of the reference renderer. */
static const struct tm fixed_clock = {.tm_year = 125, .tm_mon = 0, .tm_mday = 15, .tm_hour = 10,
				      .tm_min = 30, .tm_wday = 3, .tm_yday = 14};

/* Render text with vars; the output (malloc'd) or NULL with err. */
static char *render_vars(const char *text, json_t *vars, char *err, size_t errsz)
{
	struct belt_template *t;
	if (belt_template_compile(text, strlen(text), &t, err, errsz))
		return NULL;
	struct belt_template_options o;
	belt_template_options_default(&o);
	o.now = &fixed_clock;
	char *out = NULL;
	size_t len;
	if (belt_template_render(t, vars, &o, &out, &len, err, errsz))
		out = NULL;
	else
		ck_assert_uint_eq(len, strlen(out));
	belt_template_free(t);
	return out;
}

/* The variables render.py passes for a case of cases.json. */
static json_t *case_vars(json_t *c)
{
	json_t *v = json_pack("{s:O, s:O, s:s, s:s}", "messages", json_object_get(c, "messages"),
			      "add_generation_prompt", json_object_get(c, "add_generation_prompt"),
			      "bos_token", "<s>", "eos_token", "</s>");
	if (json_object_get(c, "tools"))
		json_object_set(v, "tools", json_object_get(c, "tools"));
	return v;
}

static json_t *find_case(json_t *cases, const char *name)
{
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	return NULL;
}

static bool listed_failing(const char *tmpl, const char *cname)
{
	char key[512];
	snprintf(key, sizeof key, "%s|%s", tmpl, cname);
	for (size_t i = 0; known_failing[i]; i++)
		if (!strcmp(known_failing[i], key))
			return true;
	return false;
}

/* Compare every line of a JSON-lines file of reference renderings with
 * belt's; returns the number of lines that differ (each printed). */
static int compare_lines(const char *jsonl, json_t *cases, int *total)
{
	int bad = 0;
	*total = 0;
	char *all = read_all(jsonl, NULL);
	for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
		json_error_t je;
		json_t *ref = json_loads(line, 0, &je);
		ck_assert_msg(ref != NULL, "%s: %s", jsonl, je.text);
		const char *tmpl = json_string_value(json_object_get(ref, "template"));
		const char *cname = json_string_value(json_object_get(ref, "case"));
		bool ok = json_is_true(json_object_get(ref, "ok"));
		json_t *c = find_case(cases, cname);
		ck_assert_msg(c != NULL, "no case %s", cname);
		char path[600];
		snprintf(path, sizeof path, "jinja/%s", tmpl);
		char *text = read_all(shared(path), NULL);
		json_t *vars = case_vars(c);
		char err[BELT_ERR_SIZE] = "";
		char *out = render_vars(text, vars, err, sizeof err);
		const char *want = json_string_value(json_object_get(ref, ok ? "text" : "error"));
		bool same = ok ? out && !strcmp(out, want) : !out;
		bool listed = listed_failing(tmpl, cname);
		if (same == listed) {
			bad++;
			if (listed) {
				printf("MATCHES BUT LISTED AS FAILING %s|%s\n", tmpl, cname);
			} else if (!ok) {
				printf("MISMATCH %s|%s: the reference fails (%s), belt renders\n", tmpl,
				       cname, want);
			} else if (!out) {
				printf("MISMATCH %s|%s: belt fails: %s\n", tmpl, cname, err);
			} else {
				size_t k = 0;
				while (out[k] && out[k] == want[k])
					k++;
				printf("MISMATCH %s|%s: differs at byte %zu:\n  belt: %.80s\n  ref:  %.80s\n",
				       tmpl, cname, k, out + (k > 20 ? k - 20 : 0),
				       want + (k > 20 ? k - 20 : 0));
			}
		}
		(*total)++;
		free(out);
		free(text);
		json_decref(vars);
		json_decref(ref);
	}
	free(all);
	return bad;
}

START_TEST(test_reference)
{
	json_error_t je;
	json_t *cases = json_load_file(shared("cases.json"), 0, &je);
	ck_assert_msg(cases != NULL, "cases.json: %s", je.text);
	int total, bad = compare_lines(shared("expected.jsonl"), cases, &total);
	printf("templates: %d of %d reference renderings match\n", total - bad, total);
	ck_assert_int_eq(total, 399);
	ck_assert_msg(bad == 0, "%d of %d renderings differ from the reference", bad, total);
	json_decref(cases);
}
END_TEST

/* The language construct by construct: template, variables (JSON),
 * output. Each output is what the reference renderer gives. */
static const struct {
	const char *text, *vars, *want;
} units[] = {
	{"{{ 'a' ~ 1 ~ none ~ true }}|{{ 1 + 2 * 3 - 4 / 2 }}|{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }}",
	 "{}",
	 "a1NoneTrue|5.0|3 -4 1 2 1024"},
	{"{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1.5e-5 }} {{ 3 / 2 }} {{ 10 / 5 }} {{ 2 ** -1 }}",
	 "{}",
	 "1.0 0.30000000000000004 1e+16 1.5e-05 1.5 2.0 0.5"},
	{"{{ true }} {{ True }} {{ none }} {{ None }} {{ [1, 'a', none, true] }} {{ {'k': 'v', 'n': 1} }} {{ (1,) }} {{ (1, 2) }}",
	 "{}",
	 "True True None None [1, 'a', None, True] {'k': 'v', 'n': 1} (1,) (1, 2)"},
	{"{{ \"it's\" }}|{{ ['it\\'s', \"q\\\"\"] }}|{{ 'tab\\tnl\\nuni\\u00e9\\x41' }}",
	 "{}",
	 "it's|[\"it's\", 'q\"']|tab\tnl\nuniéA"},
	{"{% if x %}yes{% elif y %}y{% else %}no{% endif %}|{% if not x and y or z %}A{% endif %}",
	 "{\"x\": \"\", \"y\": [1], \"z\": 0}",
	 "y|A"},
	{"{% for m in items %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.length }}/{{ loop.first }}/{{ loop.last }}/{{ loop.revindex }} {% endfor %}",
	 "{\"items\": [\"a\", \"b\", \"c\"]}",
	 "1/0/3/True/False/3 2/1/3/False/False/2 3/2/3/False/True/1 "},
	{"{% for m in items %}{% if loop.previtem is defined %}<{{ loop.previtem }}{% endif %}{{ m }}{% if loop.nextitem is defined %}>{{ loop.nextitem }}{% endif %};{% endfor %}",
	 "{\"items\": [1, 2, 3]}",
	 "1>2;<12>3;<23;"},
	{"{% for x in items if x > 1 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}",
	 "{\"items\": [1, 2, 3]}",
	 "2:1/2 3:2/2 |empty"},
	{"{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}",
	 "{\"d\": {\"b\": 1, \"a\": 2}}",
	 "b=1;a=2;ba"},
	{"{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x > 4 %}{% break %}{% endif %}{{ x }}{% endfor %}",
	 "{}",
	 "0134"},
	{"{% set ns = namespace(n=0, s='') %}{% for x in range(3) %}{% set ns.n = ns.n + x %}{% set ns.s = ns.s ~ x %}{% endfor %}{{ ns.n }} {{ ns.s }}",
	 "{}",
	 "3 012"},
	{"{% set y = 1 %}{% for x in range(2) %}{% set y = x + 10 %}{{ y }}{% endfor %}{{ y }}",
	 "{}",
	 "10111"},
	{"{% set a, b = [1, 2] %}{{ a }}{{ b }}{% set t %}block {{ a }}{% endset %}[{{ t }}]{% set u | upper %}up{% endset %}{{ u }}",
	 "{}",
	 "12[block 1]UP"},
	{"{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', greeting='Hi') }} {{ greet(name='Cy', greeting='Yo') }}",
	 "{}",
	 "Hello, Ann! Hi, Bob! Yo, Cy!"},
	{"{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(4) }}",
	 "{}",
	 "4321"},
	{"{{ '  x  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ 'Hello' | upper }}|{{ 'Hello' | lower }}|{{ 'hello world-foo' | title }}|{{ 'hELLO' | capitalize }}|{{ 'aaa' | replace('a', 'b', 2) }}",
	 "{}",
	 "x|hi|HELLO|hello|Hello World-Foo|Hello|bba"},
	{"{{ [3, 1, 2] | sort | join(',') }}|{{ ['b', 'A', 'a'] | sort | join }}|{{ [3, 1] | sort(reverse=true) | list }}|{{ d | dictsort }}|{{ users | sort(attribute='age') | map(attribute='name') | join(' ') }}",
	 "{\"d\": {\"b\": 1, \"a\": 2}, \"users\": [{\"name\": \"x\", \"age\": 3}, {\"name\": \"y\", \"age\": 1}]}",
	 "1,2,3|Aab|[3, 1]|[('a', 2), ('b', 1)]|y x"},
	{"{{ [1, 2, 3] | length }} {{ 'héllo' | length }} {{ d | length }} {{ [1,2] | first }} {{ [1,2] | last }} {{ 'abc' | list }} {{ 'abc' | first }}",
	 "{\"d\": {\"a\": 1}}",
	 "3 5 1 1 2 ['a', 'b', 'c'] a"},
	{"{{ x | default('dflt') }}|{{ '' | default('e', true) }}|{{ none | default('n') }}|{{ 0 | default(5, true) }}",
	 "{}",
	 "dflt|e|None|5"},
	{"{{ '42' | int + 1 }} {{ '3.7' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '2.5' | float }} {{ 2.5 | round }} {{ 3.14159 | round(2) }} {{ 7 | string ~ 'x' }}",
	 "{}",
	 "43 3 7 3 2.5 2.0 3.14 7x"},
	{"{{ items | selectattr('role', 'equalto', 'user') | map(attribute='c') | join(',') }}|{{ items | rejectattr('role', 'equalto', 'user') | list | length }}|{{ [1, 2, 3, 4] | select('odd') | list }}|{{ [1, 2, 3] | reject('equalto', 2) | list }}|{{ ['a', 'A', 'b'] | unique | list }}|{{ items | selectattr('c') | list | length }}",
	 "{\"items\": [{\"role\": \"user\", \"c\": \"u1\"}, {\"role\": \"bot\", \"c\": \"\"}, {\"role\": \"user\", \"c\": \"u2\"}]}",
	 "u1,u2|1|[1, 3]|[1, 3]|['a', 'b']|2"},
	{"{{ ['a', 'b'] | map('upper') | join }}|{{ 'one two  three' | wordcount }}|{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, first=true) }}|{{ 'x' | safe }}",
	 "{}",
	 "AB|3|a\n  b\n\n  c|  a\n  b|x"},
	{"{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ 'é\"\\n' | tojson }}|{{ 'é😀' | tojson(ensure_ascii=true) }}|{{ [] | tojson(indent=2) }}|{{ {1: 2.0, 'f': 1.5e300} | tojson }}",
	 "{\"d\": {\"a\": [1, 2, {\"b\": null}], \"c\": true, \"e\": \"x\"}}",
	 "{\"a\": [1, 2, {\"b\": null}], \"c\": true, \"e\": \"x\"}|{\n  \"a\": [\n    1,\n    2,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": true,\n  \"e\": \"x\"\n}|\"é\\\"\\n\"|\"\\u00e9\\ud83d\\ude00\"|[]|{\"1\": 2.0, \"f\": 1.5e+300}"},
	{"{{ ' a b '.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'xxaxx'.rstrip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}",
	 "{}",
	 "a b|axx|xxa|['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a,b', 'c']"},
	{"{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} {{ 'hello'.replace('l', 'L') }} {{ 'hello'.upper() }} {{ 'hello world'.title() }} {{ 'hello'.find('l') }} {{ 'hello'.count('l') }} {{ 'héllo'.find('l') }}",
	 "{}",
	 "True True heLLo HELLO Hello World 2 2 2"},
	{"{{ d.get('a') }} {{ d.get('z', 'dz') }} {{ d.get('z') }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }} {{ d.a }} {{ d['a'] }}",
	 "{\"d\": {\"a\": 1, \"b\": 2}}",
	 "1 dz None ['a', 'b'] [1, 2] [('a', 1), ('b', 2)] 1 1"},
	{"{{ x is defined }} {{ y is undefined }} {{ none is none }} {{ 'a' is string }} {{ d is mapping }} {{ [] is iterable }} {{ 'a' is sequence }} {{ 1 is number }} {{ 1.5 is integer }} {{ true is boolean }} {{ true is true }} {{ 0 is false }} {{ 2 is in [1, 2] }} {{ 3 is not in [1] }} {{ x is not none }}",
	 "{\"x\": 1, \"d\": {}}",
	 "True True True True True True True True False True True False True True True"},
	{"{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in d }} {{ 'z' not in d }} {{ 1 < 2 < 3 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] == [1, 2] }} {{ none == none }}",
	 "{\"d\": {\"k\": 1}}",
	 "True True True True True True True True True"},
	{"{{ 'yes' if x else 'no' }}|{{ 'yes' if not x }}|{{ s[1:] }}|{{ s[::-1] }}|{{ s[-2] }}|{{ l[1:3] }}|{{ l[-1] }}|{{ l[::2] }}|{{ l[5] is defined }}|{{ s[:-1] }}",
	 "{\"x\": 0, \"s\": \"h\\u00e9llo\", \"l\": [0, 1, 2, 3]}",
	 "no|yes|éllo|olléh|l|[1, 2]|3|[0, 2]|False|héll"},
	{"{{ message.role }}/{{ message['content'] }}/{{ message.missing is defined }}/{{ message.items is defined }}",
	 "{\"message\": {\"role\": \"user\", \"content\": \"hi\"}}",
	 "user/hi/False/True"},
	{"{{ strftime_now('%Y-%m-%d %H:%M %b %d') }}|{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}|{{ dict(a=1, b='x') }}",
	 "{}",
	 "2025-01-15 10:30 Jan 15|[0, 1, 2] [1, 3, 5] [3, 2, 1]|{'a': 1, 'b': 'x'}"},
	{"a  \n  {% if true %}\n  b\n  {% endif %}\n  c {# comment #}\nd\n  {#- x -#}  e {{- ' f ' -}} g\n{%+ if true %}h{% endif +%}\ni",
	 "{}",
	 "a  \n  b\n  c de f g\nh\ni"},
	{"{% generation %}gen {{ 1 }}{% endgeneration %}|{% filter upper %}up {{ 'x' }}{% endfilter %}",
	 "{}",
	 "gen 1|UP X"},
	{"{{ x }}|{{ x | string }}|{{ x ~ 'a' }}|{{ x | length }}|{{ x | list }}|{% for i in x %}n{% endfor %}|{{ x is defined }}",
	 "{}",
	 "||a|0|[]||False"},
	{"{{ '%' }}{{ 'a' * 3 }}{{ [0] * 2 }}{{ [1] + [2] }}{{ 1 + true }}{{ -x }}{{ +x }}{{ not x }}",
	 "{\"x\": 3}",
	 "%aaa[0, 0][1, 2]2-33False"},
	{"{{ [0] * 2 }}{{ (1,) * 2 }}{{ 'ab' * 0 }}", "{}", "[0, 0](1, 1)"},
	/* strings that share a buffer (tv_concat) keep their own values */
	{"{% set a = 'x' ~ 'y' %}{% set b = a ~ 'z' %}{% set c = a + 'w' %}{% set k = 'ge' ~ 't' %}"
	 "{% set k2 = k ~ 'x' %}{% set m = 'up' ~ 'per' %}{% set m2 = m ~ 'x' %}{{ a }} {{ b }} {{ c }} "
	 "{{ {'get': 1}[k] }} {{ ['a'] | map(m) | join }} {{ a ~ a }}",
	 "{}", "xy xyz xyw 1 A xyxy"},
};

START_TEST(test_units)
{
	for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
		json_error_t je;
		json_t *vars = json_loads(units[i].vars, 0, &je);
		ck_assert_msg(vars != NULL, "%s", je.text);
		char err[BELT_ERR_SIZE] = "";
		char *out = render_vars(units[i].text, vars, err, sizeof err);
		ck_assert_msg(out != NULL, "%s: %s", units[i].text, err);
		ck_assert_msg(!strcmp(out, units[i].want), "%s:\n  got  '%s'\n  want '%s'", units[i].text,
			      out, units[i].want);
		free(out);
		json_decref(vars);
	}
}
END_TEST

/* What a template gets wrong, and the message: "LINE:COL: what". */
static const struct {
	const char *text, *want;
} errors[] = {
	{"line one\n{{ x + }}", "2:8: expected an expression, got '}}'"},
	{"{% if x %}\nabc", "2:4: unexpected end of the template: expected 'elif'"},
	{"{% for x in y %}\n{% endif %}", "2:4: unexpected 'endif': expected else"},
	{"\n\n  {{ raise_exception('Boom: ' ~ 42) }}", "3:21: Boom: 42"},
	{"{{ foo.bar }}", "1:8: 'foo' is undefined"},
	{"{% set l = [] %}{{ l.append(1) }}", "access to attribute 'append' of 'list' object is unsafe."},
	{"{% set d = {} %}{{ d.update({}) }}", "access to attribute 'update' of 'dict' object is unsafe."},
	{"{{ 'a' + 1 }}", "1:8: can only concatenate str (not \"int\") to str"},
	{"\n{{ x | nosuchfilter }}", "2:8: no filter named 'nosuchfilter'"},
	{"{{ x is nosuchtest }}", "no test named 'nosuchtest'"},
	{"{% if true %}{{ x | nosuch }}{% endif %}", "1:21: no filter named 'nosuch'"},
	{"{{ 1 / 0 }}", "division by zero"},
	{"{{ 1 // 0 }}", "integer division or modulo by zero"},
	{"\n  {% break %}", "2:6: 'break' outside a for loop"},
	{"{% set d = {} %}{% set d.x = 1 %}", "cannot assign attribute on non-namespace object"},
	{"{{ x | tojson }}", "Object of type Undefined is not JSON serializable"},
	{"{{ [1] | map('string') | tojson }}", "Object of type generator is not JSON serializable"},
	{"{{ [1] | select | length }}", "object of type 'generator' has no len()"},
	{"{{ 'abc' }", "1:10: unbalanced closing bracket"},
	{"{{ 'abc'", "1:1: unclosed tag: expected '}}'"},
	{"\n{{ 'abc }}", "2:4: unterminated string"},
	{"{# never closed", "1:1: unclosed comment"},
	{"{% for a, b in [[1, 2, 3]] %}{% endfor %}", "too many values to unpack (expected 2, got 3)"},
	{"{{ none.x.y }}", "'None' has no attribute 'x'"},
	{"{{ 9223372036854775807 + 1 }}", "integer overflow"},
	{"{{ 99999999999999999999 }}", "1:4: integer literal out of range"},
	{"{% include 'x' %}", "1:4: unknown or unsupported tag 'include'"},
	{"{{ 1 < 'a' }}", "'<' not supported between instances of 'int' and 'str'"},
	{"{{ x() }}", "'x' is undefined"},
	{"{{ 'a'.split('') }}", "empty separator"},
	{"{{ range(1, 2, 0) }}", "range() arg 3 must not be zero"},
};

START_TEST(test_errors)
{
	json_t *vars = json_object();
	for (size_t i = 0; i < sizeof errors / sizeof *errors; i++) {
		char err[BELT_ERR_SIZE] = "";
		char *out = render_vars(errors[i].text, vars, err, sizeof err);
		ck_assert_msg(out == NULL, "%s: rendered '%s'", errors[i].text, out);
		ck_assert_msg(strstr(err, errors[i].want), "%s:\n  got  '%s'\n  want '%s'",
			      errors[i].text, err, errors[i].want);
	}
	/* an unknown filter in a branch that does not run is no error, as in Jinja */
	char err[BELT_ERR_SIZE] = "";
	char *out = render_vars("{% if false %}{{ x | nosuch }}{% endif %}ok", vars, err, sizeof err);
	ck_assert_msg(out && !strcmp(out, "ok"), "%s", err);
	free(out);
	/* the variables must be an object */
	struct belt_template *t;
	ck_assert_int_eq(belt_template_compile("x", 1, &t, err, sizeof err), 0);
	json_t *arr = json_array();
	ck_assert_int_eq(belt_template_render(t, arr, NULL, &out, NULL, err, sizeof err), -1);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err, "JSON object"), "%s", err);
	json_decref(arr);
	belt_template_free(t);
	belt_template_free(NULL);
	json_decref(vars);
}
END_TEST

/* Render text under limits; 0 or -1 with err. */
static int render_limited(const char *text, const struct belt_template_limits *lim, char *err,
			  size_t errsz)
{
	struct belt_template *t;
	if (belt_template_compile(text, strlen(text), &t, err, errsz))
		return -1;
	struct belt_template_options o;
	belt_template_options_default(&o);
	o.limits = *lim;
	json_t *vars = json_object();
	char *out = NULL;
	int rc = belt_template_render(t, vars, &o, &out, NULL, err, errsz);
	ck_assert(rc == 0 ? out != NULL : out == NULL);
	free(out);
	json_decref(vars);
	belt_template_free(t);
	return rc;
}

/* A hostile template fails with a message: recursion, output, loops,
 * memory, nesting. */
START_TEST(test_limits)
{
	char err[BELT_ERR_SIZE];
	struct belt_template_limits lim = {.max_output = 1 << 20, .max_memory = 64 << 20,
					   .max_steps = 1000000, .max_depth = 50};
	ck_assert_int_eq(render_limited("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", &lim, err,
					sizeof err), -1);
	ck_assert_msg(strstr(err, "macro calls nested deeper than 50"), "%s", err);
	ck_assert_int_eq(render_limited("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", &lim,
					err, sizeof err), -1);
	ck_assert_msg(strstr(err, "exceeds 1048576 bytes"), "%s", err);
	ck_assert_int_eq(render_limited("{% for i in range(100000) %}{% for j in range(100000) %}"
					"{% endfor %}{% endfor %}", &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "more than 1000000 steps"), "%s", err);
	ck_assert_int_eq(render_limited("{% set ns = namespace(s='x') %}{% for i in range(40) %}"
					"{% set ns.s = ns.s ~ ns.s %}{% endfor %}", &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "more than 64 MiB"), "%s", err);
	ck_assert_int_eq(render_limited("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", &lim,
					err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nested deeper than 200"), "%s", err);
	ck_assert_int_eq(render_limited("{{ range(9223372036854775807) }}", &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "range of more than"), "%s", err);
	/* deep nesting in the source: parentheses, blocks, chains */
	size_t n = 100000;
	char *deep = malloc(3 * n + 16);
	strcpy(deep, "{{ ");
	memset(deep + 3, '(', n);
	deep[3 + n] = '1';
	memset(deep + 4 + n, ')', n);
	strcpy(deep + 4 + 2 * n, " }}");
	ck_assert_int_eq(render_limited(deep, &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nested deeper than 200"), "%s", err);
	strcpy(deep, "{{ 1");
	for (size_t i = 0; i < n; i++)
		memcpy(deep + 4 + 2 * i, "+1", 2);
	strcpy(deep + 4 + 2 * n, " }}");
	ck_assert_int_eq(render_limited(deep, &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nested deeper than"), "%s", err);
	deep[0] = 0;
	for (size_t i = 0; i < 1000; i++)
		strcat(deep, "{% if 1 %}");
	ck_assert_int_eq(render_limited(deep, &lim, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "nested deeper than 200"), "%s", err);
	free(deep);
	/* a template that builds its prompt piece by piece in a namespace
	 * (Reka-Edge) renders 4,000 messages (1.9 MB) in 64 MiB */
	json_t *msgs = json_array();
	for (int i = 0; i < 4000; i++) {
		char text[600];
		snprintf(text, sizeof text, "message %d: %0*d", i, 440, i);
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", i % 2 ? "assistant" : "user",
						      "content", text));
	}
	json_t *vars = json_pack("{s:o, s:b, s:s, s:s}", "messages", msgs, "add_generation_prompt", 1,
				 "bos_token", "<s>", "eos_token", "</s>");
	char *text = read_all(shared("jinja/Reka-Edge.jinja"), NULL), *out;
	struct belt_template *t;
	ck_assert_int_eq(belt_template_compile(text, strlen(text), &t, err, sizeof err), 0);
	struct belt_template_options o;
	belt_template_options_default(&o);
	o.limits.max_memory = 64 << 20;
	size_t len;
	ck_assert_msg(belt_template_render(t, vars, &o, &out, &len, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_gt(len, 1800000);
	free(out);
	belt_template_free(t);
	free(text);
	json_decref(vars);
}
END_TEST

/* New conversations (tests/template-cases.json) through every template,
 * rendered here and by the reference renderer. */
START_TEST(test_new_conversations)
{
	const char *cases_path = BELT_TEST_SRCDIR "/template-cases.json";
	char tmp[] = "/tmp/belt-template-XXXXXX";
	int fd = mkstemp(tmp);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "python3 '%s' --all '%s' '%s' > '%s'", shared("render.py"),
		 shared("jinja"), cases_path, tmp);
	int rc = system(cmd);
	ck_assert_msg(rc == 0, "the reference renderer failed (%s): python3 with jinja2 "
		      "(Debian: python3-jinja2) is needed", cmd);
	json_error_t je;
	json_t *cases = json_load_file(cases_path, 0, &je);
	ck_assert_msg(cases != NULL, "%s: %s", cases_path, je.text);
	int total, bad = compare_lines(tmp, cases, &total);
	unlink(tmp);
	printf("templates: %d of %d renderings of new conversations match\n", total - bad, total);
	ck_assert_int_eq(total, 57 * (int)json_array_size(cases));
	ck_assert_msg(bad == 0, "%d of %d renderings differ from the reference", bad, total);
	json_decref(cases);
}
END_TEST

/* One rendering through render.py's TEMPLATE CASES NAME form, the way a
 * person checks one by hand. */
START_TEST(test_render_py_single)
{
	const char *cases_path = BELT_TEST_SRCDIR "/template-cases.json";
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "python3 '%s' '%s' '%s' long-chat", shared("render.py"),
		 shared("jinja/Qwen-Qwen3-0.6B.jinja"), cases_path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char ref[65536];
	size_t n = fread(ref, 1, sizeof ref - 1, p);
	ref[n] = 0;
	ck_assert_int_eq(pclose(p), 0);
	json_error_t je;
	json_t *cases = json_load_file(cases_path, 0, &je);
	ck_assert_ptr_nonnull(cases);
	json_t *vars = case_vars(find_case(cases, "long-chat"));
	char *text = read_all(shared("jinja/Qwen-Qwen3-0.6B.jinja"), NULL), err[BELT_ERR_SIZE];
	char *out = render_vars(text, vars, err, sizeof err);
	ck_assert_msg(out != NULL, "%s", err);
	ck_assert_str_eq(out, ref);
	free(out);
	free(text);
	json_decref(vars);
	json_decref(cases);
}
END_TEST

/* Run "$BELT_BIN template ARGS" with stdout and stderr in out; returns
 * the exit status. */
static int belt_cli(const char *args, char *out, size_t outsz)
{
	const char *bin = getenv("BELT_BIN");
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "'%s' template %s 2>&1", bin && *bin ? bin : "./belt", args);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, outsz - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* belt template: a file's template and a GGUF's, and its one-line errors. */
START_TEST(test_cli)
{
	char dir[] = "/tmp/belt-template-cli-XXXXXX", path[256], args[8192], out[65536];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* the system-user case of cases.json, bos and eos as render.py sets them */
	json_error_t je;
	json_t *cases = json_load_file(shared("cases.json"), 0, &je);
	ck_assert_ptr_nonnull(cases);
	json_t *vars = case_vars(find_case(cases, "system-user"));
	json_object_del(vars, "add_generation_prompt");
	snprintf(path, sizeof path, "%s/vars.json", dir);
	ck_assert_int_eq(json_dump_file(vars, path, 0), 0);
	snprintf(args, sizeof args, "--chat-template '%s' --messages '%s'",
		 shared("jinja/Qwen-Qwen2.5-7B-Instruct.jinja"), path);
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 0);
	char *all = read_all(shared("expected.jsonl"), NULL), *line;
	const char *key = "{\"template\": \"Qwen-Qwen2.5-7B-Instruct.jinja\", \"case\": \"system-user\"";
	ck_assert_ptr_nonnull(line = strstr(all, key));
	*strchr(line, '\n') = 0;
	json_t *ref = json_loads(line, 0, &je);
	ck_assert_ptr_nonnull(ref);
	ck_assert_str_eq(out, json_string_value(json_object_get(ref, "text")));
	/* --no-generation-prompt, and a bare array of messages */
	snprintf(path, sizeof path, "%s/messages.json", dir);
	ck_assert_int_eq(json_dump_file(json_object_get(vars, "messages"), path, 0), 0);
	snprintf(args, sizeof args, "--chat-template '%s' --messages '%s' --no-generation-prompt",
		 shared("jinja/Qwen-Qwen2.5-7B-Instruct.jinja"), path);
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 0);
	ck_assert_msg(!strstr(out, "<|im_start|>assistant"), "%s", out);
	/* a GGUF's template, with its BOS text */
	const char *dirs = getenv("BELT_SHARED_DIR");
	snprintf(args, sizeof args, "-m '%s/vocab/ggml-vocab-phi-3.gguf' --messages '%s'",
		 dirs && *dirs ? dirs : "../shared", path);
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 0);
	ck_assert_str_eq(out, "<s><|user|>\nWhat is the capital of France?<|end|>\n<|assistant|>\n");
	/* errors: one line naming the file and the place */
	snprintf(args, sizeof args, "--chat-template '%s' --messages '%s'",
		 shared("jinja/google-gemma-2-2b-it.jinja"), path);
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 1);
	ck_assert_msg(strstr(out, "google-gemma-2-2b-it.jinja:1:") && strstr(out, "System role not supported\n") &&
			      strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
	snprintf(path, sizeof path, "%s/bad.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"messages\": 3}", f);
	fclose(f);
	snprintf(args, sizeof args, "--chat-template /dev/null --messages '%s'", path);
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 1);
	ck_assert_msg(strstr(out, "bad.json: expected a JSON array of messages"), "%s", out);
	snprintf(args, sizeof args, "-m /dev/null --chat-template x --messages y");
	ck_assert_int_eq(belt_cli(args, out, sizeof out), 2);
	unlink(path);
	snprintf(path, sizeof path, "%s/vars.json", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/messages.json", dir);
	unlink(path);
	rmdir(dir);
	json_decref(ref);
	free(all);
	json_decref(vars);
	json_decref(cases);
}
END_TEST

static Suite *template_suite(void)
{
	Suite *s = suite_create("template");
	TCase *tc = tcase_create("reference");
	tcase_add_test(tc, test_reference);
	tcase_add_test(tc, test_new_conversations);
	tcase_add_test(tc, test_render_py_single);
	tcase_add_test(tc, test_cli);
	suite_add_tcase(s, tc);
	tc = tcase_create("language");
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(template_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
