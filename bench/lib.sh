# Shell helpers of the benchmark scripts (sourced: . bench/lib.sh).

# median: the median of the numbers on standard input, one a line
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# exits_per_s: the host's process exits per second over 2 s, from /proc/stat's count
exits_per_s() {
	a=$(awk '/^processes/ { print $2 }' /proc/stat); sleep 2
	b=$(awk '/^processes/ { print $2 }' /proc/stat); echo $(((b - a) / 2))
}

# stacks_prog NAME: the command line (for eval) of a program of the --stacks benchmarks
# (bench/stacks-cost.sh, bench/stacks-incontext.sh: they set $loop, the mmap loop, $tmp,
# holding in.txt, and $B, the build): mmap, xz, gcc, python or big.
stacks_prog() {
	case $1 in
	mmap) echo "$loop 20000 1024" ;;
	xz) echo "xz -6 -T1 -c $tmp/in.txt" ;;
	gcc) echo "gcc -O2 -Isrc -I$B/gen -c src/render/svg.c -o $tmp/svg.o" ;;
	python) echo "/usr/bin/python3 -c 'x = [str(i) * 4 for i in range(2000000)]'" ;;
	big) echo "/usr/bin/python3 -c 'for i in range(50): b = b\"x\" * (64 << 20)'" ;;
	esac
}
