/* Pre-tokenizers of byte-level BPE vocabularies: the regex lists that
 * llama.cpp (llm_tokenizer_bpe) uses for each tokenizer.ggml.pre, run by
 * PCRE2 (UTF mode, compiled once at load, JIT when available).
 *
 * As in llama.cpp, each regex of a list splits every piece left by the
 * previous ones: matches and the text between them both become pieces.
 * llama.cpp runs most lists through std::regex on a copy of the text where
 * every non-ASCII whitespace character is U+000B (and, for patterns with
 * \p{..}, every other non-ASCII character a stand-in byte for its category);
 * its hand-written matchers for the GPT-2 and Llama 3 patterns behave the
 * same way. To give the same pieces, each pattern is rewritten before
 * compiling:
 * - \s is White_Space exactly (llama.cpp's set; PCRE's \s differs on
 *   U+180E), \S its complement;
 * - \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm}, \p{Lo} are \p{L} (llama.cpp collapses
 *   them all to "letter");
 * - \p{S} excludes '~' (missing from llama.cpp's ASCII symbol list);
 * - no PCRE2_UCP, so \d, \w and \b are ASCII as in std::regex; $ is the
 *   end of the piece only (PCRE2_DOLLAR_ENDONLY), as in ECMAScript.
 * Classes of non-ASCII literals are written without the whitespace they
 * would span (llama.cpp never sees it there). Bytes that are not valid
 * UTF-8 match nothing (PCRE2_MATCH_INVALID_UTF), so they end up in the
 * pieces between matches.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "belt/error.h"
#include "tokenizer/tokenizer_impl.h"

/* PCRE2's JIT code reads past the subject in ways memcheck reports as
 * uninitialised (a known false positive); under valgrind, interpret. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND() 0
#endif

/* ---- the regex lists (facts of the tokenizer definitions) ---- */

#define R_CONTR "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define R_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define R_LLAMA3 R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define R_QWEN2 R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* CJK ideographs, U+0800-U+4E00 less its whitespace, Hangul */
#define R_DS_CJK "[\\x{4e00}-\\x{9fa5}\\x{800}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{4e00}\\x{ac00}-\\x{d7ff}]+"
#define R_HAN_KANA "[\\x{4e00}-\\x{9fa5}\\x{3040}-\\x{309f}\\x{30a0}-\\x{30ff}]+"
#define R_ASCII_PUNCT "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]"
#define R_CASED_WORD(q) \
	"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" R_CONTR "?" \
	"|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" R_CONTR "?" \
	"|\\p{N}" q "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define R_CASED_LOOKAHEAD(q, c) \
	"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" c \
	"|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" c \
	"|\\p{N}" q "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

