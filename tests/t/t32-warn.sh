#!/bin/sh
# record --warn: an event and a line when memory crosses the threshold, and again when
# it falls back. Prints TAP.
. tests/t/lib.sh

"$RSW" record -i 20ms --every 1000 --warn 30M -- "$HOG" +40M sleep 200ms - sleep 200ms \
	>/dev/null 2>"$T/err"
check "exit status 0" test $? -eq 0
"$RSW" show --json >"$T/json"
check "a warn event when rss reaches 30 MiB" \
	grep -q '"kind":"warn","pid":[0-9]*,"detail":"rss [0-9.]* MiB >= 30.0 MiB"' "$T/json"
check "a warn_clear event when it falls back" \
	grep -q '"kind":"warn_clear","pid":[0-9]*,"detail":"rss [0-9.]* MiB < 30.0 MiB"' "$T/json"
check "a line says so" grep -q ' WARNING memory over the threshold: rss ' "$T/err"
check "a line says it fell back" grep -q ' memory back under the threshold: rss ' "$T/err"

"$RSW" record -q -i 20ms --warn 99% -- "$HOG" +1M >/dev/null 2>&1
"$RSW" show --json >"$T/json"
check "no warn event under a threshold of 99% of MemTotal" sh -c '! grep -q "\"kind\":\"warn" "$1"' - "$T/json"

"$RSW" record --warn 0 -- true >/dev/null 2>&1
check "--warn 0: usage error" test $? -eq 2
"$RSW" record --warn 150% -- true >/dev/null 2>&1
check "--warn 150%: usage error" test $? -eq 2

if [ "$(id -u)" -eq 0 ] && { [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; }; then
	"$RSW" record -q -i 20ms --memory-limit 64M --warn 50% -- "$HOG" +40M sleep 200ms \
		>/dev/null 2>&1
	"$RSW" show --json >"$T/json"
	check "a percentage is of the cgroup limit, against the cgroup's usage" \
		grep -q '"kind":"warn","pid":[0-9]*,"detail":"cgroup usage [0-9.]* MiB >= 32.0 MiB (50% of the cgroup limit)"' "$T/json"
fi

done_testing
