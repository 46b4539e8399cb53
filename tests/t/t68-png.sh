#!/bin/sh
# PNG output: plot -o FILE.png and report --png FILE rasterize the SVG at twice its
# size where the build found librsvg (pkg-config librsvg-2.0 cairo, and not NO_PNG=1);
# without it they fail with exit 1 and a one-line error, and write nothing.
. tests/t/lib.sh

png_size() {	# "WIDTHxHEIGHT" of a PNG file, from its IHDR; nothing if it is not one
	[ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = 89504e470d0a1a0a ] || return 0
	od -An -tu1 -j16 -N8 "$1" | awk '{printf "%dx%d", $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8}'
}

run "$RSW" record -q -i 20ms -- "$HOG" +16M sleep 300ms
[ "$RC" -eq 0 ] || diag_run
if pkg-config --exists librsvg-2.0 cairo 2>/dev/null && [ "${NO_PNG:-}" != 1 ]; then
	run "$RSW" plot -o "$T/p.png"
	sz=$(png_size "$T/p.png")
	if [ "$RC" -eq 0 ] && [ "$sz" = 1920x1128 ] && [ "$(wc -c <"$T/p.png")" -gt 20000 ]; then
		ok "plot -o FILE.png writes a PNG at twice the chart's size ($sz)"
	else
		not_ok "plot -o FILE.png writes a PNG at twice the chart's size (${sz:-not a PNG})"; diag_run
	fi
	run "$RSW" plot -o "$T/P.PNG" --width 600
	sz=$(png_size "$T/P.PNG")
	check "a .PNG name in capitals and --width 600 give a 1200 px wide PNG ($sz)" [ "${sz%x*}" = 1200 ]
	run "$RSW" report --png "$T/r.png"
	sz=$(png_size "$T/r.png")
	if [ "$RC" -eq 0 ] && [ "${sz%x*}" = 1920 ] && [ ! -e "$T/r.html" ]; then
		ok "report --png alone writes the chart as a PNG ($sz)"
	else
		not_ok "report --png alone writes the chart as a PNG (${sz:-not a PNG})"; diag_run
	fi
	run "$RSW" report -o "$T/r.html" --png "$T/r2.png"
	check "report -o and --png write both" [ -s "$T/r.html" ] && [ -n "$(png_size "$T/r2.png")" ]
else
	expect_exit 1 "plot -o FILE.png without librsvg fails" "$RSW" plot -o "$T/p.png"
	check "... with a one-line error saying PNG needs librsvg at build time" \
		sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q '^rsswatch: PNG output needs librsvg at build time' '$ERR'"
	check "... and writes nothing" [ ! -e "$T/p.png" ]
	expect_exit 1 "report --png without librsvg fails" "$RSW" report --png "$T/r.png"
fi
# librsvg is loaded for a PNG only: a recorder never maps it (nor its sixty libraries)
spawn rec "$RSW" record -q -i 20ms -d 5s -- sleep 5
rec=$!
# (up: its libraries mapped and a moment to run; reading the database meanwhile could
# race its creation)
wait_until 5 sh -c "grep -q libc /proc/$rec/maps 2>/dev/null" && sleep 0.5
check "a recorder maps neither librsvg nor cairo" \
	sh -c "grep -q libc /proc/$rec/maps && ! grep -Eq 'librsvg|libcairo' /proc/$rec/maps"
kill -INT "$rec" 2>/dev/null
finish "$rec"
run "$RSW" plot -o "$T/p.svg"
check "plot -o FILE.svg still writes SVG" grep -q '^<svg ' "$T/p.svg"
done_testing
