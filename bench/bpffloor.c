/* bench/bpffloor [empty|lookup]: attaches a program that does nothing (or one hash
 * lookup, bench/bpf/floor.bpf.c) to the raw tracepoint rss_stat, as the eBPF engine's
 * is, prints "attached" and holds it until SIGINT or SIGTERM: the floor of what any
 * program there costs a page-faulting workload, for bench/kpeak-cost.sh and
 * bench/kpeak-real.sh to set the engine's cost against. Needs root. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_BPF
#include <bpf/libbpf.h>
#include "bpf/floor.skel.h"

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "empty";
	struct floor_bpf *f = floor_bpf__open_and_load();
	if (!f) {
		fprintf(stderr, "bpffloor: cannot load the program\n");
		return 1;
	}
	struct bpf_program *p = strcmp(which, "lookup") == 0 ? f->progs.floor_lookup
							     : f->progs.floor_empty;
	struct bpf_link *l = bpf_program__attach_raw_tracepoint(p, "rss_stat");
	if (!l) {
		fprintf(stderr, "bpffloor: cannot attach to rss_stat\n");
		floor_bpf__destroy(f);
		return 1;
	}
	sigset_t set;
	int sig;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("attached\n");
	fflush(stdout);
	sigwait(&set, &sig);
	bpf_link__destroy(l);
	floor_bpf__destroy(f);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "bpffloor: built without the eBPF engine\n");
	return 2;
}
#endif
