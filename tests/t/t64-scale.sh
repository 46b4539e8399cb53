#!/bin/sh
# rsswatch model on examples/scale, whose peak is 64 MiB + N x 16 MiB (plus the
# process's own MiB or two): recorded at four values of N with --param, the model must
# recover the slope and the intercept within 5% and predict the largest N under a
# budget; where a memory cgroup can be made, that N is run under the budget as a limit
# (it must fit) and the next one too (it must be OOM-killed). Then model -o FILE.svg:
# a well-formed picture with the runs, the line, the bands and the budget.
. tests/t/lib.sh

SCALE="$BUILD/examples/scale"
if [ ! -x "$SCALE" ]; then
	not_ok "examples/scale is built (make tests-built)"
	done_testing
	exit 1
fi
MIB=1048576

for n in 1 2 4 8; do
	"$RSW" record -q -i 20ms --param n=$n -- "$SCALE" $n --hold 200 >/dev/null 2>&1
done
run "$RSW" model 'peak ~ n' --budget 300M --json
check "model --json exits 0" test "$RC" -eq 0
slope=$(sed -n 's/.*"term":"n","estimate":\([0-9.e+]*\),.*/\1/p' "$OUT")
icpt=$(sed -n 's/.*"term":"intercept","estimate":\([0-9.e+-]*\),.*/\1/p' "$OUT")
check "slope: 16 MiB per n within 5% ($slope)" \
	awk -v s="${slope:-0}" -v m=$MIB 'BEGIN { exit !(s > 0.95 * 16 * m && s < 1.05 * 16 * m) }'
# The intercept is what n=0 needs: 64 MiB and the process itself (a MiB or two, more
# under SANITIZE=1), so it is held against a recording of n=0 (apart from the model's).
"$RSW" record -q -i 20ms --db "$T/zero.db" -- "$SCALE" 0 --hold 200 >/dev/null 2>&1
zero=$(sqlite3 "$T/zero.db" 'SELECT peak_rss FROM run')
if awk -v s="${icpt:-0}" -v z="${zero:-0}" -v m=$MIB \
	'BEGIN { d = s - z; if (d < 0) d = -d; exit !(z > 64 * m && d < 0.05 * 64 * m) }'; then
	ok "intercept: the peak of n=0 ($zero) within 5% of 64 MiB ($icpt)"
else
	not_ok "intercept: the peak of n=0 ($zero) within 5% of 64 MiB ($icpt)"
	# what the peaks were made of, and by which process
	diag "$(sqlite3 "$T/zero.db" 'SELECT peak_rss, peak_source, peak_process_rss,
		peak_process_pid, peak_process_comm, samples, cgroup FROM run')"
	diag "$("$RSW" show --db "$T/zero.db" 2>&1 | head -12)"
	diag "$("$RSW" ls 2>&1 | head -8)"
fi
# 300 MiB: 64 + 14 x 16 = 288 MiB (plus the process itself) fits, 15 x 16 = 304 does not
largest=$(sed -n 's/.*"largest_fitting":\([0-9]*\),.*/\1/p' "$OUT")
check "largest n under 300M predicted as 14 ($largest)" test "${largest:-0}" -eq 14

# The prediction, tried for real under a limit of the budget.
. tests/t/memcg.sh
cgdir=$(memcg_dir)
if [ "$(id -u)" -eq 0 ] && [ -n "$cgdir" ] && [ -d "$cgdir" ]; then
	"$RSW" record -q -i 20ms --memory-limit 300M -- "$SCALE" 14 --hold 100 >/dev/null 2>&1
	check "n=14 under a 300M limit: exits 0" test $? -eq 0
	"$RSW" record -q -i 20ms --memory-limit 300M -- "$SCALE" 15 --hold 100 >/dev/null 2>&1
	check "n=15 under a 300M limit: OOM-killed (137)" test $? -eq 137
	# not runs of the model: they have no n, and are left out as such
	run "$RSW" model 'peak ~ n' --budget 300M
	check "runs without the parameter are left out with the reason" \
		grep -q "^left out  run [0-9]*: no parameter n" "$OUT"
else
	skip "n=14 under a 300M limit (needs root and a memory cgroup)"
	skip "n=15 under a 300M limit"
	skip "runs without the parameter are left out"
fi

# The picture.
svg="$T/fit.svg"
run "$RSW" model 'peak ~ n' 1 2 3 4 --budget 300M -o "$svg"
check "model -o: exits 0 and still prints the text" grep -q '^predict   n=14 needs ' "$OUT"
check "the SVG is well-formed XML" xmllint --noout "$svg"
check "one point per run (4), each with its figures" \
	test "$(grep -c '<circle cx="[0-9.]*" cy="[0-9.]*" r="4" fill="#1d4e89" stroke="#fff"><title>run ' "$svg")" -eq 4
check "the fitted line, the two bands and the budget line" \
	sh -c 'grep -q "stroke=\"#1d4e89\" stroke-width=\"2\"/>" "$1" &&
	       grep -q "<path fill=\"#7fa6d1\"" "$1" && grep -q "<path fill=\"#dbe7f4\"" "$1" &&
	       grep -q ">budget 300.0 MiB<" "$1"' - "$svg"
check "the largest n that fits is marked" grep -q '>n=14 fits (needs up to ' "$svg"
check "axes: bytes on y, n on x" \
	sh -c 'grep -q ">100 MiB</text>" "$1" && grep -q ">peak RSS</text>" "$1" &&
	       grep -q "fill=\"#666\">n</text>" "$1"' - "$svg"
# every point and label lies on the canvas
check "everything on the canvas" awk '
	/<svg / { match($0, /width="[0-9]+"/); W = substr($0, RSTART + 7, RLENGTH - 8)
		  match($0, /height="[0-9]+"/); H = substr($0, RSTART + 8, RLENGTH - 9) }
	/<(circle|text) / { s = $0
		if (match(s, / (cx|x)="-?[0-9.]+"/)) { v = substr(s, RSTART, RLENGTH); gsub(/[^0-9.-]/, "", v); if (v + 0 < 0 || v + 0 > W + 0) bad++ }
		if (match(s, / (cy|y)="-?[0-9.]+"/)) { v = substr(s, RSTART, RLENGTH); gsub(/[^0-9.-]/, "", v); if (v + 0 < 0 || v + 0 > H + 0) bad++ } }
	END { exit !(W > 0 && H > 0 && bad == 0) }' "$svg"
run "$RSW" model 'peak ~ n' 1 2 --budget 300M -o "$svg"
check "too few runs: still a picture, saying so" grep -q '>too few runs to fit<' "$svg"
run "$RSW" model last 'rss ~ counter.x' -o "$svg"
check "-o inside a run: usage error" test "$RC" -eq 2
done_testing