static const char *const re_default[] = {
	"[\\p{P}\\$\\+<=>\\^~\\|]+", R_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL
};
static const char *const re_llama3[] = { R_LLAMA3, NULL };
static const char *const re_jais2[] = {
	R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
	"|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)"
	"|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",
	NULL
};
static const char *const re_deepseek_llm[] = {
	"[\r\n]",
	/* cased letters */
	"\\s?[A-Za-z\\x{b5}\\x{c0}-\\x{d6}\\x{d8}-\\x{f6}\\x{f8}-\\x{1ba}\\x{1bc}-\\x{1bf}"
	"\\x{1c4}-\\x{293}\\x{295}-\\x{2af}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37b}-\\x{37d}"
	"\\x{37f}\\x{386}\\x{388}-\\x{38a}\\x{38c}\\x{38e}-\\x{3a1}\\x{3a3}-\\x{3f5}"
	"\\x{3f7}-\\x{481}\\x{48a}-\\x{52f}\\x{531}-\\x{556}\\x{10a0}-\\x{10c5}"
	"\\x{13a0}-\\x{13f5}\\x{13f8}-\\x{13fd}\\x{1c90}-\\x{1cba}\\x{1cbd}-\\x{1cbf}"
	"\\x{1d00}-\\x{1d2b}\\x{1d6b}-\\x{1d77}\\x{1d79}-\\x{1d9a}\\x{1e00}-\\x{1f15}"
	"\\x{1f18}-\\x{1f1d}\\x{1f20}-\\x{1f45}\\x{1f48}-\\x{1f4d}\\x{1f50}-\\x{1f57}"
	"\\x{1f59}\\x{1f5b}\\x{1f5d}\\x{1f5f}-\\x{1f7d}\\x{1f80}-\\x{1fb4}\\x{1fb6}-\\x{1fbc}"
	"\\x{1fbe}\\x{1fc2}-\\x{1fc4}\\x{1fc6}-\\x{1fcc}\\x{1fd0}-\\x{1fd3}\\x{1fd6}-\\x{1fdb}"
	"\\x{1fe0}-\\x{1fec}\\x{1ff2}-\\x{1ff4}\\x{1ff6}-\\x{1ffc}\\x{2102}\\x{2107}"
	"\\x{210a}-\\x{2113}\\x{2115}\\x{2119}-\\x{211d}\\x{2124}\\x{2126}\\x{2128}"
	"\\x{212a}-\\x{212d}\\x{212f}-\\x{2134}\\x{2139}\\x{213c}-\\x{213f}\\x{2145}-\\x{2149}"
	"\\x{214e}\\x{2183}\\x{2184}\\x{2c00}-\\x{2c7b}\\x{2c7e}-\\x{2ce4}\\x{2ceb}-\\x{2cee}"
	"\\x{2cf2}\\x{2cf3}\\x{a640}-\\x{a66d}\\x{a680}-\\x{a69b}\\x{a722}-\\x{a76f}"
	"\\x{a771}-\\x{a787}\\x{a78b}-\\x{a78e}\\x{ab70}-\\x{abbf}\\x{fb00}-\\x{fb06}"
	"\\x{fb13}-\\x{fb17}\\x{ff21}-\\x{ff3a}\\x{ff41}-\\x{ff5a}\\x{10400}-\\x{1044f}"
	"\\x{104b0}-\\x{104d3}\\x{104d8}-\\x{104fb}\\x{10c80}-\\x{10cb2}\\x{10cc0}-\\x{10cf2}"
	"\\x{118a0}-\\x{118df}\\x{1e900}-\\x{1e943}]+",
	/* ASCII and full-width punctuation, quotes, U+3001-U+3002 */
	"\\s?[!-/:-~\\x{ff01}-\\x{ff0f}\\x{ff1a}-\\x{ff5e}\\x{2018}-\\x{201f}\\x{3001}-\\x{3002}]+",
	"\\s+$",
	R_DS_CJK,
	"\\p{N}+",
	NULL
};
static const char *const re_deepseek_coder[] = {
	"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", R_DS_CJK, "\\p{N}", NULL
};
static const char *const re_deepseek3[] = {
	"\\p{N}{1,3}", R_HAN_KANA,
	R_ASCII_PUNCT "[A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
	NULL
};
static const char *const re_spark2_5[] = {
	"\\p{N}{1,3}", R_HAN_KANA,
	R_ASCII_PUNCT "[A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
	"\\p{N}", NULL
};
static const char *const re_youtu[] = {
	"[\\x{ac00}-\\x{d7a3}\\x{3131}-\\x{318e}]+"
	"|[\\x{ff01}\\x{2026}\\x{201c}\\x{201d}\\x{2018}\\x{2019}\\x{2014}\\x{ff1a}\\x{ff1b}"
	"\\x{ff0c}\\x{3001}-\\x{303f}\\x{fe30}-\\x{fe4f}]+|[\\x{3105}-\\x{312f}]+|" R_HAN_KANA,
	R_CASED_WORD(""), NULL
};
static const char *const re_falcon[] = {
	"[\\p{P}\\$\\+<=>\\^~\\|`]+", R_GPT2, "[0-9][0-9][0-9]", NULL
};
static const char *const re_starcoder[] = { "\\p{N}", R_GPT2, NULL };
static const char *const re_gpt2[] = { R_GPT2, NULL };
static const char *const re_qwen2[] = { R_QWEN2, NULL };
static const char *const re_qwen35[] = {
	R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	NULL
};
#define R_PORO " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{ff0c}\\x{3001}\\x{964}\\x{6d4}\\x{60c})]+"
static const char *const re_poro[] = { R_PORO, NULL };
static const char *const re_viking[] = { R_PORO, "\\p{N}", NULL };
static const char *const re_tekken[] = { R_CASED_LOOKAHEAD("", ""), NULL };
static const char *const re_chameleon[] = {
	"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
	"([\\t\\n]|    |  )", "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", R_GPT2, NULL
};
static const char *const re_gpt4o[] = {
	R_CASED_LOOKAHEAD("{1,3}", R_CONTR "?"), NULL
};
static const char *const re_tiny_aya[] = {
	"\\d{1,3}(?=(?:\\d{3})*\\b)", R_CASED_WORD("{1,3}"), NULL
};
static const char *const re_bailingmoe[] = {
	"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
	NULL
};
static const char *const re_seed_coder[] = {
	R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	NULL
};
static const char *const re_ufakzeka[] = {
	"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	NULL
};
static const char *const re_laguna[] = { "[^\\n]+|[\\n]+", R_QWEN2, NULL };
static const char *const re_exaone_moe[] = {
	R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
	NULL
};
static const char *const re_minicpm5[] = {
	"\\p{N}{1,3}",
	R_CONTR "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
	NULL
};

