/* The floor of any program on the kernel's page counts (bench/bpffloor.c): attached to
 * the raw tracepoint rss_stat as the engine's is, one that does nothing, and one that
 * makes the one hash lookup every program that filters by process must make. */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} procs SEC(".maps");

SEC("raw_tracepoint/rss_stat")
int floor_empty(struct bpf_raw_tracepoint_args *ctx)
{
	(void)ctx;
	return 0;
}

SEC("raw_tracepoint/rss_stat")
int floor_lookup(struct bpf_raw_tracepoint_args *ctx)
{
	(void)ctx;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	return bpf_map_lookup_elem(&procs, &tgid) ? 1 : 0;
}
