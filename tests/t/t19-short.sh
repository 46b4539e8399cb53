#!/bin/sh
# The shortest commands: /bin/true ends in about a millisecond, while the recording is
# still starting, often before its first sample. Each of 30 runs must still have a
# peak, a sample and the command in its process table, on a machine loaded with
# stress-ng --cpu 2 too. With exit records (root) the peak is the command's own, and
# it is compared with /usr/bin/time's %M for a /bin/true run beside it (time's own
# copy before the exec is smaller than true); without them it is wait4's figure,
# which holds the recorder's copy before the exec, so at least that. Its CPU is its own,
# from its exec: never more than the one CPU it can use.
. tests/t/lib.sh

N=30
# runs N LABEL [ENV...]: N recordings of /bin/true (and of true through PATH every
# other one); peaks, sources and process counts in $T/LABEL.rows
runs() {
	_runs=$1 _l=$2
	shift 2
	: >"$T/$_l.ref"
	: >"$T/$_l.err"
	_i=0
	while [ "$_i" -lt "$_runs" ]; do
		_c=/bin/true
		[ $((_i % 2)) = 1 ] && _c=true
		env "$@" "$RSW" record -q -- "$_c" >/dev/null 2>"$T/one.err" ||
			{ echo "exit $?" >>"$T/$_l.err"; cat "$T/one.err" >>"$T/$_l.err"; }
		[ -x /usr/bin/time ] && /usr/bin/time -f '%M' /bin/true 2>>"$T/$_l.ref"
		_i=$((_i + 1))
	done
	sql "$RSSWATCH_DB" "SELECT id, samples, coalesce(peak_rss, 0), coalesce(peak_source, '-'),
		(SELECT count(*) FROM process p WHERE p.run_id = run.id), exit_records FROM run
		ORDER BY id DESC LIMIT $_runs" >"$T/$_l.rows"
}
# every row: a sample or more, a peak, one process
all_have() {
	awk -F'|' -v n="$N" '$2 >= 1 && $3 > 0 && $5 >= 1 { k++ } END { exit !(NR == n && k == n) }' "$1"
}
ref_kib() { sort -n "$1" | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

if [ "$(id -u)" = 0 ]; then
	for load in idle loaded; do
		if [ "$load" = loaded ]; then
			if ! command -v stress-ng >/dev/null; then
				skip "stress-ng is not installed: no run under load"
				continue
			fi
			stress-ng --cpu 2 --timeout 600s >/dev/null 2>&1 &
			spid=$!
			at_exit "kill -TERM $spid 2>/dev/null"
		fi
		runs "$N" "$load"
		[ "$load" = loaded ] && { kill -TERM "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
		diag "$load: $(awk -F'|' '$2 == 1' "$T/$load.rows" | wc -l) of $N runs with one sample"
		check "$load: each of $N runs of true has a sample, a peak and a process" all_have "$T/$load.rows"
		[ -s "$T/$load.err" ] && diag "$(head -5 "$T/$load.err")"
		# a sample may stand a few pages above the exit record (docs/guide/peaks.md)
		check "$load: every peak is the command's own (its exit record, or a sample of it)" \
			awk -F'|' -v n="$N" '$6 == 1 && ($4 == "exit record" || $4 == "sample" || $4 == "VmHWM" || $4 == "page counts") { k++ }
				END { exit !(k == n) }' "$T/$load.rows"
		# its CPU counts from its exec, as its time does: the recorder's copy before
		# the exec (2 to 5 ms here) once made /bin/true use 400 to 1000% of a CPU.
		# The kernel's exit record counts whole ticks (4 ms at HZ=250), so a
		# command may be charged up to a tick more than it ran: 10 ms allowed, and
		# the median run is held to one CPU
		for _id in $(cut -d'|' -f1 "$T/$load.rows"); do
			# the run's time, its CPU and its share of a CPU, then its processes'
			"$RSW" show "$_id" --json | tr ',' '\n' |
				sed -n 's/.*"\(cpu_user_s\|cpu_sys_s\|cpu_avg_pct\|duration_s\)":\([0-9.]*\).*/\2/p' |
				head -4 | tr '\n' ' '
			echo
		done >"$T/$load.cpu"
		diag "$load: CPU less time, ms: $(awk '{ printf "%.0f ", 1000 * ($2 + $3 - $1) }' "$T/$load.cpu")"
		check "$load: no run of true used more CPU than its time and a tick" awk -v n="$N" \
			'NF == 4 && $2 + $3 <= $1 + 0.010 { k++ } END { exit !(NR == n && k == n) }' "$T/$load.cpu"
		pct=$(awk '{ print $4 }' "$T/$load.cpu" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		check "$load: the median run of true used one CPU at most (${pct}%)" \
			awk -v p="$pct" 'BEGIN { exit !(p != "" && p <= 100) }'
		ref=$(ref_kib "$T/$load.ref")
		lo=$(sort -t'|' -k3 -n "$T/$load.rows" | head -1 | cut -d'|' -f3)
		hi=$(sort -t'|' -k3 -n "$T/$load.rows" | tail -1 | cut -d'|' -f3)
		diag "$load: peaks $lo..$hi bytes; /usr/bin/time -f %M of /bin/true: ${ref:-?} KiB (median)"
		if [ -n "$ref" ]; then
			check "$load: each peak is within 25% of /usr/bin/time's ${ref} KiB" awk -F'|' -v r="$ref" \
				'{ if ($3 < r * 1024 * 0.75 || $3 > r * 1024 * 1.25) bad++ } END { exit !(NR && !bad) }' \
				"$T/$load.rows"
		else
			skip "/usr/bin/time is not installed"
		fi
	done
else
	skip "exit records need root"
fi

# without exit records: wait4's figure, or a sample's
runs "$N" noexit RSSWATCH_NO_TASKSTATS=1
check "no exit records: each of $N runs of true has a sample, a peak and a process" all_have "$T/noexit.rows"
check "no exit records: the peaks come from wait4, a sample or the eBPF engine, never from an exit record" \
	awk -F'|' '$6 == 0 && ($4 == "wait4" || $4 == "sample" || $4 == "VmHWM" || $4 == "page counts") { k++ } END { exit !(NR && k == NR) }' \
	"$T/noexit.rows"
run "$RSW" show "$(sed -n 1p "$T/noexit.rows" | cut -d'|' -f1)"
check "show prints the peak of a run whose command ended before the first sample" \
	grep -Eq '^peak +[0-9.]+ (KiB|MiB)' "$OUT"
done_testing