enum { F_IGNORE_MERGES = 1, F_ADD_BOS = 2, F_ADD_SEP = 4, F_NO_BOS = 8 };

struct pre_def {
	const char *names; /* '|'-separated tokenizer.ggml.pre values */
	const char *const *re;
	unsigned flags;
};

static const struct pre_def pre_defs[] = {
	{ "default", re_default, 0 },
	{ "llama3|llama-v3|llama-bpe|falcon3|falcon-h1|pixtral|midm-2.0|lfm2|jina-v5-nano",
	  re_llama3, F_IGNORE_MERGES | F_ADD_BOS },
	{ "dbrx|smaug-bpe", re_llama3, 0 },
	{ "glm4|chatglm-bpe", re_llama3, F_NO_BOS },
	{ "jais-2", re_jais2, 0 },
	{ "deepseek-llm", re_deepseek_llm, 0 },
	{ "deepseek-coder", re_deepseek_coder, 0 },
	{ "deepseek-v3|hunyuan-dense|joyai-llm|hy_v4", re_deepseek3, 0 },
	{ "spark2_5", re_spark2_5, 0 },
	{ "youtu", re_youtu, F_IGNORE_MERGES },
	{ "falcon", re_falcon, 0 },
	{ "gpt-2|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|"
	  "modern-bert|exaone4|mpt|olmo|jais|trillion|granite-docling",
	  re_gpt2, 0 },
	{ "jina-v1-en|jina-v2-code|roberta-bpe", re_gpt2, F_ADD_SEP },
	{ "starcoder|refact|command-r|smollm|codeshell|exaone|minerva-7b|mellum2",
	  re_starcoder, 0 },
	{ "qwen2|deepseek-r1-qwen|kormo|f2llmv2|megrez|stablelm2|hunyuan|solar-open|grok-2",
	  re_qwen2, 0 },
	{ "qwen35", re_qwen35, 0 },
	{ "poro-chat|bloom|gpt3-finnish", re_poro, 0 },
	{ "viking", re_viking, 0 },
	{ "tekken", re_tekken, F_IGNORE_MERGES | F_ADD_BOS },
	{ "chameleon", re_chameleon, F_ADD_BOS },
	{ "gpt-4o|llama4|kanana2|talkie|minimax-m2", re_gpt4o, 0 },
	{ "tiny_aya|cohere2moe", re_tiny_aya, 0 },
	{ "bailingmoe|bailingmoe2|llada-moe", re_bailingmoe, 0 },
	{ "seed-coder", re_seed_coder, 0 },
	{ "ufakzeka", re_ufakzeka, 0 },
	{ "laguna", re_laguna, 0 },
	{ "exaone-moe", re_exaone_moe, 0 },
	{ "minicpm5", re_minicpm5, F_IGNORE_MERGES },
};

/* ---- rewriting a pattern for PCRE2 (see the top comment) ---- */

