/* plugins/grammar-gbnf/loops.c: which classes of a grammar may come round
 * to themselves without another character read (their whole-subtree
 * tables are then made at compile). The plugin's sources are linked in. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gbnf.h"

/* Whether the class holding code point cp loops in grammar text. */
static bool loops_at(const char *text, uint32_t cp)
{
	struct gb_grammar g;
	memset(&g, 0, sizeof g);
	char err[256];
	ck_assert_msg(gb_parse(text, strlen(text), &g, err, sizeof err) == 0 &&
			      gb_analyse(&g, text, strlen(text), err, sizeof err) == 0,
		      "%s: %s", text, err);
	bool *looping = calloc(g.n_classes + 1, sizeof *looping);
	ck_assert(looping && gb_loops_find(&g, looping) == 0);
	int found = -1;
	for (uint32_t c = 0; c < g.n_classes; c++)
		if (gb_class_has(&g, c, cp)) {
			ck_assert_msg(found < 0, "%s: two classes hold U+%04X", text, cp);
			found = (int)c;
		}
	ck_assert_msg(found >= 0, "%s: no class holds U+%04X", text, cp);
	bool r = looping[found];
	free(looping);
	gb_grammar_free(&g);
	return r;
}

START_TEST(test_loops)
{
	/* x* of a class, alone or inside a group, and x+ */
	ck_assert(loops_at("root ::= [a-z]*", 'q'));
	ck_assert(loops_at("root ::= \"x\" (\"a\" | [0-9])* \"y\"", '5'));
	ck_assert(loops_at("root ::= \"x\" (\"a\" | [0-9])* \"y\"", 'a'));
	ck_assert(!loops_at("root ::= \"x\" (\"a\" | [0-9])* \"y\"", 'x'));
	ck_assert(!loops_at("root ::= \"x\" (\"a\" | [0-9])* \"y\"", 'y'));
	ck_assert(loops_at("root ::= [0-9]+ \".\"", '7'));
	/* through a nullable rule between: ws may read nothing */
	ck_assert(loops_at("root ::= ([a-z] ws)*\nws ::= \" \"?", 'k'));
	/* a bounded repetition is a chain, not a loop */
	ck_assert(!loops_at("root ::= [a-z]{0,3}", 'q'));
	/* another character must come between */
	ck_assert(!loops_at("root ::= ([a-z] \"-\")*", 'q'));
	ck_assert(!loops_at("root ::= ([a-z] \"-\")*", '-'));
	/* the JSON string's characters (not quote or backslash) */
	const char *json = "root ::= \"\\\"\" ([^\"\\\\] | \"\\\\\" [\"\\\\nt] | \"\\\\u\" [0-9a-f]{4})* \"\\\"\"";
	ck_assert(loops_at(json, 'z'));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("grammar_loops");
	TCase *tc = tcase_create("loops");
	tcase_add_test(tc, test_loops);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
