/* The targets of `rsswatch agent`: from -n/-p/-g on the command line and from a config
 * file of one target per line (docs/guide/agent.md). Pure: bytes in, a list out, no I/O.
 *
 * A line is whitespace-separated KEY=VALUE words; a VALUE may be double-quoted (then it
 * may hold spaces, and \" and \\ stand for " and \). Keys: name, and exactly one of
 * match (an extended regular expression, as record -n), pid, cgroup; with match, also
 * user (the owner: a uid or a user name) and cgroup (the process must be in it or
 * below it), so that another user's process of the same name is not taken. '#' starts a
 * comment (outside quotes); blank lines are skipped.
 *
 * A target's name is its Prometheus label value and its runs' label: 1..AGENT_NAME_MAX
 * bytes of [A-Za-z0-9_.-]. Without name= it is derived from the target (the pattern's
 * allowed bytes, "pid-N", the cgroup's last component); two targets may not share a
 * name, so the number of label values is the number of targets. */
#ifndef RSW_RECORD_AGENTCONF_H
#define RSW_RECORD_AGENTCONF_H

#include <stddef.h>

#define AGENT_NAME_MAX 63
#define AGENT_TARGETS_MAX 1024
#define AGENT_VALUE_MAX 1024	/* bytes of a pattern or cgroup path */
#define AGENT_LINE_MAX 4096

enum agent_kind { AGENT_MATCH, AGENT_PID, AGENT_CGROUP };

struct agent_target {
	char name[AGENT_NAME_MAX + 1];
	enum agent_kind kind;
	char *value;		/* the pattern, the pid as given, or the cgroup; owned */
	unsigned line;		/* where it was given: a config line, 0 for the command line */
	/* A match target's conditions besides its pattern (NULL: none; owned): user= (a
	 * uid or a user name, resolved by the agent) and cgroup= (the process is in that
	 * cgroup or below it, the path as /proc/PID/cgroup writes it). */
	char *user;
	char *within;
};

/* Targets in the order given. */
struct agentconf {
	struct agent_target *t;
	size_t n, cap;
};

/* Why a line or an argument was refused: line 0 for the command line; msg is one line
 * without the line number (the caller adds the file name and the number). */
struct agentconf_err {
	unsigned line;
	char msg[256];
};

/* Whether s is a valid target name. */
int agent_name_ok(const char *s);

/* A name for a target given without one (see above); never empty ("target" when
 * nothing of value is usable). */
void agent_name_derive(enum agent_kind kind, const char *value, char *out, size_t n);

/* Adds one target: value is checked (a pattern must compile, a pid parse, a cgroup be
 * non-empty), name (or the derived one when NULL) must be valid and new. Returns 0 or
 * -EINVAL with *err set; c is unchanged on failure. */
int agentconf_add(struct agentconf *c, enum agent_kind kind, const char *value,
		  const char *name, unsigned line, struct agentconf_err *err);

/* Parses a whole config file's bytes and adds its targets to c. Stops at the first
 * bad line: returns -EINVAL with *err (its line number and why); targets of earlier
 * lines stay in c. */
int agentconf_parse(struct agentconf *c, const char *buf, size_t len, struct agentconf_err *err);

/* Sets the user= and cgroup= conditions of the last target added (match only; values
 * copied; NULL: none). Returns 0 or -EINVAL with *err set. */
int agentconf_restrict(struct agentconf *c, const char *user, const char *within,
		       unsigned line, struct agentconf_err *err);

void agentconf_release(struct agentconf *c);

const char *agent_kind_key(enum agent_kind kind);

#endif
