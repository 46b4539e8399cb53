#!/bin/sh
# The recorder's VmHWM while it records a tree that forks and reaps N short children:
# what it keeps per process ever seen (docs/dev/BENCHMARKS.md, section 18).
# Usage: bench/fork-memory.sh RSSWATCH N [DIR]   (DIR: a private directory for the db)
set -u
RSW=$1
N=$2
DIR=${3:-$(mktemp -d)}
DB="$DIR/fork-memory.db"
rm -f "$DB" "$DB-wal" "$DB-shm"
"$RSW" record -q -i 100ms --db "$DB" -- \
	perl -e 'for (1..'"$N"') { if (!fork) { exit 0 } wait }' >/dev/null 2>&1 &
rp=$!
hwm=0
while kill -0 "$rp" 2>/dev/null; do
	h=$(awk '/^VmHWM/ { print $2 }' "/proc/$rp/status" 2>/dev/null)
	[ -n "$h" ] && hwm=$h
	sleep 0.2
done
rows=$(sqlite3 "$DB" "SELECT count(*) FROM process")
folded=$(sqlite3 "$DB" "SELECT coalesce(max(CAST(substr(detail, 7, instr(detail, ' ') - 7)
	AS INTEGER)), 0) FROM event WHERE kind = 'procs_folded'")
echo "children $N: recorder VmHWM $hwm kB, $rows process rows, $folded folded"
