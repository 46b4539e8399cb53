#!/bin/sh
# The eBPF peak engine end to end, as root. A spike between two samples, with the
# workload's own clock read on each side of it, gets its height and a time inside it;
# the set of a launched command whose members peak one after the other gets their
# simultaneous total, not the sum of their peaks; an attached target with an old, higher
# VmHWM has its later spike seen. --no-bpf, a kernel without the tracepoint (simulated)
# and a user who is not root record as before, and -v says why.
. tests/t/lib.sh

MiB=1048576
q() { sql "$RSSWATCH_DB" "$1"; }
last() { q "select $1 from run order by id desc limit 1"; }
ENGINE="exact peaks from the kernel's page counts (eBPF)"

if [ "$(id -u)" != 0 ]; then
	skip "the engine needs root"
	done_testing
fi
if ! "$RSW" record -v -q -- true 2>&1 | grep -qF "$ENGINE"; then
	"$RSW" record -v -q -- true 2>&1 | sed 's/^/# /'
	not_ok "the engine loads as root here (kernel $(uname -r))"
	done_testing
fi

# --- a spike between two samples at 1s
expect_exit 0 "a 200 MiB spike recorded at -i 1s, -v" "$RSW" record -v -i 1s -- \
	"$HOG" sleep 300ms stamp "$T/st" spike 200M stamp "$T/st" sleep 1200ms
check "-v says the engine runs" grep -qF "$ENGINE" "$ERR"
t0=$(sed -n 1p "$T/st")
t1=$(sed -n 2p "$T/st")
peak=$(last peak_rss)
at=$(last peak_rss_at)
diag "spike from $t0 to $t1 ns; peak $peak bytes at $at ($(last peak_source))"
check "its source is the kernel's page counts" test "$(last peak_source)" = "page counts"
check "its time is inside the spike, by the workload's own clock" \
	test "$at" -ge "$t0" -a "$at" -le "$t1"
check "its height is the spike's (200 MiB to 200 MiB + 16 MiB)" \
	test "$peak" -ge $((200 * MiB)) -a "$peak" -le $((216 * MiB))
hwm=$(q "select max(hwm) from sample where run_id = (select max(id) from run)")
diag "VmHWM sampled after it: $hwm bytes"
check "it agrees with VmHWM, read at the next sample, within 1 MiB" \
	test $((peak - hwm)) -le "$MiB" -a $((hwm - peak)) -le "$MiB"
check "the summary gives its time to the millisecond and its source" grep -Eq \
	'^peak +[0-9.]+ MiB at [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} \(\+[0-9]+\.[0-9]{3}s\), from the kernel.s page counts' "$ERR"
show_json
check "show --json: peak_rss_at to the microsecond, and its source" \
	sh -c "echo '$(sfield peak_rss_at)' | grep -Eq '\.[0-9]{6}Z\$' && test '$(sfield peak_source)' = 'page counts'"

# --- the stage of the peak: between the marks around the spike
expect_exit 0 "a spike between two marks, at -i 1s" "$RSW" record -q -i 1s -- sh -c \
	'"$0" mark -p $$ load; "$1" spike 200M; "$0" mark -p $$ compute; sleep 1.2; "$0" mark -p $$ write' \
	"$RSW" "$HOG"
"$RSW" show >"$T/stage.show"
sed -n '/^marks/,/^$/p' "$T/stage.show" | sed 's/^/# /'
check "show: the peak's row is between the marks 'load' and 'compute'" sh -c \
	"sed -n '/^marks/,/^\$/p' '$T/stage.show' | grep -E '^  (A|B|\\^) ' | cut -c3 | tr -d '\n' | grep -qx 'A^B'"
check "  and says it is the run's peak, at its own time (not 'reached by then')" sh -c \
	"grep -Eq \"^  \\^ \\+([0-9]+ms|[0-9]+\\.[0-9]s) +2[0-9][0-9]\\.[0-9] MiB +the run's peak\\\$\" '$T/stage.show' &&
	 ! grep -q 'reached by then' '$T/stage.show'"
