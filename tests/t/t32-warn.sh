#!/bin/sh
# record --warn: an event and a line when memory crosses the threshold, and again when
# it falls back. Prints TAP.
BUILD=${BUILD:-build}
bin=$BUILD/rsswatch
hog=$BUILD/tests/bin/memhog
if [ ! -x "$bin" ] || [ ! -x "$hog" ]; then
	echo "1..0 # SKIP $bin or $hog not built"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t32.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export RSSWATCH_DB="$tmp/runs.db"
n=0
check() {	# check DESCRIPTION COMMAND...
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; fi
}

"$bin" record -i 20ms --every 1000 --warn 30M -- "$hog" +40M sleep 200ms - sleep 200ms \
	>/dev/null 2>"$tmp/err"
check "exit status 0" test $? -eq 0
"$bin" show --json >"$tmp/json"
check "a warn event when rss reaches 30 MiB" \
	grep -q '"kind":"warn","pid":[0-9]*,"detail":"rss [0-9.]* MiB >= 30.0 MiB"' "$tmp/json"
check "a warn_clear event when it falls back" \
	grep -q '"kind":"warn_clear","pid":[0-9]*,"detail":"rss [0-9.]* MiB < 30.0 MiB"' "$tmp/json"
check "a line says so" grep -q ' WARNING memory over the threshold: rss ' "$tmp/err"
check "a line says it fell back" grep -q ' memory back under the threshold: rss ' "$tmp/err"

"$bin" record -q -i 20ms --warn 99% -- "$hog" +1M >/dev/null 2>&1
"$bin" show --json >"$tmp/json"
check "no warn event under a threshold of 99% of MemTotal" sh -c '! grep -q "\"kind\":\"warn" "$1"' - "$tmp/json"

"$bin" record --warn 0 -- true >/dev/null 2>&1
check "--warn 0: usage error" test $? -eq 2
"$bin" record --warn 150% -- true >/dev/null 2>&1
check "--warn 150%: usage error" test $? -eq 2

if [ "$(id -u)" -eq 0 ] && { [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; }; then
	"$bin" record -q -i 20ms --memory-limit 64M --warn 50% -- "$hog" +40M sleep 200ms \
		>/dev/null 2>&1
	"$bin" show --json >"$tmp/json"
	check "a percentage is of the cgroup limit, against the cgroup's usage" \
		grep -q '"kind":"warn","pid":[0-9]*,"detail":"cgroup usage [0-9.]* MiB >= 32.0 MiB (50% of the cgroup limit)"' "$tmp/json"
fi
echo "1..$n"
