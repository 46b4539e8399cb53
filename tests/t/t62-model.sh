#!/bin/sh
# run parameters and rsswatch model on real runs of memhog whose memory is 32 MiB per
# unit of a parameter: the slope is recovered, the largest value under a budget is
# predicted, too few runs say so, bad input is one line and exit 2.
. tests/t/lib.sh

for pw in 1 2 3 4; do
	"$RSW" record -q -i 20ms --param pw=$pw --param kind=hog -- "$HOG" "+$((pw * 32))M" \
		sleep 200ms >/dev/null 2>&1
done
run "$RSW" ls --param pw=3 --json
case "$(cat "$OUT")" in
*'"params":{"kind":"hog","pw":3}'*) ok "ls --param filters, JSON carries params with numbers as numbers" ;;
*) not_ok "ls --param filters, JSON carries params with numbers as numbers"; diag_run ;;
esac
check "ls --param keeps only the matching run" test "$(grep -c '"id":' "$OUT")" -eq 1

run "$RSW" model 'peak ~ pw' --json --budget 1G
slope=$(printf '%s' "$(cat "$OUT")" | sed -n 's/.*"term":"pw","estimate":\([0-9.e+]*\),.*/\1/p')
check "model recovers 32 MiB per pw within 5% ($slope)" \
	awk -v s="${slope:-0}" 'BEGIN { exit !(s > 0.95 * 33554432 && s < 1.05 * 33554432) }'
# 1 GiB holds about 31 units of 32 MiB beside a MiB or two of the process itself
largest=$(sed -n 's/.*"largest_fitting":\([0-9]*\),.*/\1/p' "$OUT")
check "largest pw under 1G predicted as 30 or 31 ($largest)" \
	awk -v l="${largest:-0}" 'BEGIN { exit !(l == 30 || l == 31) }'

run "$RSW" model 'peak ~ pw' --budget 200M
case "$(cat "$OUT")" in
*"pw=6 needs "*"(fits, "*"pw=7 needs "*"(does not fit)"*) ok "text prediction under 200M: pw=6 fits, pw=7 does not" ;;
*) not_ok "text prediction under 200M: pw=6 fits, pw=7 does not"; diag_run ;;
esac

run "$RSW" model 'peak ~ pw' 1 2
case "$(cat "$OUT")" in
*"too few runs: 2 usable"*) ok "two runs: too few, says so" ;;
*) not_ok "two runs: too few, says so"; diag_run ;;
esac
check "too few runs: nothing predicted" sh -c "! grep -q '^predict' '$OUT'"

"$RSW" record -q -i 20ms --param pw=5 -- "$HOG" +16M exit 3 >/dev/null 2>&1
run "$RSW" model 'peak ~ pw'
case "$(cat "$OUT")" in
*"left out  run 5: exited with 3"*) ok "a failed run is left out with the reason" ;;
*) not_ok "a failed run is left out with the reason"; diag_run ;;
esac

for bad in "peak" "peak ~" "height ~ pw" "peak ~ p w" "peak ~ pw + pw"; do
	run "$RSW" model "$bad"
	if [ "$RC" -eq 2 ] && [ "$(wc -l < "$ERR")" -eq 1 ]; then ok "bad model '$bad': one line, exit 2"
	else not_ok "bad model '$bad': one line, exit 2"; diag_run; fi
done
for bad in "p w=1" "pw=" "=1" "pw"; do
	run "$RSW" record -q --param "$bad" -- true
	if [ "$RC" -eq 2 ] && [ "$(wc -l < "$ERR")" -eq 1 ]; then ok "bad --param '$bad': one line, exit 2"
	else not_ok "bad --param '$bad': one line, exit 2"; diag_run; fi
done
run "$RSW" record -q --param "pw=a
b" -- true
if [ "$RC" -eq 2 ] && [ "$(wc -l < "$ERR")" -eq 1 ]; then ok "a newline in a value: one line, exit 2"
else not_ok "a newline in a value: one line, exit 2"; diag_run; fi

run "$RSW" compare 1 2 3 4 --by kind
check "compare --by with one value only fails" test "$RC" -eq 1
run "$RSW" compare 1 2 3 4 --by pw
case "$(cat "$OUT")" in
"groups by pw: A: pw=1 (run 1), B: pw=2 (run 2)"*) ok "compare --by pw groups by value" ;;
*) not_ok "compare --by pw groups by value"; diag_run ;;
esac

# inside a run: the pipeline example's memory follows its buffers in flight (32 MiB each)
if [ -x "$BUILD/examples/pipeline" ]; then
	# (one round of 8 partitions, the consumer 800 ms each: the buffers pile up even when
	# a loaded machine makes their synthesis slow (at 150 ms a partition, under
	# stress-ng --cpu 2, they did not, and the buffers being synthesized, which no gauge
	# counts yet, made the fit half the truth); each state then lasts 40 samples)
	# (and under SANITIZE=1 without AddressSanitizer's quarantine, which would keep each
	# freed buffer resident for a while)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
		"$RSW" record -q -i 20ms -- "$BUILD/examples/pipeline" --workers 8 --rounds 1 --bug \
		--gpu-ms 800 >/dev/null 2>&1
	run "$RSW" model last 'rss ~ counter.buffers_in_flight' --json
	per=$(sed -n 's/.*"term":"counter.buffers_in_flight","estimate":\([0-9.e+]*\),.*/\1/p' "$OUT")
	check "in-run model: about 32 MiB per buffer in flight ($per)" \
		awk -v s="${per:-0}" 'BEGIN { exit !(s > 0.85 * 33554432 && s < 1.15 * 33554432) }'
	run "$RSW" model last 'rss ~ counter.nope'
	check "in-run model of a missing counter fails" test "$RC" -eq 1
	# the run's report carries the same model, one per counter, as the CLI prints it
	run "$RSW" report last -o "$T/counters.html"
	"$RSW" model last 'rss ~ counter.buffers_in_flight' >"$T/model.txt"
	eq=$(grep '^rss = ' "$T/model.txt")
	check "report: a section of memory against the counters" grep -q '<h2>Memory against the counters</h2>' "$T/counters.html"
	check "report: the buffers' model as model prints it ($eq)" grep -qF "$eq" "$T/counters.html"
	nm=$(grep -o 'model     run [0-9]*: rss ~' "$T/counters.html" | wc -l)
	check "report: one model per counter ($nm)" \
		test "$nm" -eq "$(sql "$RSSWATCH_DB" "SELECT count(DISTINCT name) FROM counter WHERE run_id = (SELECT max(id) FROM run)")"
	run "$RSW" record -q -i 20ms -- "$HOG" +8M sleep 100ms exit 0
	run "$RSW" report last -o "$T/plain.html"
	check "report: no such section for a run without counters" sh -c '! grep -q "Memory against the counters" "$1"' - "$T/plain.html"
else
	skip "in-run model: examples/pipeline not built"
	skip "in-run model of a missing counter"
	skip "report: counter models"
fi
done_testing
