#!/bin/sh
# Time to exhaustion while recording (record/eta.h): a target that grows steadily
# toward --memory-limit until the OOM killer takes it; the projection made halfway must
# be within 20% of the time that was actually left. Also --warn-eta (one event, one
# line), the smallest projection in the summary and JSON, no projection for a flat
# target, and bad --warn-eta values. The OOM part needs root and a memory cgroup
# controller. Prints TAP.
. tests/t/lib.sh
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
field() {	# field NAME: the number NAME=... of the warn_eta event's detail
	sed -n "s/.*\"kind\":\"warn_eta\",\"pid\":[0-9]*,\"detail\":\"[^\"]*\<$1=\([0-9.]*\).*/\1/p" "$T/json"
}

"$RSW" record --warn-eta 0 -- true >/dev/null 2>&1
check "--warn-eta 0: usage error" test $? -eq 2
"$RSW" record --warn-eta soon -- true >/dev/null 2>&1
check "--warn-eta soon: usage error" test $? -eq 2

# A flat target (after its first allocation) gets no projection, even asked to warn
# an hour ahead: about 12 points of 470 ms, past the 8 a projection needs.
"$RSW" record -i 50ms --every 10 --warn-eta 1h -- "$HOG" +16M sleep 6s >"$T/out" 2>"$T/err"
check "flat target: exit status 0" test $? -eq 0
"$RSW" show --json >"$T/json"
check "flat target: no warn_eta event" sh -c '! grep -q "\"kind\":\"warn_eta\"" "$1"' - "$T/json"
check "flat target: min_eta_s is null" grep -q '"min_eta_s":null,"min_eta_at":null,"min_eta_limit":null' "$T/json"
check "flat target: no 'full in' in the live lines" sh -c '! grep -q "full in" "$1"' - "$T/err"
check "flat target: live lines were printed" grep -q ' rss [0-9.]* MiB ' "$T/err"

# A target that grew once, 5 s in, and stopped: the window still rises as a whole
# (about 10 flat points, then 10 higher ones), but the rise stopped, and the host's
# free memory is far beyond what a few seconds of rise can say anything about.
"$RSW" record -i 50ms --every 10 --warn-eta 1h -- "$HOG" sleep 5s +100M sleep 5s >"$T/out" 2>"$T/err"
check "one step: exit status 0" test $? -eq 0
"$RSW" show --json >"$T/json"
check "one step: no warn_eta event" sh -c '! grep -q "\"kind\":\"warn_eta\"" "$1"' - "$T/json"
check "one step: min_eta_s is null" grep -q '"min_eta_s":null,"min_eta_at":null,"min_eta_limit":null' "$T/json"
check "one step: no 'full in' in the live lines" sh -c '! grep -q "full in" "$1"' - "$T/err"
check "one step: the step was recorded (peak 100 MiB or more)" \
	test "$(jget "$T/json" '$.peak_rss_bytes')" -ge 104857600

if [ "$(id -u)" -ne 0 ] || [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	diag "the OOM part needs root and a memory cgroup controller"
	done_testing
fi

# 4 MiB/s toward 64 MiB: killed about 16 s in. --warn-eta 8s fires when the projection
# first falls under 8 s: halfway, if the projections are right.
"$RSW" record -i 100ms --every 5 --memory-limit 64M --warn-eta 8s -- "$HOG" grow 256M 4M \
	>"$T/out" 2>"$T/err"
rc=$?
"$RSW" show --json >"$T/json"
check "growing target: OOM-killed (137)" test "$rc" -eq 137
check "growing target: outcome oom_killed" grep -q '"outcome":"oom_killed"' "$T/json"
check "exactly one warn_eta event" test "$(grep -o '"kind":"warn_eta"' "$T/json" | wc -l)" -eq 1
eta=$(field eta_s)
at=$(field elapsed_s)
# the kill's time from the run's start, from the kernel's report
end=$(sed -n 's/.*"oom":\[{"pid":[0-9]*,"comm":"[^"]*","time":"[^"]*","elapsed_s":\([0-9.]*\).*/\1/p' "$T/json")
echo "# projection ${eta}s made at ${at}s; killed at ${end}s"
check "the event says when and how long (eta_s, elapsed_s) and the kill time is known" \
	test -n "$eta" -a -n "$at" -a -n "$end"
check "the projection was made about halfway (30%..70% of the way)" \
	awk -v a="$at" -v e="$end" 'BEGIN { exit !(a >= 0.3 * e && a <= 0.7 * e) }'
check "the projection made halfway is within 20% of the time actually left" \
	awk -v p="$eta" -v a="$at" -v e="$end" \
	'BEGIN { left = e - a; d = p - left; if (d < 0) d = -d; exit !(left > 0 && d <= 0.2 * left) }'
check "the event names the cgroup limit" \
	grep -q '"kind":"warn_eta","pid":[0-9]*,"detail":"eta_s=[0-9.]* elapsed_s=[0-9.]* limit=cgroup limit_bytes=67108864 ' "$T/json"
check "one warning line" test "$(grep -c ' WARNING memory full in ~' "$T/err")" -eq 1
check "the live line shows the projection" grep -q ' cg [0-9.]*/64.0 MiB avail .*, full in ~[0-9.ms]* (cgroup limit)$' "$T/err"
check "JSON: the smallest projection, toward the cgroup limit" \
	grep -Eq '"min_eta_s":[0-9.]+,"min_eta_at":"[0-9T:.-]+Z","min_eta_limit":"cgroup"' "$T/json"
check "the summary states the smallest projection" \
	grep -q '^eta       smallest projection: full in ~[0-9.ms]* (cgroup limit) at ' "$T/err"
"$RSW" show >"$T/show"
check "show states it too" grep -q '^eta       smallest projection: full in ~' "$T/show"
done_testing
