# Sourced by the suites that make memory cgroups. memcg_dir prints the directory of this
# shell's memory cgroup (v1 where the memory controller is mounted there, else v2), where
# rsswatch makes its children; nothing when there is no memory controller.
memcg_dir() {
	if [ -d /sys/fs/cgroup/memory ]; then
		p=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p' /proc/self/cgroup | head -1)
		[ -n "$p" ] && echo "/sys/fs/cgroup/memory$p"
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		echo "/sys/fs/cgroup$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)"
	fi
}