expect_exit 0 "the same with --no-bpf" "$RSW" record -q --no-bpf -i 1s -- sh -c \
	'"$0" mark -p $$ load; "$1" spike 200M; "$0" mark -p $$ compute; sleep 1.2; "$0" mark -p $$ write' \
	"$RSW" "$HOG"
"$RSW" show >"$T/stage2.show"
# (read at a sample after 'compute' or from the spike's exit record as it ends, before
# or after the mark process stamps 'compute': which, depends on the machine's load)
check "--no-bpf: the peak is placed when it was read, and show says it was reached by then" \
	sh -c "sed -n '/^marks/,/^\$/p' '$T/stage2.show' | grep -E '^  (A|B|C|\\^) ' | cut -c3 | tr -d '\n' | grep -Eqx 'A\\^BC|AB\\^C' &&
		grep -q \"the run's peak, reached by then (\" '$T/stage2.show'"

# --- model RUN says between which marks the peak fell: at the engine's time
if ldd "$BUILD/librsswatch.so" 2>/dev/null | grep -q libasan; then
	skip "model RUN: the peak between 'load' and 'compute' (python3 cannot load a sanitizer build's library)"
else
	PYTHONPATH=$TOP/bindings/python RSSWATCH_LIB=$BUILD/librsswatch.so \
		"$RSW" record -q -i 1s -- python3 tests/bin/stage_spike.py >"$OUT" 2>"$ERR"
	"$RSW" model last 'rss ~ counter.held_bytes' >"$T/model.out" 2>&1
	diag "$(grep '^peak' "$T/model.out")"
	check "model RUN: the spike's peak fell between 'load' and 'compute' (the kernel's time)" \
		grep -Eq '^peak +2[0-9][0-9]\.[0-9] MiB at .*between mark "load" .* and mark "compute"' "$T/model.out"
fi

# --- each stage's own peak: two spikes of a launched command, each between two marks,
# each timed by the workload's own clock
rm -f "$T/st"
expect_exit 0 "two spikes between three marks, at -i 1s" "$RSW" record -q -i 1s -- sh -c \
	'"$0" mark -p $$ load; "$1" stamp "$2" spike 200M stamp "$2"; "$0" mark -p $$ compute
	"$1" stamp "$2" spike 80M stamp "$2"; "$0" mark -p $$ write' "$RSW" "$HOG" "$T/st"
run=$(last id)
stage() { q "select $1 from mark where run_id = $run and label = '$2'"; }
diag "stage peaks: $(q "select label || ' ' || ifnull(stage_peak, 'NULL') || ' at ' || ifnull(stage_peak_at, 'NULL') from mark where run_id = $run" | tr '\n' ';')"
diag "spikes: $(tr '\n' ' ' <"$T/st")"
check "load: its stage's peak is the 200 MiB spike (200 to 216 MiB)" \
	test "$(stage stage_peak load)" -ge $((200 * MiB)) -a "$(stage stage_peak load)" -le $((216 * MiB))
check "  at a time inside it, by the workload's clock" \
	test "$(stage stage_peak_at load)" -ge "$(sed -n 1p "$T/st")" -a "$(stage stage_peak_at load)" -le "$(sed -n 2p "$T/st")"
check "compute: its own, the 80 MiB spike (80 to 96 MiB), not the run's" \
	test "$(stage stage_peak compute)" -ge $((80 * MiB)) -a "$(stage stage_peak compute)" -le $((96 * MiB))
check "  at a time inside it" \
	test "$(stage stage_peak_at compute)" -ge "$(sed -n 3p "$T/st")" -a "$(stage stage_peak_at compute)" -le "$(sed -n 4p "$T/st")"
# (the stage holds the `rsswatch mark` that opened it: about 3 MiB, 25 with a sanitizer)
check "write: what was left after both, not a spike (under 64 MiB)" \
	test "$(stage stage_peak write)" -lt $((64 * MiB))
"$RSW" show >"$T/stages.show"
sed -n '/^marks/,/^$/p' "$T/stages.show" | sed 's/^/# /'
check "show: each mark's row has its stage's peak and its time" sh -c \
	"grep -q 'STAGE PEAK at' '$T/stages.show' &&
	 grep -Eq '^  B \+[0-9.]+m?s .* (8[0-9]|9[0-5])\.[0-9] MiB \+[0-9.]+m?s +compute\$' '$T/stages.show'"
