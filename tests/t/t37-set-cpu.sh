#!/bin/sh
# A set's context counts every process it ever had, those that ended between two samples
# included, up to the run's end: the CPU seconds that show, show --json and export (its
# last row) give against /usr/bin/time's for the very same execution (time runs inside
# the recording, so the set is time and everything it waits for; time's own CPU is a
# millisecond or two), at 1 s and at 100 ms. The workloads use a known amount of CPU
# (tests/bin/busy spins until its own CPU time reaches the figure), however loaded the
# machine is.
. tests/t/lib.sh

BUSY="$BUILD/tests/bin/busy"
if [ ! -x /usr/bin/time ]; then
	skip "/usr/bin/time is not installed"
	done_testing
fi

# near RECORDED REFERENCE: within 3% below and 5% (+50 ms for time itself) above
near() { awk -v r="$1" -v w="$2" 'BEGIN { exit !(w > 0 && r >= w * 0.97 && r <= w * 1.05 + 0.05) }'; }
# the last exported row's user + sys
last_cpu() {
	"$RSW" export -f csv >"$T/e.csv" &&
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "cpu_user_s") u = i; if ($i == "cpu_sys_s") s = i }; next }
		{ v = $u + $s } END { if (u && s) printf "%.3f", v }' "$T/e.csv"
}
# name INTERVAL MIN_CPU COMMAND...: recorded under time, compared with it
compare_cpu() {
	_name=$1 _iv=$2 _min=$3
	shift 3
	expect_exit 0 "$_name at $_iv: exit 0" "$RSW" record -q -i "$_iv" -- \
		/usr/bin/time -f '%U %S' -o "$T/time.txt" "$@"
	show_json
	_u=$(sfield context.cpu_user_s)
	_s=$(sfield context.cpu_sys_s)
	read -r _tu _ts <"$T/time.txt"
	_rec=$(awk -v u="$_u" -v s="$_s" 'BEGIN { printf "%.3f", u + s }')
	_ref=$(awk -v u="$_tu" -v s="$_ts" 'BEGIN { printf "%.3f", u + s }')
	diag "$_name at $_iv: recorded $_rec s (user $_u, sys $_s), /usr/bin/time $_ref s; $(sfield samples) samples"
	check "$_name at $_iv: show's CPU ($_rec s) is /usr/bin/time's ($_ref s)" near "$_rec" "$_ref"
	check "$_name at $_iv: /usr/bin/time saw the work (at least $_min s)" \
		awk -v r="$_ref" -v m="$_min" 'BEGIN { exit !(r >= m) }'
	_e=$(last_cpu)
	check "$_name at $_iv: export's last row has it too (${_e:-none} s)" near "${_e:-0}" "$_ref"
	check "$_name at $_iv: cpu_user_s never decreases over the samples" awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == "cpu_user_s") c = i; next }
		$c < last { bad = 1 } { last = $c } END { exit !(c && !bad) }' "$T/e.csv"
}

TEN="for i in 1 2 3 4 5 6 7 8 9 10; do '$BUSY' 300 & done; wait"
compare_cpu "ten busy children of 0.3 s" 1s 2.9 sh -c "$TEN"
compare_cpu "ten busy children of 0.3 s" 100ms 2.9 sh -c "$TEN"
# one process that ends before the second sample: only the first (at 0) saw it
compare_cpu "a busy process of 0.9 s" 1s 0.85 "$BUSY" 900

# make -j2 of a dozen small files: make, a shell, cc, cc1 and as for each, most of them
# between two samples
if command -v make >/dev/null && command -v cc >/dev/null; then
	mkdir "$T/mk"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		printf 'int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n' \
			"$i" "$i" >"$T/mk/f$i.c"
	done
	printf 'all: %s\n%%.o: %%.c\n\tcc -O2 -c $< -o $@\n' \
		"$(cd "$T/mk" && ls f*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >"$T/mk/Makefile"
	compare_cpu "make -j2" 1s 0.05 make -s -j2 -C "$T/mk"
	compare_cpu "make -j2" 100ms 0.05 make -s -j2 -B -C "$T/mk"
	if [ "$(sfield exit_records)" = 1 ]; then
		check "make -j2: every process is in the process table (make, and 3 per file)" \
		test "$(sql "$RSSWATCH_DB" "SELECT count(*) FROM process WHERE run_id = (SELECT max(id) FROM run)")" -ge 38
	else
		skip "exit records need root: processes that lived between samples are not all known"
	fi
else
	skip "make and cc are not installed"
fi
done_testing
