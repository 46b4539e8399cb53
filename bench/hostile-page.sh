#!/bin/sh
# The two attacks of tests/t/t77-hostile-page.sh at full size, on two builds side by
# side (docs/dev/BENCHMARKS.md section 16). Run as root after `make tests-built` in both:
#
#   bench/hostile-page.sh OLD_BUILD NEW_BUILD      e.g. /tmp/old/build build
#
# 1. /dev/shm flood: another uid squats the page name of a target that does not use
#    the library, makes 100,000 files at its fallback names and changes the directory
#    every 50 ms; each build records it for 8 s at -i 10ms: samples stored, and the
#    recorder's CPU (/usr/bin/time; the target is not its child).
# 2. Counter flood: another uid's program adds to 64 counters as fast as it can for
#    10 s, recorded at -i 1ms: counter rows and database size, beside an idle target
#    recorded the same 10 s.
# The page directory is a sticky directory on /dev/shm; the helper programs are the
# new build's (tests/bin/hostile, memhog).
set -u
[ $# -eq 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD" >&2; exit 2; }
OLD=$1 NEW=$2
H=$NEW/tests/bin/hostile HOG=$NEW/tests/bin/memhog
EVIL=${EVIL:-61390}
AS_EVIL="setpriv --reuid=$EVIL --regid=$EVIL --clear-groups"
W=$(mktemp -d /tmp/hostile-page.XXXXXX)
chmod 1777 "$W"
DBD=$W/db
mkdir -m 700 "$DBD"
SHM=$(mktemp -d /dev/shm/hostile-page.XXXXXX)
chmod 1777 "$SHM"
trap 'touch "$W/stop" "$W/go"; sleep 0.2; rm -rf "$W" "$SHM"' EXIT
export RSSWATCH_SHM_DIR="$SHM"

"$HOG" await "$W/go" &
T=$!
$AS_EVIL "$H" shmflood "$T" 100000 "$W/ready" "$W/stop" &
F=$!
i=0
while [ ! -e "$W/ready" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
for b in old new; do
	[ $b = old ] && bin=$OLD/rsswatch || bin=$NEW/rsswatch
	cpu=$(/usr/bin/time -f "%U %S" "$bin" record -q -i 10ms -d 8s --db "$DBD/$b.db" -p "$T" 2>&1 >/dev/null | tail -1)
	echo "$b: /dev/shm flood: $(sqlite3 "$DBD/$b.db" 'select count(*) from sample') samples in 8 s at -i 10ms (800 asked); recorder CPU user+sys: $cpu s"
done
touch "$W/stop" "$W/go"
wait "$F" "$T"
for b in old new; do
	[ $b = old ] && bin=$OLD/rsswatch || bin=$NEW/rsswatch
	"$bin" record -q -i 1ms -d 10s --db "$DBD/idle-$b.db" -- "$HOG" await "$W/never" 2>/dev/null
	"$bin" record -q -i 1ms --db "$DBD/c-$b.db" -- $AS_EVIL "$H" counters 10000 >/dev/null 2>&1
	echo "$b: counter flood: $(sqlite3 "$DBD/c-$b.db" 'select count(*) from counter') counter rows in 10 s at -i 1ms, database $(stat -c %s "$DBD/c-$b.db") bytes; idle: $(stat -c %s "$DBD/idle-$b.db") bytes"
done
