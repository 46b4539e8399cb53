/* The check of -n, --follow and match= patterns (record/pattern.h): what can hang a
 * match or blow up regcomp is refused, ordinary patterns pass. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "record/pattern.h"

static int check(const char *p)
{
	char why[128] = "";
	return pattern_check(p, why, sizeof(why));
}

static void test_ordinary(void **state)
{
	(void)state;
	static const char *const ok[] = {
		"prover-bin", "^prover-bin$", "^postgres: .*checkpointer", "^cuzk-daemon( |$)",
		"^python3 worker.py --queue (fast|slow)", "^my worker( --x)?$", "a#b",
		"[[:alpha:]]+[0-9]{2,8}", "[]+*]+", "[^]*]*x", "\\(a\\)+", "a{64}", "x{0,64}y",
		"((a|b)c)?", "((a)?)?", "(ab)*c(de)+", "a\\+\\+", "a{", "a{x}", "(a{3})?",
		"\\.", "",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char why[128] = "";
		if (pattern_check(ok[i], why, sizeof(why)) != 0)
			fail_msg("'%s' refused: %s", ok[i], why);
	}
}

static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"(a)\\1", "^(x+)y\\1$", "a++", "a++++++++++++++++++++", "a*{2}", "a?*", "a{2}{3}",
		"(a+)+", "(a*)*", "(a|b*){3}", "((a+)?)*", "(x(y+)z)+", "a{65}", "a{1,65}",
		"a{99999999999999999999}", "(a+){2,}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check(bad[i]) != -EINVAL)
			fail_msg("'%s' allowed", bad[i]);
	char why[128];
	assert_int_equal(pattern_check("(a)\\1", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "back-references"));
	assert_int_equal(pattern_check("a+++", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "quantifier after a quantifier"));
	assert_int_equal(pattern_check("(a+)*", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "repeats inside"));
}

static void test_bounds(void **state)
{
	(void)state;
	char p[PATTERN_MAX + 2];
	memset(p, 'a', sizeof(p) - 1);
	p[PATTERN_MAX] = '\0';
	assert_int_equal(check(p), 0);
	p[PATTERN_MAX] = 'a';
	p[PATTERN_MAX + 1] = '\0';
	assert_int_equal(check(p), -EINVAL);
	char deep[34];
	memset(deep, '(', 33);
	deep[33] = '\0';
	assert_int_equal(check(deep), -EINVAL);
}

static void test_compile(void **state)
{
	(void)state;
	regex_t re;
	char why[128];
	assert_int_equal(pattern_compile(&re, "^worker( |$)", why, sizeof(why)), 0);
	assert_int_equal(regexec(&re, "worker --x", 0, NULL, 0), 0);
	regfree(&re);
	assert_int_equal(pattern_compile(&re, "(unclosed", why, sizeof(why)), -EINVAL);
	assert_true(why[0] != '\0');
	assert_int_equal(pattern_compile(&re, "a{1,65}", why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "over 64"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordinary),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_compile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
