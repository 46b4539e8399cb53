/* Patterns given for -n, --follow and the agent's match= targets: extended regular
 * expressions, checked before regcomp so that a pattern cannot make the recorder hang
 * or grow without bound.
 *
 * glibc's regcomp expands a counted repetition by copying its operand, and its regexec
 * falls back to backtracking for back-references: `a` and twenty `+` took 1.3 GiB to
 * compile, and a back-reference pattern held a thread for over 40 s. pattern_check
 * refuses what can blow up and leaves the rest to regcomp:
 *   - back-references (\1 .. \9);
 *   - a quantifier right after another one (a++, a*{2}, a?*);
 *   - a repeating quantifier (*, +, {n,} or {n,m} with m > 1) applied to a group that
 *     already holds one ((a+)*, (a|b*){3});
 *   - counts in {n,m} above PATTERN_REP_MAX;
 *   - patterns longer than PATTERN_MAX bytes.
 * What is left compiles to at most PATTERN_MAX * PATTERN_REP_MAX positions, and a match
 * of it against a subject of at most PATTERN_SUBJECT_MAX bytes (a name is at most 15,
 * a command line is read up to 255) takes time linear in the subject for each. */
#ifndef RSW_RECORD_PATTERN_H
#define RSW_RECORD_PATTERN_H

#include <regex.h>
#include <stddef.h>

#define PATTERN_MAX 512
#define PATTERN_REP_MAX 64
#define PATTERN_SUBJECT_MAX 256

/* Whether pat is allowed (see above). Returns 0, or -EINVAL with why (a phrase, no
 * "rsswatch:", e.g. "back-references (\\1) are not allowed") written. Pure. */
int pattern_check(const char *pat, char *why, size_t whylen);

/* pattern_check, then regcomp(REG_EXTENDED | REG_NOSUB). Returns 0 (re to regfree),
 * or -EINVAL with why written (pattern_check's reason or regerror's). */
int pattern_compile(regex_t *re, const char *pat, char *why, size_t whylen);

#endif
