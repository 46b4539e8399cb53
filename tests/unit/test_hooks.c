/* The environment a --on-warn/--on-oom command gets (record/hooks.c): the caller's
 * variables without any RSSWATCH_* one, then the event's facts, verbatim. */
#include "testutil.h"

#include <string.h>

#include "record/hooks.h"

static size_t count(char **env, const char *entry)
{
	size_t n = 0;
	for (char **p = env; *p; p++)
		n += strcmp(*p, entry) == 0;
	return n;
}

static void test_env(void **state)
{
	(void)state;
	char *base[] = { "PATH=/bin", "RSSWATCH_PID=1", "RSSWATCH_COMM=old", "HOME=/root", NULL };
	struct hook_facts f = { 42, 4242, 123456789, 67108864, "a$(x)\n\"b" };
	char **env = hooks_env(base, "oom_kill", &f, "/db/r.db");
	assert_non_null(env);
	assert_int_equal(count(env, "PATH=/bin"), 1);
	assert_int_equal(count(env, "HOME=/root"), 1);
	assert_int_equal(count(env, "RSSWATCH_PID=1"), 0);
	assert_int_equal(count(env, "RSSWATCH_COMM=old"), 0);
	assert_int_equal(count(env, "RSSWATCH_EVENT=oom_kill"), 1);
	assert_int_equal(count(env, "RSSWATCH_PID=4242"), 1);
	assert_int_equal(count(env, "RSSWATCH_RUN=42"), 1);
	assert_int_equal(count(env, "RSSWATCH_RSS_BYTES=123456789"), 1);
	assert_int_equal(count(env, "RSSWATCH_LIMIT_BYTES=67108864"), 1);
	assert_int_equal(count(env, "RSSWATCH_COMM=a$(x)\n\"b"), 1);
	assert_int_equal(count(env, "RSSWATCH_DB=/db/r.db"), 1);
	size_t n = 0;
	while (env[n])
		n++;
	assert_int_equal(n, 9);
	hooks_env_free(env);
}

static void test_env_unknown(void **state)
{
	(void)state;
	char *base[] = { NULL };
	struct hook_facts f = { 1, 7, 0, 0, NULL };
	char **env = hooks_env(base, "warn", &f, NULL);
	assert_non_null(env);
	for (char **p = env; *p; p++) {
		assert_true(strncmp(*p, "RSSWATCH_LIMIT_BYTES=", 21) != 0);
		assert_true(strncmp(*p, "RSSWATCH_COMM=", 14) != 0);
		assert_true(strncmp(*p, "RSSWATCH_DB=", 12) != 0);
	}
	assert_int_equal(count(env, "RSSWATCH_EVENT=warn"), 1);
	hooks_env_free(env);
	hooks_env_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
