#include "record/pattern.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One level of grouping while scanning: whether anything in it repeats (so that a
 * repeating quantifier on the whole group is refused). */
#define PATTERN_DEPTH 32

static int refuse(char *why, size_t len, const char *msg)
{
	snprintf(why, len, "%s", msg);
	return -EINVAL;
}

/* The end of a bracket expression that starts at p[i] == '[': the index of its ']',
 * or 0 when it has none (regcomp then says so). ']' first (after an optional '^') is a
 * member; [:class:], [=x=] and [.x.] hold no closing bracket. */
static size_t bracket_end(const char *p, size_t n, size_t i)
{
	size_t j = i + 1;
	if (j < n && p[j] == '^')
		j++;
	if (j < n && p[j] == ']')
		j++;
	while (j < n && p[j] != ']') {
		if (p[j] == '[' && j + 1 < n && (p[j + 1] == ':' || p[j + 1] == '=' || p[j + 1] == '.')) {
			char c = p[j + 1];
			const char *e = NULL;
			for (size_t k = j + 2; k + 1 < n; k++)
				if (p[k] == c && p[k + 1] == ']') {
					e = p + k;
					break;
				}
			if (!e)
				return 0;
			j = (size_t)(e - p) + 2;
			continue;
		}
		j++;
	}
	return j < n ? j : 0;
}

/* A counted repetition at p[i] == '{': sets *max (-1: unbounded) and returns the index
 * after its '}'; 0 when it is not one (a '{' not followed by a count is left to
 * regcomp); -1 when a count is over PATTERN_REP_MAX. */
static long brace(const char *p, size_t n, size_t i, long *max)
{
	size_t j = i + 1;
	long lo = -1, hi;
	if (j >= n || (p[j] != ',' && (p[j] < '0' || p[j] > '9')))
		return 0;
	for (; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
		lo = (lo < 0 ? 0 : lo) * 10 + (p[j] - '0');
		if (lo > PATTERN_REP_MAX)
			return -1;
	}
	hi = lo;
	if (j < n && p[j] == ',') {
		j++;
		hi = -1;
		for (; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
			hi = (hi < 0 ? 0 : hi) * 10 + (p[j] - '0');
			if (hi > PATTERN_REP_MAX)
				return -1;
		}
	}
	if (j >= n || p[j] != '}')
		return 0;
	*max = hi;
	return (long)j + 1;
}

int pattern_check(const char *pat, char *why, size_t whylen)
{
	size_t n = strlen(pat);
	/* rep[d]: something in the group open at depth d repeats; atom_rep: the last atom
	 * (a group just closed) repeats; after_q: the last thing was a quantifier */
	int rep[PATTERN_DEPTH + 1] = { 0 };
	int depth = 0, atom_rep = 0, after_q = 0;
	char msg[96];
	if (n > PATTERN_MAX) {
		snprintf(msg, sizeof(msg), "longer than %d bytes", PATTERN_MAX);
		return refuse(why, whylen, msg);
	}
	for (size_t i = 0; i < n; i++) {
		char c = pat[i];
		long max = 0, next = 0;
		int quant = 0;
		if (c == '*' || c == '+') {
			quant = 1;
			max = -1;
		} else if (c == '?') {
			quant = 1;
			max = 1;
		} else if (c == '{') {
			next = brace(pat, n, i, &max);
			if (next < 0) {
				snprintf(msg, sizeof(msg), "a repetition count over %d", PATTERN_REP_MAX);
				return refuse(why, whylen, msg);
			}
			quant = next > 0;
		}
		if (quant) {
			int repeats = max < 0 || max > 1;
			if (after_q)
				return refuse(why, whylen, "a quantifier after a quantifier (as in a++ or a*{2})");
			if (repeats && atom_rep)
				return refuse(why, whylen, "a repeated group that repeats inside (as in (a+)*)");
			if (repeats)
				rep[depth] = 1;
			after_q = 1;
			atom_rep = 0;
			if (next > 0)
				i = (size_t)next - 1;
			continue;
		}
		after_q = 0;
		atom_rep = 0;
		switch (c) {
		case '\\':
			if (i + 1 < n && pat[i + 1] >= '1' && pat[i + 1] <= '9')
				return refuse(why, whylen, "back-references (\\1 to \\9) are not allowed");
			i++;	/* an escaped character is one atom */
			break;
		case '[': {
			size_t e = bracket_end(pat, n, i);
			if (e)
				i = e;
			break;
		}
		case '(':
			if (depth == PATTERN_DEPTH) {
				snprintf(msg, sizeof(msg), "groups nested deeper than %d", PATTERN_DEPTH);
				return refuse(why, whylen, msg);
			}
			rep[++depth] = 0;
			break;
		case ')':
			if (depth > 0) {
				atom_rep = rep[depth];
				depth--;
				rep[depth] |= atom_rep;
			}
			break;
		case '|':
		case '^':
		case '$':
			break;
		default:
			break;
		}
	}
	return 0;
}

int pattern_compile(regex_t *re, const char *pat, char *why, size_t whylen)
{
	int e = pattern_check(pat, why, whylen);
	if (e < 0)
		return e;
	int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, re, why, whylen);
		return -EINVAL;
	}
	return 0;
}
