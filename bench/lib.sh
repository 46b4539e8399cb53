# Shell helpers of the benchmark scripts (sourced: . bench/lib.sh).

# median: the median of the numbers on standard input, one a line
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# exits_per_s: the host's process exits per second over 2 s, from /proc/stat's count
exits_per_s() {
	a=$(awk '/^processes/ { print $2 }' /proc/stat); sleep 2
	b=$(awk '/^processes/ { print $2 }' /proc/stat); echo $(((b - a) / 2))
}
