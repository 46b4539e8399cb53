#!/bin/sh
# The peak of real programs, four ways, side by side in one run:
#
#   make && bench/peaks.sh [REPEATS]        (pidstat: scripts/deps.sh bench)
#
#   time -v       /usr/bin/time's "Maximum resident set size": wait4's ru_maxrss, the
#                 kernel's own peak of the largest single process (the reference)
#   rsswatch      record -q -i 1s -- PROGRAM (the whole tree, the default)
#   bash loop     the story's loop on the launched pid, once a second:
#                 while kill -0 $PID; do ps -o rss= -p $PID; sleep 1; done
#   pidstat       pidstat -r -p PID 1 on the launched pid
#
# Each program runs once under time, once under rsswatch, and once alone with the loop
# and pidstat watching it together; REPEATS times (3), medians printed. The bash loop and
# pidstat see the launched process only, as they are used. The table (Markdown) goes to
# stdout and to $BUILD/bench/peaks.md.
set -eu
BUILD=${BUILD:-build}
REPEATS=${1:-3}
RSW=$BUILD/rsswatch
[ -x "$RSW" ] || { echo "missing $RSW: run 'make' first" >&2; exit 2; }
for p in /usr/bin/time pidstat python3 gcc sort stress-ng sqlite3; do
	command -v "$p" >/dev/null 2>&1 ||
		{ echo "missing $p: run 'scripts/deps.sh bench' (as root) first" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$BUILD/bench"

# The programs, started through a script that execs them, so the launched pid is the
# program's own (as under a wrapper such as a pyenv shim).
awk 'BEGIN {
	printf "const int tab[] = {"
	for (i = 0; i < 600000; i++) printf "%d,", (i * 7919) % 100003
	print "};"
	for (i = 0; i < 300; i++)
		printf "int f%d(int a, int b) { int s = a; for (int k = 0; k < b; k++) " \
		       "{ s = s * %d + tab[(k + %d) & 1023]; if (s & 1) s ^= b << 3; " \
		       "else s += a >> 2; } return s + %d; }\n", i, i % 97 + 3, i % 61, i
}' >"$tmp/big.c"
head -c 120M /dev/urandom | base64 -w 60 >"$tmp/lines.txt"
cat >"$tmp/prog.sh" <<EOF
case \$1 in
1) exec python3 -c 'x = bytearray(300 << 20)' ;;
2) exec sh -c 'sleep 1.3; python3 -c "x = bytearray(500 << 20)"' ;;
3) exec gcc -O2 -c "$tmp/big.c" -o "$tmp/big.o" ;;
4) exec sort -o /dev/null "$tmp/lines.txt" ;;
5) exec stress-ng -q --vm 1 --vm-bytes 512M --vm-keep --timeout 3s ;;
esac
EOF
names="python3: 300 MiB in about 130 ms
sh -c 'sleep 1.3; python3 ...': 500 MiB late, in a child
gcc -O2 -c, generated 3.6 MB file
sort of 170 MB of random lines
stress-ng --vm 1 --vm-bytes 512M --vm-keep, 3 s"

loop_script='PID=$1
while kill -0 $PID; do ps -o rss= -p $PID; sleep 1; done'

# max_of FILE: the largest number in the first column (0 when none)
max_of() { awk '$1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { print m + 0 }' "$1"; }

# pidstat_max FILE PID: the largest RSS pidstat reported for PID (0 when none)
pidstat_max() {
	awk -v pid="$2" '
		/ PID / && / RSS / { for (i = 1; i <= NF; i++) { if ($i == "PID") p = i; if ($i == "RSS") r = i }; next }
		p && $p == pid && $1 != "Average:" && $r + 0 > m { m = $r + 0 }
		END { print m + 0 }' "$1"
}

for rep in $(seq "$REPEATS"); do
	for n in 1 2 3 4 5; do
		/usr/bin/time -v -o "$tmp/time.txt" sh "$tmp/prog.sh" $n >/dev/null 2>&1
		ref=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$tmp/time.txt")
		echo "$n time $ref" >>"$tmp/raw"

		rm -f "$tmp/rsw.db"*
		"$RSW" record --db "$tmp/rsw.db" -q -i 1s -- sh "$tmp/prog.sh" $n >/dev/null 2>&1
		echo "$n rsswatch $(($(sqlite3 "$tmp/rsw.db" 'SELECT peak_rss FROM run') / 1024))" >>"$tmp/raw"

		sh "$tmp/prog.sh" $n >/dev/null 2>&1 &
		pid=$!
		bash -c "$loop_script" loop "$pid" >"$tmp/loop.out" 2>/dev/null &
		loop=$!
		LC_ALL=C pidstat -r -p "$pid" 1 >"$tmp/pidstat.out" 2>&1 &
		pst=$!
		wait "$pid" || true
		wait "$loop" || true
		# pidstat ends by itself once the pid is gone; give it a second, then stop it
		i=0
		while kill -0 "$pst" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
		kill "$pst" 2>/dev/null || true
		wait "$pst" 2>/dev/null || true
		echo "$n loop $(max_of "$tmp/loop.out")" >>"$tmp/raw"
		echo "$n pidstat $(pidstat_max "$tmp/pidstat.out" "$pid")" >>"$tmp/raw"
	done
done

{
	echo "Peak RSS of real programs, medians of $REPEATS runs each, $(date -u +%Y-%m-%d)," \
		"$(nproc) CPUs, kernel $(uname -r), $(ls -d /proc/[0-9]* | wc -l) processes on the host."
	echo "MiB, and in parentheses % of time -v's figure."
	echo
	echo "$names" | awk -v raw="$tmp/raw" '
		function median(tool, n,   k, i, j, t, v) {
			k = cnt[n, tool]
			for (i = 1; i <= k; i++) v[i] = val[n, tool, i]
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
		}
		function cell(tool, n,   m) {
			m = median(tool, n)
			if (m == 0) return "not seen"
			return sprintf("%.1f (%.1f%%)", m / 1024, 100 * m / ref)
		}
		BEGIN {
			while ((getline line < raw) > 0) {
				split(line, f, " ")
				val[f[1], f[2], ++cnt[f[1], f[2]]] = f[3]
			}
		}
		{ name[NR] = $0 }
		END {
			print "| program | time -v (reference) | rsswatch -i 1s | bash loop, 1 s | pidstat -r 1 |"
			print "|---|---:|---:|---:|---:|"
			for (n = 1; n <= NR; n++) {
				ref = median("time", n)
				printf "| %s | %.1f | %s | %s | %s |\n", name[n], ref / 1024,
					cell("rsswatch", n), cell("loop", n), cell("pidstat", n)
			}
		}'
} >"$BUILD/bench/peaks.md"
cat "$BUILD/bench/peaks.md"
