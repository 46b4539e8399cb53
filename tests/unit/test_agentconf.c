/* The agent's targets (record/agentconf.h): the config file's lines, names given and
 * derived, and every refusal with its line number. */
#include "testutil.h"

#include <errno.h>
#include <string.h>

#include "record/agentconf.h"

static int parse(struct agentconf *c, const char *text, struct agentconf_err *err)
{
	memset(err, 0, sizeof(*err));
	return agentconf_parse(c, text, strlen(text), err);
}

static void test_good(void **state)
{
	(void)state;
	struct agentconf c = { 0 };
	struct agentconf_err err;
	const char *text =
		"# the fleet's services\n"
		"\n"
		"name=prover match=prover-bin\n"
		"  name=db\tcgroup=/sys/fs/cgroup/db   # the database\n"
		"match=\"^my worker( --x)?$\" name=worker\r\n"
		"pid=4242\n"
		"match=\"a\\\"b\\\\c\"\n"
		"match=^cuzk-daemon$";	/* no final newline */
	assert_int_equal(parse(&c, text, &err), 0);
	assert_int_equal(c.n, 6);
	assert_string_equal(c.t[0].name, "prover");
	assert_int_equal(c.t[0].kind, AGENT_MATCH);
	assert_string_equal(c.t[0].value, "prover-bin");
	assert_int_equal(c.t[0].line, 3);
	assert_string_equal(c.t[1].name, "db");
	assert_int_equal(c.t[1].kind, AGENT_CGROUP);
	assert_string_equal(c.t[1].value, "/sys/fs/cgroup/db");
	assert_string_equal(c.t[2].name, "worker");
	assert_string_equal(c.t[2].value, "^my worker( --x)?$");
	assert_int_equal(c.t[3].kind, AGENT_PID);
	assert_string_equal(c.t[3].name, "pid-4242");
	assert_string_equal(c.t[4].value, "a\"b\\c");
	assert_string_equal(c.t[4].name, "a_b_c");
	assert_int_equal(c.t[4].line, 7);
	agentconf_release(&c);

	/* the last line without a newline is read too */
	assert_int_equal(parse(&c, "match=^cuzk-daemon$", &err), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.t[0].name, "cuzk-daemon");
	agentconf_release(&c);
}

static void test_derive(void **state)
{
	(void)state;
	char n[AGENT_NAME_MAX + 1];
	agent_name_derive(AGENT_MATCH, "^prover-bin$", n, sizeof(n));
	assert_string_equal(n, "prover-bin");
	agent_name_derive(AGENT_MATCH, "sleep 1001", n, sizeof(n));
	assert_string_equal(n, "sleep_1001");
	agent_name_derive(AGENT_MATCH, "^[*]+$", n, sizeof(n));
	assert_string_equal(n, "target");
	agent_name_derive(AGENT_CGROUP, "/system.slice/db.service/", n, sizeof(n));
	assert_string_equal(n, "db.service");
	agent_name_derive(AGENT_PID, "77", n, sizeof(n));
	assert_string_equal(n, "pid-77");
	char longp[300];
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = '\0';
	agent_name_derive(AGENT_MATCH, longp, n, sizeof(n));
	assert_int_equal(strlen(n), AGENT_NAME_MAX);
	assert_true(agent_name_ok(n));

	assert_true(agent_name_ok("a.b-c_9"));
	assert_false(agent_name_ok(""));
	assert_false(agent_name_ok("a b"));
	assert_false(agent_name_ok("a\"b"));
	assert_false(agent_name_ok("ünï"));
	memset(longp, 'a', AGENT_NAME_MAX + 1);
	longp[AGENT_NAME_MAX + 1] = '\0';
	assert_false(agent_name_ok(longp));
}

/* text is refused at line with a message that contains word. */
static void refused(const char *text, unsigned line, const char *word)
{
	struct agentconf c = { 0 };
	struct agentconf_err err;
	assert_int_equal(parse(&c, text, &err), -EINVAL);
	if (err.line != line || !strstr(err.msg, word))
		fail_msg("'%s': line %u '%s', expected line %u with '%s'", text, err.line, err.msg,
			 line, word);
	assert_null(strchr(err.msg, '\n'));
	agentconf_release(&c);
}

