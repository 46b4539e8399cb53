#include "record/agentconf.h"
#include "base/parse.h"
#include "base/util.h"
#include "record/pattern.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static const char *const kind_keys[] = { "match", "pid", "cgroup" };

const char *agent_kind_key(enum agent_kind kind)
{
	return kind_keys[kind];
}

static int name_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

int agent_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > AGENT_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!name_byte(s[i]))
			return 0;
	return 1;
}

void agent_name_derive(enum agent_kind kind, const char *value, char *out, size_t n)
{
	char tmp[AGENT_NAME_MAX + 1];
	size_t k = 0;
	if (kind == AGENT_PID) {
		snprintf(tmp, sizeof(tmp), "pid-%.40s", value);
	} else {
		const char *v = value;
		if (kind == AGENT_CGROUP) {	/* the last component that is not empty */
			size_t len = strlen(value);
			while (len > 0 && value[len - 1] == '/')
				len--;
			size_t start = len;
			while (start > 0 && value[start - 1] != '/')
				start--;
			v = value + start;
			for (size_t i = 0; start + i < len && k < AGENT_NAME_MAX; i++)
				tmp[k++] = name_byte(v[i]) ? v[i] : '_';
		} else {
			/* the pattern's bytes that may stand in a name; runs of others one '_' */
			for (; *v && k < AGENT_NAME_MAX; v++) {
				if (name_byte(*v))
					tmp[k++] = *v;
				else if (k > 0 && tmp[k - 1] != '_')
					tmp[k++] = '_';
			}
		}
		while (k > 0 && tmp[k - 1] == '_')
			k--;
		tmp[k] = '\0';
		size_t lead = strspn(tmp, "_");
		memmove(tmp, tmp + lead, k - lead + 1);
		if (!tmp[0])
			strlcpy_rsw(tmp, "target", sizeof(tmp));
	}
	for (char *p = tmp; *p; p++)	/* a pid given as "12x" is refused later anyway */
		if (!name_byte(*p))
			*p = '_';
	strlcpy_rsw(out, tmp, n);
}

