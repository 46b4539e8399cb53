#!/bin/sh
# bench/gc-cost.sh [RUNS] [SAMPLES]: what retention costs on a large database. A real
# recording and RUNS copies of it with SAMPLES samples each (tests/t/gen-runs.sh: rows
# made by SQL), then on copies of that file: gc --max-db 4M (every run thinned to 1000
# rows), gc --keep 0s, and the same --max-db as a dry run. Prints the file's size before
# and after, wall time and CPU time (bench/rusage) of each.
set -eu
runs=${1:-10}
samples=${2:-100000}
B=${BUILD:-build}
rsw=$B/rsswatch
ru=$B/bench/rusage
[ -x "$rsw" ] && [ -x "$ru" ] && [ -x "$B/tests/bin/memhog" ] || { echo "run 'make bench-bin' first" >&2; exit 2; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
trap 'rm -rf "$tmp"' EXIT
. tests/t/gen-runs.sh

"$rsw" record -q -i 10ms --no-tree --no-cgroup --db "$tmp/base.db" -- \
	"$B/tests/bin/memhog" +4M sleep 200ms spike 32M sleep 200ms exit 0 >/dev/null 2>&1
gen "$tmp/base.db" "$runs" "$samples"
n=$(sqlite3 "$tmp/base.db" "select count(*) from sample")
size() { s=0; for f in "$1" "$1-wal"; do [ -f "$f" ] && s=$((s + $(stat -c %s "$f"))); done; echo $s; }
printf '%s samples in %s runs\n' "$n" $((runs + 1))
printf '%-28s %12s %12s %8s %8s\n' "command" "before" "after" "wall_s" "cpu_s"
for args in "--keep none --max-db 4M" "--keep 0s" "--keep none --max-db 4M --dry-run"; do
	cp "$tmp/base.db" "$tmp/t.db"
	before=$(size "$tmp/t.db")
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$ru" "$rsw" gc --db "$tmp/t.db" $args >/dev/null 2>"$tmp/ru"
	t1=$(date +%s.%N)
	cpu=$(sed -n 's/.*cpu_s=\([0-9.+]*\).*/\1/p' "$tmp/ru" | tr '+' ' ' | awk '{ print $1 + $2 }')
	printf '%-28s %12s %12s %8.2f %8.2f\n' "gc $args" "$before" "$(size "$tmp/t.db")" \
		"$(echo "$t1 - $t0" | bc)" "$cpu"
	rm -f "$tmp/t.db" "$tmp/t.db-wal" "$tmp/t.db-shm"
done
