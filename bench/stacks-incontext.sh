#!/bin/sh
# bench/stacks-incontext.sh [ROUNDS]: what record --stacks costs a program in the
# program's own context, from the kernel's own count instead of wall times (which on a
# shared machine vary more between rounds than the goal of 2%: BENCHMARKS §23).
#
# With kernel.bpf_stats_enabled set for the run, the kernel adds up, for each BPF
# program, the time it ran (run_time_ns) and its runs (run_cnt). The engine's and the
# stacks' programs run in the context of the process that hit them: a page fault's
# rss_stat, a traced system call's return, a probe's hit. So their run time is CPU the
# program itself spends, and its share of the program's CPU is the slowdown it causes
# on a machine with a core free for the recorder (which walks and names the stacks on
# its own CPU, counted apart). Not in run_time_ns: the entry into each program (a
# tracepoint's or a probe's own cost, tens of ns a hit; the hits are printed so it can
# be bounded), and the stack copy's cache misses after it.
#
# Each program runs under `rsswatch record -i 1s --` (the engine alone), then
# `--stacks=mmap` and `--stacks=faults`, in turns, ROUNDS (5) times: as the launched
# command, it times itself (/usr/bin/time: user + system CPU) and, when done, has
# bpftool list the programs with their counts: the recorder's are those loaded since
# the listing taken before it started (so nothing else may load BPF programs during
# the run). Medians. The programs are those of bench/stacks-cost.sh (PROGS picks them). Needs
# root, bpftool and python3; leaves kernel.bpf_stats_enabled as it found it.
set -eu
. "$(dirname "$0")/lib.sh"
rounds=${1:-5}
B=${BUILD:-build}
rsw=${RSW:-$B/rsswatch}
loop=$B/bench/mmaploop
[ -x "$rsw" ] && [ -x "$loop" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
for c in bpftool python3 xz gcc /usr/bin/time; do
	command -v $c >/dev/null || { echo "needs $c" >&2; exit 2; }
done
tmp=$(mktemp -d)
chmod 700 "$tmp"
was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q kernel.bpf_stats_enabled="$was"; rm -rf "$tmp"' EXIT
sysctl -q kernel.bpf_stats_enabled=1
seq 1 1000000 >"$tmp/in.txt"

# one PROG MODE(engine|mmap|faults): "CPU_MS BPF_MS HITS" of one run
one() {
	flag=$([ "$2" = engine ] && echo "" || echo "--stacks=$2")
	: >"$tmp/progs.json"
	before=$(bpftool -j prog show | python3 -c 'import json, sys; print(max([p["id"] for p in json.load(sys.stdin)] + [0]))')
	# shellcheck disable=SC2086
	"$rsw" record -q --db "$tmp/b.db" -i 1s $flag -- sh -c \
		"/usr/bin/time -f '%U %S' -o '$tmp/cpu' $(stacks_prog "$1") >/dev/null &&
		 bpftool -j prog show >'$tmp/progs.json'" >/dev/null 2>&1
	python3 - "$tmp/progs.json" "$tmp/cpu" "$before" <<'PY'
import json, sys
progs = json.load(open(sys.argv[1]))
u, s = open(sys.argv[2]).read().split()[-2:]
# the recorder's programs: those loaded since the listing before it started
mine = [p for p in progs if p["id"] > int(sys.argv[3])]
ns = sum(p.get("run_time_ns", 0) for p in mine)
n = sum(p.get("run_cnt", 0) for p in mine)
print("%.1f %.2f %d" % ((float(u) + float(s)) * 1000, ns / 1e6, n))
PY
}

col() { awk -v c="$1" '{ print $c }'; }

printf '%-7s' program
for m in engine mmap faults; do printf ' | %-31s' "$m: CPU ms, BPF ms (share), hits"; done
echo
for p in ${PROGS:-mmap xz gcc python big}; do
	for m in engine mmap faults; do : >"$tmp/$p.$m"; done
	one "$p" engine >/dev/null	# untimed: the caches
	r=0
	while [ $r -lt "$rounds" ]; do
		for m in engine mmap faults; do one "$p" $m >>"$tmp/$p.$m"; done
		r=$((r + 1))
	done
	printf '%-7s' "$p"
	for m in engine mmap faults; do
		cpu=$(col 1 <"$tmp/$p.$m" | median)
		bpf=$(col 2 <"$tmp/$p.$m" | median)
		hits=$(col 3 <"$tmp/$p.$m" | median)
		printf ' | %8s %8s %6s %7s' "$cpu" "$bpf" \
			"$(awk -v b="$bpf" -v c="$cpu" 'BEGIN { printf "%.2f%%", (c > b ? 100 * b / (c - b) : 0) }')" \
			"$hits"
	done
	echo
done
