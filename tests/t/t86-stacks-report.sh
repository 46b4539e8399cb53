#!/bin/sh
# report of a run recorded with --stacks, as root: the page holds a flame graph of the
# live bytes at the peak, inline SVG, one box per merged frame, as wide as the bytes the
# store holds for the stacks through it, with a search box; the page still fetches
# nothing. A run without stacks has no such section.
. tests/t/lib.sh

q() { sql "$RSSWATCH_DB" "$1"; }
# bytes at the peak of run $1's stacks with a frame line that matches the LIKE pattern $2
held() { q "select ifnull(sum(b.bytes), 0) from stack_bytes b join stack s on s.run_id = b.run_id
	and s.id = b.stack_id where b.run_id = $1 and b.at = 'peak' and s.frames like '$2'"; }
# the boxes of page $1, one a line (a box's title holds a newline)
boxes() { tr '\n' ' ' <"$1" | sed 's|</g>|&\n|g'; }
# the first box of page $1 whose name is $2; box_attr: its attribute $3 (its rect's x,
# y or width, or the box's data-o or data-b)
box() { boxes "$1" | grep -F "<g data-n=\"$2\" " | head -1; }
box_attr() { box "$1" "$2" | sed 's|<text.*||' | sed -n "s/.* $3=\"\([0-9.]*\)\".*/\1/p"; }
# whether a/b and c/d agree within 0.5%
same_ratio() { awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN {
	if (a <= 0 || b <= 0 || c <= 0 || d <= 0) exit 1
	r = (a / b) / (c / d); exit !(r > 0.995 && r < 1.005) }'; }

require_stacks

PROG="$T/prog"
check "the test program builds with -O2 -fomit-frame-pointer" \
	cc -O2 -g -fomit-frame-pointer -o "$PROG" tests/stacks/prog.c -ldl

# record returns when the program has ended and the run is stored
expect_exit 0 "a launched program of known blocks, with --stacks" "$RSW" record -q --stacks -i 1s -- \
	"$PROG" table 100 buffers 3 20 sleep 100 free-buffers sleep 100
id=$(q "select max(id) from run")
html="$T/stacks.html"
expect_exit 0 "report writes the page" "$RSW" report "$id" -o "$html"

check "the page has the flame section and its inline SVG" sh -c \
	"grep -q '<h2>What held the memory at the peak</h2>' '$html' &&
	 grep -q '<figure id=\"flame\" class=\"flame\">' '$html' &&
	 grep -q '<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flame-svg\"' '$html'"
nt=$(boxes "$html" | grep -cF '<g data-n="alloc_table" ')
nb=$(boxes "$html" | grep -cF '<g data-n="alloc_buffers" ')
check "a box for alloc_table and one for alloc_buffers, each merged into one" \
	test "$nt $nb" = "1 1"

tb=$(held "$id" '%alloc_table (prog.c:%')
bb=$(held "$id" '%alloc_buffers (prog.c:%')
all=$(held "$id" '%')
tw=$(box_attr "$html" alloc_table width)
bw=$(box_attr "$html" alloc_buffers width)
diag "store: alloc_table $tb, alloc_buffers $bb, every stack $all bytes; widths $tw and $bw of 1000"
check "each box holds the bytes the store has for the stacks through it" sh -c \
	"test '$(box_attr "$html" alloc_table data-b)' = '$tb' &&
	 test '$(box_attr "$html" alloc_buffers data-b)' = '$bb' && test '$tb' -gt $((100 << 20))"
check "their widths are in the ratio of their bytes" same_ratio "$tw" "$bw" "$tb" "$bb"
check "and alloc_table's width is its share of every stack, of the drawing's 1000" \
	same_ratio "$tw" 1000 "$tb" "$all"
check "an icicle: main above alloc_table, alloc_table above its malloc" sh -c \
	"awk 'BEGIN { exit !($(box_attr "$html" main y) < $(box_attr "$html" alloc_table y) &&
		$(box_attr "$html" alloc_table y) < $(box_attr "$html" __GI___libc_malloc y)) }'"
box "$html" alloc_buffers >"$T/box"
check "hover text: the frame whole, its bytes and its share of the peak" grep -Eq \
	'<title>alloc_buffers \(prog\.c:[0-9]+\) 60\.0 MiB, [0-9.]+% of the peak</title>' "$T/box"
check "the search box, hidden until its inline script shows it" sh -c \
	"grep -q '<div id=\"flame-find\" class=\"flame-find\" hidden>' '$html' &&
	 grep -q \"getElementById(k+'-q')\" '$html'"
refs=$(grep -Eo '(src|href)=|url\(|@import|https?://[^"'"'"' ]*' "$html" | grep -v '^http://www.w3.org/2000/svg$')
check "the page still refers to nothing outside itself" test -z "$refs"

# --- without stacks: no flame section
expect_exit 0 "a run of the same program without --stacks" "$RSW" record -q -i 1s -- "$PROG" table 20
expect_exit 0 "its report" "$RSW" report last -o "$T/plain.html"
check "has no flame section, style or script" sh -c "! grep -qi 'flame' '$T/plain.html'"
check "and has the rest of the page" grep -q 'class="rsw-chart"' "$T/plain.html"

# --- in a browser: the script runs and shows the search box; the graph is in the DOM
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	skip "the page in Chromium: chromium is not installed (scripts/deps.sh test installs it)"
	done_testing
fi
dom=$(timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$(mktemp -d "$T/prof.XXXXXX")" --host-resolver-rules="MAP * ~NOTFOUND" \
	--dump-dom "file://$html" 2>>"$T/chromium.err")
case "$dom" in
*'<div id="flame-find" class="flame-find">'*'id="flame-svg"'*'data-n="alloc_table"'*)
	ok "in Chromium: the graph is in the DOM and the script showed the search box" ;;
*)
	not_ok "in Chromium: the graph is in the DOM and the script showed the search box"
	diag "$(tail -3 "$T/chromium.err")" ;;
esac

done_testing