static void test_bad(void **state)
{
	(void)state;
	refused("name=a match=x\nname=b mtach=y\n", 2, "unknown key 'mtach'");
	refused("name=a match=x\n# c\nname=a match=y\n", 3, "duplicate target name 'a' (first on line 1)");
	refused("match=^x$\nmatch=x\n", 2, "duplicate target name 'x'");
	refused("just words\n", 1, "expected KEY=VALUE, found 'just'");
	refused("=x\n", 1, "expected KEY=VALUE");
	refused("Name=a match=x\n", 1, "expected KEY=VALUE");
	refused("name=a\n", 1, "no target");
	refused("match=x pid=3\n", 1, "one target per line");
	refused("match=x name=a name=b\n", 1, "name given twice");
	refused("match=x name=\"a b\"\n", 1, "invalid target name");
	refused("match=x name=a/b\n", 1, "invalid target name");
	refused("match=\"x\n", 1, "unterminated");
	refused("match=\"x\"y\n", 1, "space after");
	refused("match=\n", 1, "empty match");
	refused("match=\"\"\n", 1, "empty match");
	refused("match=(x\n", 1, "invalid pattern");
	refused("pid=0\n", 1, "invalid pid");
	refused("pid=12x\n", 1, "invalid pid");
	refused("\n\nmatch=a\x01b\n", 3, "control character");
}

static void test_nul(void **state)
{
	(void)state;
	struct agentconf c = { 0 };
	struct agentconf_err err;
	static const char text[] = "match=a\n\nmatch=b\0c\n";
	assert_int_equal(agentconf_parse(&c, text, sizeof(text) - 1, &err), -EINVAL);
	assert_int_equal(err.line, 3);
	assert_non_null(strstr(err.msg, "0x00"));
	assert_int_equal(c.n, 1);	/* the lines before stay */
	agentconf_release(&c);
}

static void test_add(void **state)
{
	(void)state;
	struct agentconf c = { 0 };
	struct agentconf_err err;
	assert_int_equal(agentconf_add(&c, AGENT_MATCH, "prover", NULL, 0, &err), 0);
	assert_int_equal(agentconf_add(&c, AGENT_MATCH, "^prover$", NULL, 0, &err), -EINVAL);
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.msg, "duplicate target name 'prover'"));
	assert_int_equal(c.n, 1);
	assert_int_equal(agentconf_add(&c, AGENT_MATCH, "^prover$", "prover2", 0, &err), 0);
	assert_int_equal(c.n, 2);
	agentconf_release(&c);
	agentconf_release(NULL);
}

/* user= and cgroup= beside match=: conditions; cgroup= alone: a target. */
static void test_conditions(void **state)
{
	(void)state;
	struct agentconf c = { 0 };
	struct agentconf_err err;
	const char *text =
		"name=db cgroup=/system.slice/pg.service match=^postgres user=postgres\n"
		"name=p match=^prover user=0\n"
		"name=g cgroup=/sys/fs/cgroup/x\n";
	assert_int_equal(parse(&c, text, &err), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.t[0].kind, AGENT_MATCH);
	assert_string_equal(c.t[0].value, "^postgres");
	assert_string_equal(c.t[0].user, "postgres");
	assert_string_equal(c.t[0].within, "/system.slice/pg.service");
	assert_string_equal(c.t[1].user, "0");
	assert_null(c.t[1].within);
	assert_int_equal(c.t[2].kind, AGENT_CGROUP);
	assert_null(c.t[2].user);
	assert_null(c.t[2].within);
	agentconf_release(&c);
	refused("user=0\n", 1, "user= goes with match=");
	refused("pid=4 user=0\n", 1, "user= goes with match=");
	refused("pid=4 cgroup=/x\n", 1, "one target per line: pid and cgroup");
	refused("match=a user=0 user=1\n", 1, "user given twice");
	refused("match=a user=\"a b\"\n", 1, "invalid user");
	refused("match=a cgroup=x\n", 1, "invalid cgroup 'x'");
	refused("match=(a)\\1\n", 1, "back-references");
	refused("match=a+++\n", 1, "quantifier after a quantifier");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_conditions),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
