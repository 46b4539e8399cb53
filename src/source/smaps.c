#include "source/smaps.h"
#include "base/parse.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { SM_RSS = 1 << 0, SM_PSS = 1 << 1, SM_PC = 1 << 2, SM_PD = 1 << 3, SM_SWAPPSS = 1 << 4 };
#define SM_REQUIRED (SM_RSS | SM_PSS | SM_PC | SM_PD)

int smaps_rollup_parse(const char *buf, size_t len, struct smaps_rollup *out)
{
	static const struct { const char *key; unsigned bit; size_t off; } keys[] = {
		{ "Rss:", SM_RSS, offsetof(struct smaps_rollup, rss) },
		{ "Pss:", SM_PSS, offsetof(struct smaps_rollup, pss) },
		{ "Pss_Anon:", 0, offsetof(struct smaps_rollup, pss_anon) },
		{ "Pss_File:", 0, offsetof(struct smaps_rollup, pss_file) },
		{ "Pss_Shmem:", 0, offsetof(struct smaps_rollup, pss_shmem) },
		{ "Shared_Clean:", 0, offsetof(struct smaps_rollup, shared_clean) },
		{ "Shared_Dirty:", 0, offsetof(struct smaps_rollup, shared_dirty) },
		{ "Private_Clean:", SM_PC, offsetof(struct smaps_rollup, private_clean) },
		{ "Private_Dirty:", SM_PD, offsetof(struct smaps_rollup, private_dirty) },
		{ "Swap:", 0, offsetof(struct smaps_rollup, swap) },
		{ "SwapPss:", SM_SWAPPSS, offsetof(struct smaps_rollup, swap_pss) },
	};
	struct smaps_rollup r;
	unsigned have = 0, seen = 0;
	const char *p = buf, *end = buf + len;
	memset(&r, 0, sizeof(r));
	if (len == 0)
		return -ENODATA;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		size_t klen = colon ? (size_t)(colon - p) + 1 : 0;
		/* The header "start-end ---p 00000000 00:00 0  [rollup]" has no "Key:" (its
		 * colon is inside "00:00", after a space). */
		if (!colon || memchr(p, ' ', klen))
			goto next;
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			if (strlen(keys[i].key) != klen || memcmp(p, keys[i].key, klen) != 0)
				continue;
			if (seen & (1u << i))
				return -EINVAL;	/* twice */
			seen |= 1u << i;
			int e = kv_value_u64(colon + 1, le, (uint64_t *)((char *)&r + keys[i].off));
			if (e < 0)
				return e;
			have |= keys[i].bit;
			break;
		}
next:
		p = le + 1;
	}
	if ((have & SM_REQUIRED) != SM_REQUIRED)
		return -EINVAL;
	r.have_swap_pss = !!(have & SM_SWAPPSS);
	*out = r;
	return 0;
}

int smaps_reader_open(struct smaps_reader *r, pid_t pid)
{
	char rel[64];
	r->f = (struct rfile)RFILE_INIT;
	snprintf(rel, sizeof(rel), "/proc/%d/smaps_rollup", (int)pid);
	return rfile_open(&r->f, rel);
}

int smaps_reader_read(struct smaps_reader *r, struct smaps_rollup *out)
{
	int e = rfile_read(&r->f);
	if (e < 0)
		return e == -ENOENT ? -ESRCH : e;
	e = smaps_rollup_parse(r->f.buf, r->f.len, out);
	return e == -ENODATA ? -ESRCH : e;
}

void smaps_reader_close(struct smaps_reader *r)
{
	if (r)
		rfile_close(&r->f);
}