show_json
check "show --json: each mark's stage_peak_bytes and stage_peak_time, to the microsecond" sh -c \
	"test '$(jget "$T/show.json" '$.marks[1].stage_peak_bytes')' = '$(stage stage_peak compute)' &&
	 echo '$(jget "$T/show.json" '$.marks[1].stage_peak_time')' | grep -Eq '\\.[0-9]{6}Z\$'"
"$RSW" report $run -o "$T/stages.html" 2>/dev/null
check "report: the marks table has each stage's peak" sh -c \
	"grep -q '>Stage peak</th>' '$T/stages.html' &&
	 grep -Eq 'compute</td>.*<td class=\"r\">(8[0-9]|9[0-5])\.[0-9] MiB</td><td class=\"r\">\\+[0-9.]+m?s</td></tr>' '$T/stages.html'"
check "report: the run's peak is a row of the marks table, between 'load' and 'compute'" sh -c \
	"grep -oE '<b>the run.s peak</b>|<td class=\"l\">(load|compute|write)<' '$T/stages.html' |
	 sed 's/<[^>]*>//g; s/<//' | tr '\n' ' ' | grep -qx 'load the run.s peak compute write '"
check "report: its chart marks the compute stage's own peak, named on hover" \
	grep -Eq '<title>stage compute: its peak (8[0-9]|9[0-5])\.[0-9] MiB at \+[0-9.]+m?s, from the kernel' \
	"$T/stages.html"
"$RSW" plot $run -o "$T/stages.svg" 2>/dev/null
# the triangle's tip (M x y h10 l-5 8: the tip at y + 8) inside the plot: y above its
# x axis (the largest y of the grid's lines) and below its top
tip=$(sed -n 's/.*<g><path d="M\([0-9.]*\) \([0-9.]*\)h10l-5 8z".*<title>stage compute:.*/\2/p' \
	"$T/stages.svg" | head -n 1)
check "plot: the compute stage's peak is drawn once, a triangle in the legend too" sh -c \
	"test \$(grep -c '<title>stage compute: its peak' '$T/stages.svg') = 1 &&
	 grep -q \"a stage's own peak (kernel)\" '$T/stages.svg'"
check "  its tip inside the plot (y $tip)" sh -c "test -n '$tip' &&
	awk -v y='$tip' 'BEGIN { exit !(y + 8 > 20 && y + 8 < 460) }'"
expect_exit 0 "the same with --no-bpf" "$RSW" record -q --no-bpf -i 1s -- sh -c \
	'"$0" mark -p $$ load; "$1" spike 200M; "$0" mark -p $$ compute' "$RSW" "$HOG"
check "--no-bpf: no stage peaks stored, and show has no such column" sh -c \
	"test \"\$(sqlite3 '$RSSWATCH_DB' 'select count(stage_peak) from mark where run_id = (select max(id) from run)')\" = 0 &&
	 ! '$RSW' show | grep -q 'STAGE PEAK'"

# --- an attached process's stage before it changes a page: its size counts there, from
# when it was attached, not from its next change
rm -f "$T/go1" "$T/go2" "$T/d0" "$T/d1"
spawn hog "$HOG" +48M touch "$T/d0" await "$T/go1" spike 100M touch "$T/d1" await "$T/go2"
hog=$!
wait_until 30 test -e "$T/d0"
spawn att "$RSW" record -q -i 1s -p $hog
rec=$!
wait_until 30 sh -c "'$RSW' mark -p $hog idle 2>/dev/null"
"$RSW" mark -p $hog spike
touch "$T/go1"
wait_until 30 test -e "$T/d1"
"$RSW" mark -p $hog end
touch "$T/go2"
finish $rec
check "attached: the recording ended with its target" test "$RC" = 0
run=$(last id)
diag "stage peaks: $(q "select label || ' ' || ifnull(stage_peak, 'NULL') from mark where run_id = $run" | tr '\n' ';')"
check "attached: a stage before its first page change has its 48 MiB (48 to 56 MiB), not 0" \
	test "$(stage stage_peak idle)" -ge $((48 * MiB)) -a "$(stage stage_peak idle)" -le $((56 * MiB))