#define WS "\\t-\\r \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = 2 * (b->n + n + 1);
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* One \p{..} at re (in or out of a class); returns its length. */
static size_t put_property(struct sbuf *b, const char *re, bool in_class,
			   bool *has_s)
{
	const char *end = strchr(re, '}');
	if (!end)
		return 0;
	size_t n = (size_t)(end - re) + 1;
	const char *name = re + 3;
	size_t nl = (size_t)(end - name);
	if (nl == 2 && name[0] == 'L' && strchr("ultmo", name[1])) {
		puts_(b, "\\p{L}");
	} else if (nl == 1 && name[0] == 'S') {
		*has_s = true;
		puts_(b, in_class ? "\\p{S}" : "(?:(?!~)\\p{S})");
	} else {
		put(b, re, n);
	}
	return n;
}

/* Rewrite re into out; -1 on a construct the rewriter cannot keep exact. */
static int rewrite(const char *re, struct sbuf *out)
{
	size_t cls = 0;
	bool in = false, neg = false, has_s = false;
	for (size_t i = 0; re[i]; i++) {
		char c = re[i];
		if (c == '\\' && re[i + 1]) {
			char d = re[i + 1];
			if (d == 's') {
				puts_(out, in ? WS : "[" WS "]");
			} else if (d == 'S') {
				if (in)
					return -1;
				puts_(out, "[^" WS "]");
			} else if (d == 'p' && re[i + 2] == '{') {
				bool s = false;
				size_t n = put_property(out, re + i, in, &s);
				if (n == 0)
					return -1;
				has_s |= s;
				i += n - 1;
				continue;
			} else {
				put(out, re + i, 2);
			}
			i++;
			continue;
		}
		if (!in && c == '[') {
			cls = out->n;
			in = true;
			has_s = false;
			neg = re[i + 1] == '^';
			put(out, re + i, neg ? 2 : 1);
			i += neg;
			continue;
		}
		if (in && c == ']') {
			put(out, "]", 1);
			in = false;
			if (has_s && !out->oom) {
				/* llama.cpp's [..\p{S}..] leaves '~' out */
				size_t n = out->n - cls;
				char *tail = malloc(n + 1);
				if (!tail)
					return -1;
				memcpy(tail, out->p + cls, n);
				tail[n] = '\0';
				out->n = cls;
				puts_(out, neg ? "(?:~|" : "(?:(?!~)");
				put(out, tail, n);
				puts_(out, ")");
				free(tail);
			}
			continue;
		}
		put(out, &c, 1);
	}
	return in || out->oom ? -1 : 0;
}

/* ---- compiled lists ---- */

struct tok_pretok {
	size_t n;
	pcre2_code *code[8];
};

void tok_pretok_free(struct tok_pretok *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		pcre2_code_free(p->code[i]);
	free(p);
}

static bool name_in(const char *names, const char *s, size_t n)
{
	for (const char *p = names;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && memcmp(p, s, n) == 0)
			return true;
		if (!bar)
			return false;
		p = bar + 1;
	}
}

static void printable(char *buf, size_t bufsz, const char *s, size_t n)
{
	if (n > bufsz - 1)
		n = bufsz - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = s[i] < 0x20 || s[i] >= 0x7f ? '?' : s[i];
	buf[n] = '\0';
}

static int compile(const char *re, pcre2_code **out, char *err, size_t errsz)
{
	struct sbuf b = { 0 };
	if (rewrite(re, &b)) {
		free(b.p);
		return belt_errf(err, errsz, "tokenizer: cannot rewrite pre-tokenizer regex '%.60s'", re);
	}
	int code;
	PCRE2_SIZE at;
	*out = pcre2_compile((PCRE2_SPTR)b.p, b.n,
			     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_INVALID_UTF,
			     &code, &at, NULL);
	free(b.p);
	if (!*out) {
		PCRE2_UCHAR msg[120];
		pcre2_get_error_message(code, msg, sizeof msg);
		return belt_errf(err, errsz, "tokenizer: pre-tokenizer regex '%.60s': %s at %zu",
				 re, (const char *)msg, (size_t)at);
	}
	if (!UNDER_VALGRIND())
		pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE); /* else interpreted */
	return 0;
}

