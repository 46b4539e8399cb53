/* libFuzzer target over every parser of bytes from the kernel or the user. The first
 * byte picks the parser; the rest is its input. Parsers must never read out of bounds,
 * crash or hang, whatever the bytes (ASan and UBSan watch). Build and run: make fuzz. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "metrics/prom.h"
#include "source/elfsym.h"
#include "source/cgroup.h"
#include "source/kmsg.h"
#include "source/nvml.h"
#include "source/proc.h"
#include "source/proccn.h"
#include "source/psi.h"
#include "source/smaps.h"
#include "source/taskstats.h"
#include "source/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned which = data[0];
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;
	/* A terminated copy for the parsers that take strings. */
	char *str = malloc(len + 1);
	if (!str)
		return 0;
	memcpy(str, buf, len);
	str[len] = '\0';

	union {
		struct proc_status st;
		struct proc_stat ps;
		struct proc_io io;
		struct meminfo mi;
		struct cg_mount mnt;
		struct cg_events ev;
		struct cg_oom_control oc;
		struct cg_stat cs;
		struct psi psi;
		struct smaps_rollup sm;
		char line[256];
		uint64_t u;
		int64_t i;
		pid_t pids[64];
		struct proccn_event cn[8];
		struct taskstats_exit ts[4];
	} out;
	size_t n;
	uint16_t fam;
	struct kmsg_record *rec = malloc(sizeof(*rec));
	struct kmsg_oom *oom = malloc(sizeof(*oom));

	switch (which % 16) {
	case 0: proc_status_parse(buf, len, &out.st); break;
	case 1: proc_stat_parse(buf, len, &out.ps); proc_io_parse(buf, len, &out.io); break;
	case 2: meminfo_parse(buf, len, &out.mi); break;
	case 3:
		proc_cmdline_join(buf, len, out.line, sizeof(out.line));
		elf_func_offset(buf, len, "cuMemAlloc_v2", &out.u);	/* a library a target chose */
		break;
	case 4: parse_duration_ns(str, &out.i); break;
	case 5: {
		struct sockaddr_storage ss;
		socklen_t sl;
		parse_size(str, &out.u);
		prom_parse_listen(str, &ss, &sl);	/* --listen */
		break;
	}
	case 6: kv_find_u64(buf, len, "VmRSS:", &out.u); break;
	case 7: {
		struct uw_map m;
		cg_mountinfo_parse(buf, len, &out.mnt);
		uw_maps_line_parse(buf, len, &m);	/* a line of /proc/PID/maps */
		break;
	}
	case 8: cg_proc_path_parse(buf, len, 1 + (len & 1), out.line, sizeof(out.line)); break;
	case 9: cg_events_parse(buf, len, &out.ev); break;
	case 10: cg_oom_control_parse(buf, len, &out.oc); break;
	case 11: cg_stat_parse(buf, len, &out.cs); break;
	case 12:
		cg_procs_parse(buf, len, out.pids, 64, &n);
		proccn_parse(buf, len, out.cn, 8);
		/* the family the first message claims, so that its body is parsed */
		taskstats_parse(buf, len, len >= 6 ? (uint16_t)(data[5] | data[6] << 8) : 0,
				out.ts, 4);
		taskstats_family_parse(buf, len, &fam);
		break;
	case 13: psi_parse(buf, len, &out.psi); smaps_rollup_parse(buf, len, &out.sm); break;
	case 14:
		if (rec && kmsg_record_parse(buf, len, rec) == 0 && oom)
			kmsg_oom_parse(rec->text, rec->text_len, oom);
		break;
	case 15: nspid_parse(buf, len, out.pids, 64); cg_limit_parse(buf, len, &out.u); break;
	}
	free(rec);
	free(oom);
	free(str);
	return 0;
}