check "  the spike's stage has the spike on its 48 MiB (148 to 164 MiB)" \
	test "$(stage stage_peak spike)" -ge $((148 * MiB)) -a "$(stage stage_peak spike)" -le $((164 * MiB))

# --- a set whose members peak one after the other
expect_exit 0 "two children spiking 150 MiB one after the other" "$RSW" record -q -i 1s -- \
	sh -c '"$0" spike 150M; "$0" spike 150M' "$HOG"
peak=$(last peak_rss)
own=$(q "select coalesce(sum(peak_rss), 0) from process where run_id = (select max(id) from run)")
diag "set peak $peak bytes; the members' own peaks sum to $own"
check "the set's peak is one spike and the others' bases, from page counts" \
	test "$peak" -ge $((150 * MiB)) -a "$peak" -le $((182 * MiB)) -a "$(last peak_source)" = "page counts"
check "... not the sum of the members' peaks" test "$own" -ge $((300 * MiB))

# --- attached after an old, higher peak: a later spike below it is seen
spawn hog "$HOG" +300M - touch "$T/ready" await "$T/go" stamp "$T/st2" spike 100M \
	stamp "$T/st2" sleep 1500ms
hog=$!
wait_until 20 test -e "$T/ready"
"$RSW" record -q -i 1s -p "$hog" >"$T/att.out" 2>"$T/att.err" &
rec=$!
wait_until 20 sh -c "test \"\$(sqlite3 '$RSSWATCH_DB' 'select samples from run where pid = $hog' 2>/dev/null)\" -ge 1"
touch "$T/go"
wait "$rec"
rc=$?
check "attached: the recording ended with the target" test "$rc" = 0
peak=$(last peak_rss)
at=$(last peak_rss_at)
diag "hwm_before $(last hwm_before); peak $peak at $at; spike $(tr '\n' ' ' <"$T/st2")"
check "attached: the 100 MiB spike below the old 300 MiB VmHWM is the peak" \
	test "$peak" -ge $((100 * MiB)) -a "$peak" -le $((116 * MiB))
check "attached: inside the spike" \
	test "$at" -ge "$(sed -n 1p "$T/st2")" -a "$at" -le "$(sed -n 2p "$T/st2")"
check "attached: no 'blind' line, the engine saw between samples" \
	sh -c "! grep -q '^blind' '$T/att.err'"

# --- --follow: one engine for every instance, each run with its own figures
# Two instances one after the other: the first spikes 300 MiB, the second 100 MiB, each
# once its run has its first sample. The engine is loaded once, before the first
# instance is looked for; the second run's peak must not be the first's.
tag=$$
kruns() { q "select count(*) from run where target like '%kfol-$tag%' and samples >= 1"; }
kended() { q "select count(*) from run where target like '%kfol-$tag%' and ended_at is not null"; }
spawn fol "$RSW" record -q -i 1s -n "^kfol-$tag" --follow
fol=$!
HOG="$HOG" T="$T" NAME="kfol-$tag" bash -c '
	( exec -a "$NAME" "$HOG" touch "$T/f1.ready" await "$T/f1.go" stamp "$T/f1.st" \
		spike 300M stamp "$T/f1.st" )
	( exec -a "$NAME" "$HOG" touch "$T/f2.ready" await "$T/f2.go" stamp "$T/f2.st" \
		spike 100M stamp "$T/f2.st" )' >/dev/null 2>&1 &
sup=$!
wait_until 20 eval 'test -e "$T/f1.ready" && test "$(kruns)" -ge 1'
touch "$T/f1.go"
wait_until 20 eval 'test -e "$T/f2.ready" && test "$(kruns)" -ge 2'
touch "$T/f2.go"
wait_until 20 eval 'test "$(kended)" -ge 2'
wait "$sup"
kill -INT "$fol"
finish "$fol"
check "--follow: both instances recorded, the recorder stopped cleanly" \
	test "$(kended)" = 2 -a "$RC" = 0