static int fail(struct agentconf_err *err, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct agentconf_err *err, unsigned line, const char *fmt, ...)
{
	va_list ap;
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* s, up to 40 bytes, with anything unprintable as '?', for a message. */
static const char *shown(const char *s, size_t len, char *out, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k + 4 < n && i < 40; i++)
		out[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (len > 40 && k + 4 < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

int agentconf_add(struct agentconf *c, enum agent_kind kind, const char *value,
		  const char *name, unsigned line, struct agentconf_err *err)
{
	char derived[AGENT_NAME_MAX + 1], sv[64];
	const char *key = kind_keys[kind];
	size_t vlen = strlen(value);
	if (vlen == 0)
		return fail(err, line, "empty %s", key);
	if (vlen > AGENT_VALUE_MAX)
		return fail(err, line, "%s longer than %d bytes", key, AGENT_VALUE_MAX);
	for (size_t i = 0; i < vlen; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return fail(err, line, "a control character in %s", key);
	if (kind == AGENT_MATCH) {
		regex_t re;
		char why[128];
		if (pattern_compile(&re, value, why, sizeof(why)) < 0)
			return fail(err, line, "invalid pattern '%s': %s",
				    shown(value, vlen, sv, sizeof(sv)), why);
		regfree(&re);
	} else if (kind == AGENT_PID) {
		pid_t pid;
		if (parse_pid(value, &pid) < 0)
			return fail(err, line, "invalid pid '%s': give a process id >= 1",
				    shown(value, vlen, sv, sizeof(sv)));
	}
	if (name) {
		if (!agent_name_ok(name))
			return fail(err, line, "invalid target name '%s': 1 to %d of A-Z a-z 0-9 _ . -",
				    shown(name, strlen(name), sv, sizeof(sv)), AGENT_NAME_MAX);
	} else {
		agent_name_derive(kind, value, derived, sizeof(derived));
		name = derived;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->t[i].name, name) != 0)
			continue;
		if (c->t[i].line)
			return fail(err, line, "duplicate target name '%s' (first on line %u)%s",
				    name, c->t[i].line, name == derived ? "; give each a name=" : "");
		return fail(err, line, "duplicate target name '%s'%s", name,
			    name == derived ? " (give each a name= in a config file)" : "");
	}
	if (c->n >= AGENT_TARGETS_MAX)
		return fail(err, line, "more than %d targets", AGENT_TARGETS_MAX);
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->t = xrealloc(c->t, c->cap * sizeof(*c->t));
	}
	struct agent_target *t = &c->t[c->n++];
	memset(t, 0, sizeof(*t));
	strlcpy_rsw(t->name, name, sizeof(t->name));
	t->kind = kind;
	t->value = xstrdup(value);
	t->line = line;
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line (without its newline): its words into a target. */
static int parse_line(struct agentconf *c, const char *s, size_t len, unsigned line,
		      struct agentconf_err *err)
{
	char name[AGENT_NAME_MAX + 2] = "", sv[64];
	char *value = NULL, *user = NULL, *within = NULL;
	int have_name = 0, kind = -1, ret = 0;
	size_t i = 0;
	for (;;) {
		while (i < len && blank(s[i]))
			i++;
		if (i == len || s[i] == '#')
			break;
		size_t k0 = i;
		while (i < len && s[i] >= 'a' && s[i] <= 'z')
			i++;
		if (i == len || s[i] != '=' || i == k0) {
			size_t w = k0;
			while (w < len && !blank(s[w]))
				w++;
			ret = fail(err, line, "expected KEY=VALUE, found '%s'",
				   shown(s + k0, w - k0, sv, sizeof(sv)));
			goto out;
		}
		size_t klen = i - k0;
		const char *key = s + k0;
		i++;	/* '=' */
		struct { char *p; size_t n, cap; } v = { NULL, 0, 0 };
		if (i < len && s[i] == '"') {
			for (i++;; i++) {
				if (i == len) {
					free(v.p);
					ret = fail(err, line, "unterminated quoted value of %.*s",
						   (int)klen, key);
					goto out;
				}
				char ch = s[i];
				if (ch == '"')
					break;
				if (ch == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\'))
					ch = s[++i];
				if (v.n + 2 > v.cap) {
					v.cap = v.cap ? 2 * v.cap : 64;
					v.p = xrealloc(v.p, v.cap);
				}
				v.p[v.n++] = ch;
			}
			i++;	/* the closing quote */
			if (i < len && !blank(s[i])) {
				free(v.p);
				ret = fail(err, line, "expected a space after the quoted value of %.*s",
					   (int)klen, key);
				goto out;
			}
			if (!v.p)
				v.p = xstrdup("");
			else
				v.p[v.n] = '\0';
		} else {
			size_t v0 = i;
			while (i < len && !blank(s[i]))
				i++;
			v.p = xstrndup(s + v0, i - v0);
		}
		if (klen == 4 && memcmp(key, "name", 4) == 0) {
			if (have_name) {
				free(v.p);
				ret = fail(err, line, "name given twice");
				goto out;
			}
			have_name = 1;
			if (!agent_name_ok(v.p)) {
				ret = fail(err, line, "invalid target name '%s': 1 to %d of A-Z a-z 0-9 _ . -",
					   shown(v.p, strlen(v.p), sv, sizeof(sv)), AGENT_NAME_MAX);
				free(v.p);
				goto out;
			}
			strlcpy_rsw(name, v.p, sizeof(name));
			free(v.p);
			continue;
		}
		if (klen == 4 && memcmp(key, "user", 4) == 0) {
			if (user) {
				free(v.p);
				ret = fail(err, line, "user given twice");
				goto out;
			}
			user = v.p;
			continue;
		}
		/* cgroup= is a target, or beside match= a condition: decided at the end */
		if (klen == 6 && memcmp(key, "cgroup", 6) == 0) {
			if (within) {
				free(v.p);
				ret = fail(err, line, "cgroup given twice");
				goto out;
			}
			within = v.p;
			continue;
		}
		int k = -1;
		for (int j = 0; j < 3; j++)
			if (strlen(kind_keys[j]) == klen && memcmp(key, kind_keys[j], klen) == 0)
				k = j;
		if (k < 0) {
			free(v.p);
			ret = fail(err, line, "unknown key '%s' (name, match, pid, cgroup, user)",
				   shown(key, klen, sv, sizeof(sv)));
			goto out;
		}
		if (kind >= 0) {
			free(v.p);
			ret = fail(err, line, "one target per line: %s and %s", kind_keys[kind],
				   kind_keys[k]);
			goto out;
		}
		kind = k;
		value = v.p;
	}
	if (within && kind == AGENT_PID) {
		ret = fail(err, line, "one target per line: pid and cgroup");
		goto out;
	}
	if (within && kind < 0) {
		kind = AGENT_CGROUP;
		value = within;
		within = NULL;
	}
	if ((user || within) && kind != AGENT_MATCH) {
		ret = fail(err, line, "%s goes with match=", user ? "user=" : "cgroup=");
		goto out;
	}
	if (kind < 0) {
		if (have_name)
			ret = fail(err, line, "no target: give match=, pid= or cgroup=");
		goto out;	/* a blank line or a comment */
	}
	ret = agentconf_add(c, (enum agent_kind)kind, value, have_name ? name : NULL, line, err);
	if (ret == 0 && (user || within))
		ret = agentconf_restrict(c, user, within, line, err);
out:
	free(value);
	free(user);
	free(within);
	return ret;
}

int agentconf_parse(struct agentconf *c, const char *buf, size_t len, struct agentconf_err *err)
{
	unsigned line = 0;
	size_t i = 0;
	while (i < len) {
		line++;
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;
		size_t n = end - i;
		if (n > 0 && buf[end - 1] == '\r')
			n--;
		if (n > AGENT_LINE_MAX)
			return fail(err, line, "line longer than %d bytes", AGENT_LINE_MAX);
		for (size_t j = 0; j < n; j++) {
			unsigned char ch = (unsigned char)buf[i + j];
			if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
				return fail(err, line, "a control character (byte 0x%02x)", ch);
		}
		int e = parse_line(c, buf + i, n, line, err);
		if (e < 0)
			return e;
		i = end + 1;
	}
	return 0;
}

int agentconf_restrict(struct agentconf *c, const char *user, const char *within,
		       unsigned line, struct agentconf_err *err)
{
	struct agent_target *t = c->n ? &c->t[c->n - 1] : NULL;
	char sv[64];
	if (!t || t->kind != AGENT_MATCH)
		return fail(err, line, "user= and cgroup= go with match=");
	if (user) {
		size_t n = strlen(user);
		int ok = n > 0 && n <= 32;
		for (size_t i = 0; ok && i < n; i++)
			ok = (user[i] >= 'a' && user[i] <= 'z') || (user[i] >= 'A' && user[i] <= 'Z') ||
			     (user[i] >= '0' && user[i] <= '9') || user[i] == '_' || user[i] == '-' ||
			     user[i] == '.';
		if (!ok)
			return fail(err, line, "invalid user '%s': a uid or a user name",
				    shown(user, n, sv, sizeof(sv)));
	}
	if (within && (within[0] != '/' || strlen(within) > AGENT_VALUE_MAX))
		return fail(err, line, "invalid cgroup '%s': a path from the hierarchy's root, "
			    "as /proc/PID/cgroup writes it (/system.slice/x.service)",
			    shown(within, strlen(within), sv, sizeof(sv)));
	free(t->user);
	free(t->within);
	t->user = user ? xstrdup(user) : NULL;
	t->within = within ? xstrdup(within) : NULL;
	return 0;
}

void agentconf_release(struct agentconf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->t[i].user);
		free(c->t[i].within);
	}
	for (size_t i = 0; i < c->n; i++)
		free(c->t[i].value);
	free(c->t);
	memset(c, 0, sizeof(*c));
}