int tok_pretok_new(const char *name, size_t n, struct tok_pretok **out,
		   struct tok_pre_info *info, char *err, size_t errsz)
{
	*out = NULL;
	const struct pre_def *d = n == 0 ? &pre_defs[0] : NULL;
	for (size_t i = 0; !d && i < sizeof pre_defs / sizeof pre_defs[0]; i++)
		if (name_in(pre_defs[i].names, name, n))
			d = &pre_defs[i];
	if (!d) {
		char s[65];
		printable(s, sizeof s, name, n);
		return belt_errf(err, errsz, "unknown pre-tokenizer tokenizer.ggml.pre = '%s'", s);
	}
	struct tok_pretok *p = calloc(1, sizeof *p);
	if (!p)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	for (const char *const *re = d->re; *re; re++) {
		if (compile(*re, &p->code[p->n], err, errsz)) {
			tok_pretok_free(p);
			return -1;
		}
		p->n++;
	}
	*info = (struct tok_pre_info){
		.ignore_merges = d->flags & F_IGNORE_MERGES,
		.add_bos = d->flags & F_ADD_BOS,
		.add_sep = d->flags & F_ADD_SEP,
		.no_bos = d->flags & F_NO_BOS,
	};
	*out = p;
	return 0;
}

/* ---- splitting ---- */

struct split {
	const struct tok_pretok *p;
	const char *text;
	tok_word_fn word;
	void *ctx;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *stack;
	char *err;
	size_t errsz;
};

/* Match regex i at or after pos in s[0..n); 1 found, 0 none, -1 error. */
static int match(struct split *s, size_t i, const char *subj, size_t n,
		 size_t pos, size_t *ms, size_t *me)
{
	for (;;) {
		int rc = pcre2_match(s->p->code[i], (PCRE2_SPTR)subj, n, pos, 0,
				     s->md, s->mc);
		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc >= 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
			*ms = ov[0];
			*me = ov[1];
			return 1;
		}
		if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !s->stack) {
			s->mc = pcre2_match_context_create(NULL);
			s->stack = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, NULL);
			if (s->mc && s->stack) {
				pcre2_jit_stack_assign(s->mc, NULL, s->stack);
				continue;
			}
		}
		PCRE2_UCHAR msg[120];
		pcre2_get_error_message(rc, msg, sizeof msg);
		return belt_errf(s->err, s->errsz, "tokenizer: pre-tokenizer match failed: %s",
				 (const char *)msg);
	}
}

/* Pieces of s->text[off..off+len) under regexes i.. go to s->word. */
static int split_at(struct split *s, size_t i, size_t off, size_t len)
{
	if (i == s->p->n)
		return s->word(s->ctx, s->text + off, len);
	const char *subj = s->text + off;
	size_t pos = 0, last = 0, ms = 0, me = 0;
	while (pos < len) {
		int r = match(s, i, subj, len, pos, &ms, &me);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		if (me == ms) { /* no list here matches empty; step over it */
			uint32_t cp;
			size_t k = tok_utf8_next((const unsigned char *)subj + ms, len - ms, &cp);
			pos = ms + (k ? k : 1);
			continue;
		}
		if ((ms > last && split_at(s, i + 1, off + last, ms - last)) ||
		    split_at(s, i + 1, off + ms, me - ms))
			return -1;
		pos = last = me;
	}
	return last < len ? split_at(s, i + 1, off + last, len - last) : 0;
}

int tok_pretok_split(const struct tok_pretok *p, const char *text, size_t len,
		     tok_word_fn word, void *ctx, char *err, size_t errsz)
{
	struct split s = { p, text, word, ctx, NULL, NULL, NULL, err, errsz };
	s.md = pcre2_match_data_create(16, NULL);
	if (!s.md)
		return belt_errf(err, errsz, "tokenizer: out of memory");
	int rc = len ? split_at(&s, 0, 0, len) : 0;
	pcre2_match_data_free(s.md);
	pcre2_match_context_free(s.mc);
	pcre2_jit_stack_free(s.stack);
	return rc;
}