fpeak() { q "select peak_rss from run where target like '%kfol-$tag%' order by id limit 1 offset $1"; }
fat() { q "select peak_rss_at from run where target like '%kfol-$tag%' order by id limit 1 offset $1"; }
fsrc() { q "select peak_source from run where target like '%kfol-$tag%' order by id limit 1 offset $1"; }
diag "instance 1: $(fpeak 0) at $(fat 0) ($(fsrc 0)); instance 2: $(fpeak 1) at $(fat 1) ($(fsrc 1))"
check "--follow: the first instance's peak is its 300 MiB spike, from page counts" \
	test "$(fpeak 0)" -ge $((300 * MiB)) -a "$(fpeak 0)" -le $((316 * MiB)) -a "$(fsrc 0)" = "page counts"
check "--follow: the second's is its own 100 MiB spike, not the first's" \
	test "$(fpeak 1)" -ge $((100 * MiB)) -a "$(fpeak 1)" -le $((116 * MiB))
check "--follow: ... at a time inside that spike" \
	test "$(fat 1)" -ge "$(sed -n 1p "$T/f2.st")" -a "$(fat 1)" -le "$(sed -n 2p "$T/f2.st")"

# --- -g: a cgroup's members, as they move in and out
# C starts in the cgroup and is moved out before it spikes 300 MiB, and ends once a
# sample has seen it gone; D starts outside and is moved in before it spikes 200 MiB,
# both between two samples at 1 s; E stays in it. The cgroup's peak is D's spike, from
# page counts: C's went with it (and its exit record is not the run's), D's came.
. tests/t/memcg.sh
cgdir=$(memcg_dir)
if [ -n "$cgdir" ] && mkdir "$cgdir/t83-$$" 2>/dev/null; then
	cg=$cgdir/t83-$$
	at_exit "rmdir '$cg' 2>/dev/null"
	rel=${cg#/sys/fs/cgroup/memory}
	[ "$rel" = "$cg" ] && rel=${cg#/sys/fs/cgroup}
	sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" touch "$3/c.ready" await "$3/c.go" spike 300M touch "$3/c.done" await "$3/c.end"' \
		- "$cg" "$HOG" "$T" &
	pc=$!
	# E stays in it throughout: the cgroup is never empty (that would end the run)
	sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" touch "$3/e.ready" await "$3/e.end"' - "$cg" "$HOG" "$T" &
	pe=$!
	"$HOG" touch "$T/d.ready" await "$T/d.go" stamp "$T/d.st" spike 200M stamp "$T/d.st" \
		touch "$T/d.done" await "$T/d.end" &
	pd=$!
	wait_until 20 eval 'test -e "$T/c.ready" -a -e "$T/d.ready" -a -e "$T/e.ready"'
	spawn cgrec "$RSW" record -q -g "$rel" -i 1s
	cgrec=$!
	cgruns() { q "select count(*) from run where mode = 'cgroup' and target = '$rel' and samples >= 1"; }
	wait_until 20 eval 'test "$(cgruns)" -ge 1'
	echo "$pc" >"$cgdir/cgroup.procs"
	touch "$T/c.go"
	wait_until 20 test -e "$T/c.done"
	# C ends once a sample has seen it gone from the cgroup: its exit record is not the
	# cgroup's
	n0=$(q "select samples from run where mode = 'cgroup' and target = '$rel'")
	wait_until 20 eval 'test "$(q "select samples from run where mode = '"'cgroup'"' and target = '"'$rel'"'")" -ge $((n0 + 2))'
	touch "$T/c.end"
	wait "$pc"
	# F is moved out, spikes 300 MiB and ends before any sample can see it gone: the
	# engine saw it leave
	sh -c 'echo $$ >"$1/cgroup.procs"; exec "$2" touch "$3/f.ready" await "$3/f.go" spike 300M' \
		- "$cg" "$HOG" "$T" &
	pf=$!
	wait_until 20 test -e "$T/f.ready"
	n0=$(q "select samples from run where mode = 'cgroup' and target = '$rel'")
	wait_until 20 eval 'test "$(q "select samples from run where mode = '"'cgroup'"' and target = '"'$rel'"'")" -ge $((n0 + 2))'
	echo "$pf" >"$cgdir/cgroup.procs"
	touch "$T/f.go"
	wait "$pf"
	echo "$pd" >"$cg/cgroup.procs"
	touch "$T/d.go"
	wait_until 20 test -e "$T/d.done"
	touch "$T/d.end" "$T/e.end"
	wait "$pd" "$pe"
	finish "$cgrec"
	peak=$(last peak_rss)
	at=$(last peak_rss_at)
	diag "-g: rc $RC, peak $peak at $at ($(last peak_source)); D's spike $(tr '\n' ' ' <"$T/d.st")"
	check "-g: the recording ended with the cgroup's last process" test "$RC" = 0
	check "-g: the peak is D's 200 MiB spike, moved in, from page counts" \
		test "$peak" -ge $((200 * MiB)) -a "$peak" -le $((216 * MiB)) -a "$(last peak_source)" = "page counts"
	check "-g: ... at a time inside it" \
		test "$at" -ge "$(sed -n 1p "$T/d.st")" -a "$at" -le "$(sed -n 2p "$T/d.st")"
	check "-g: C is stored as moved out ('left'), its exit's 300 MiB not its peak" test \
		"$(q "select ended || ' ' || (peak_rss < 100 * 1048576) from process where run_id = (select max(id) from run) and pid = $pc")" = "left 1"
	check "-g: so is F, which ended before a sample saw it gone" test \
		"$(q "select ended || ' ' || (peak_rss < 100 * 1048576) from process where run_id = (select max(id) from run) and pid = $pf")" = "left 1"
else
	skip "-g: no memory cgroup could be made here"
fi

# --- without it: --no-bpf, a kernel without rss_stat, not root
expect_exit 0 "--no-bpf" "$RSW" record -v -q -i 1s --no-bpf -- "$HOG" spike 100M sleep 1200ms
check "--no-bpf: no engine, the peak from VmHWM" sh -c \
	"! grep -qF \"$ENGINE\" '$ERR' && test '$(last peak_source)' != 'page counts' && test $(last peak_rss) -ge $((100 * MiB))"

RSSWATCH_TEST_KPEAK_TRACEPOINT=rss_stat_gone
export RSSWATCH_TEST_KPEAK_TRACEPOINT
expect_exit 0 "a kernel without the tracepoint (simulated)" "$RSW" record -v -q -i 1s -- \
	"$HOG" spike 100M sleep 1200ms
unset RSSWATCH_TEST_KPEAK_TRACEPOINT
check "... -v names it in one line" grep -q \
	"^rsswatch: no exact peaks from the kernel: the eBPF engine cannot run: cannot attach to the tracepoint rss_stat_gone" "$ERR"
check "... and the run is recorded as before" sh -c \
	"test '$(last peak_source)' != 'page counts' && test $(last peak_rss) -ge $((100 * MiB))"

RSSWATCH_TEST_KPEAK_VICTIM=mark_victim_gone
export RSSWATCH_TEST_KPEAK_VICTIM
expect_exit 0 "a kernel whose oom:mark_victim the engine cannot read (simulated)" \
	"$RSW" record -v -q -i 1s -- "$HOG" spike 100M sleep 1200ms
unset RSSWATCH_TEST_KPEAK_VICTIM
check "... -v says OOM kills come from the kernel log only" grep -q \
	"^rsswatch: OOM kills from the kernel log only: the engine cannot hear oom:mark_victim" "$ERR"
check "... and the peaks still come from the page counts" \
	test "$(last peak_source)" = "page counts"
check "with the tracepoint, -v says nothing of the kind" sh -c \
	"$RSW record -v -q -- /bin/true 2>&1 | grep -c 'kernel log only' | grep -qx 0"

mkdir -m 700 "$T/nobody"
chown nobody "$T/nobody"
chmod 755 "$BUILD" "$BUILD/tests" "$BUILD/tests/bin" 2>/dev/null
expect_exit 0 "not root" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	env RSSWATCH_DB="$T/nobody/db" "$RSW" record -v -q -- "$HOG" sleep 100ms
check "... -v says it needs root" grep -q \
	"^rsswatch: no exact peaks from the kernel: the eBPF engine cannot run: it needs root" "$ERR"

done_testing
