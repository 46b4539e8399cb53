#!/bin/sh
# plot --by-process and the report of a set: a tree of twelve memhogs of known sizes
# (3, 6, ..., 36 MiB) and one of 60 MiB, recorded for real, is drawn as a stacked area
# of its eight largest members, each named in the legend, with the rest as "others";
# a single process and several runs are refused.
. tests/t/lib.sh

DB=$RSSWATCH_DB
run "$RSW" record -q -i 20ms -- sh -c "for i in \$(seq 12); do '$HOG' +\$((i * 3))M sleep 400ms & done; '$HOG' +60M sleep 600ms; wait"
[ "$RC" -eq 0 ] || diag_run
set_id=$(sql "$DB" 'SELECT max(id) FROM run')
run "$RSW" plot "$set_id" --by-process -o "$T/bp.svg"
[ "$RC" -eq 0 ] || diag_run
check "plot --by-process draws the stacked area" grep -q '<g class="by-process">' "$T/bp.svg"
layers=$(grep -c '</title></path>' "$T/bp.svg")
named=$(grep -c '<text x="[0-9.]*" y="[0-9.]*">memhog ([0-9]*)</text>' "$T/bp.svg")
if [ "$layers" -eq 9 ] && [ "$named" -eq 8 ] && grep -Eq '>[0-9]+ other processes</text>' "$T/bp.svg"; then
	ok "its eight largest members are named in the legend, the rest as others"
else
	not_ok "its eight largest members are named in the legend, the rest as others ($layers layers, $named named)"
	diag "$(grep -o '<text x="[0-9.]*" y="[0-9.]*">[^<]*</text>' "$T/bp.svg" | head -14)"
fi
# the bottom layer is the largest member: the 60 MiB memhog
big=$(sql "$DB" "SELECT pid FROM process WHERE run_id = $set_id ORDER BY peak_rss DESC LIMIT 1" 2>/dev/null)
first=$(grep -o '<title>[^<]*</title></path>' "$T/bp.svg" | head -1)
if [ -n "$big" ] && [ "$first" = "<title>memhog (pid $big)</title></path>" ]; then
	ok "the bottom layer is the largest member (pid $big)"
else
	not_ok "the bottom layer is the largest member (pid ${big:-?}; first layer: $first)"
fi
run "$RSW" report "$set_id" -o "$T/bp.html"
if grep -q '<h2>Memory by process</h2>' "$T/bp.html" && [ "$(grep -c '<g class="by-process">' "$T/bp.html")" -eq 1 ]; then
	ok "the report of a set has the chart by process"
else
	not_ok "the report of a set has the chart by process"
fi
# its twelve process starts and exits are folded under their count, apart from the
# other events' table
nproc=$(sql "$DB" "SELECT count(*) FROM event WHERE run_id = $set_id AND kind IN ('proc_start', 'proc_exit')")
check "the report folds the $nproc process events under their count" \
	grep -q "^<details><summary>$nproc process start/exit events</summary>" "$T/bp.html"
check "... at least the twelve memhogs' exits ($nproc)" test "${nproc:-0}" -ge 12
nother=$(sql "$DB" "SELECT count(*) FROM event WHERE run_id = $set_id AND kind NOT IN ('proc_start', 'proc_exit')")
before=$(sed -n '/<h2>Events<\/h2>/,/<details>/p' "$T/bp.html")
if [ "${nother:-0}" -eq 0 ]; then
	check "... with none above them but a line that says so" \
		test "$(printf '%s\n' "$before" | grep -c 'proc_\|^<p class="none">No other events.</p>$')" -eq 1
else
	check "... with the $nother others above them" \
		test "$(printf '%s\n' "$before" | grep -c '^<tr><td>+')" -eq "$nother"
fi

run "$RSW" record -q -i 50ms --no-tree -- "$HOG" +4M sleep 100ms
one=$(sql "$DB" 'SELECT max(id) FROM run')
expect_exit 1 "plot --by-process of a single process fails" "$RSW" plot "$one" --by-process -o "$T/x.svg"
check "... saying it needs a set" grep -q "needs a set (record --tree or -g)" "$ERR"
run "$RSW" report "$one" -o "$T/one.html"
check "the report of one process has no chart by process" sh -c "! grep -q 'Memory by process' '$T/one.html'"
expect_exit 2 "plot --by-process of several runs is a usage error" "$RSW" plot "$set_id" "$one" --by-process -o "$T/x.svg"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	skip "the chart by process renders in a browser: chromium is not installed"
	done_testing
fi
timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$(mktemp -d "$T/prof.XXXXXX")" \
	--window-size=1000,700 --screenshot="$T/bp.png" "file://$T/bp.svg" >/dev/null 2>>"$T/chromium.err"
sig=$(od -An -tx1 -N8 "$T/bp.png" 2>/dev/null | tr -d ' \n')
if [ "$sig" = 89504e470d0a1a0a ] && [ "$(wc -c <"$T/bp.png")" -gt 10000 ]; then
	ok "the chart by process renders in a browser"
else
	not_ok "the chart by process renders in a browser ($sig)"; diag "$(tail -3 "$T/chromium.err")"
fi
done_testing
