#!/bin/sh
# report: a self-contained HTML page. Checked as text (escaping, nothing to fetch) and
# in headless Chromium (the chart is in the DOM, the screenshot is not blank, and it
# still renders with every host name unresolvable).
set -u
BUILD=${BUILD:-build}
RSW=$(pwd)/$BUILD/rsswatch
HOG=$BUILD/tests/bin/memhog
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsw-t61.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export RSSWATCH_DB=$tmp/t.db
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/# /'; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
echo "1..9"

"$RSW" record -q -i 20ms -l '<script>alert(1)</script>' -- "$HOG" +50M sleep 300ms +50M sleep 300ms >/dev/null 2>&1
start=$(sqlite3 "$RSSWATCH_DB" 'SELECT started_at FROM run WHERE id = 1')
sqlite3 "$RSSWATCH_DB" "INSERT INTO mark (run_id, t, label) VALUES
	(1, $start + 200000000, 'first <b>half</b> & more'), (1, $start + 450000000, 'second');"
html=$tmp/r.html
"$RSW" report 1 -o "$html"
if [ $? -eq 0 ] && [ -s "$html" ]; then ok "report writes the page"; else fail "report writes the page"; fi

if grep -q '<script>alert(1)</script>' "$html"; then
	fail "the label is escaped"
else
	ok "the label is escaped"
fi
if grep -q 'first &lt;b&gt;half&lt;/b&gt; &amp; more' "$html"; then ok "marks are escaped"; else fail "marks are escaped"; fi
# Nothing to fetch: no src/href attributes, no url(), no @import, and no http(s) address
# other than the SVG namespace name (an identifier, never fetched).
refs=$(grep -Eo '(src|href)=|url\(|@import|https?://[^"'"'"' ]*' "$html" | grep -v '^http://www.w3.org/2000/svg$')
if [ -z "$refs" ]; then ok "the page refers to nothing outside itself"; else fail "the page refers to nothing outside itself" "$refs"; fi

chromium=$(command -v chromium || command -v chromium-browser || true)
run_chromium() {
	timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$tmp/prof.XXXXXX")" --host-resolver-rules="MAP * ~NOTFOUND" "$@" \
		2>>"$tmp/chromium.err"
}
why=""
if [ -z "$chromium" ]; then
	why="chromium is not installed (scripts/deps.sh test installs it)"
elif ! run_chromium --dump-dom "file://$tmp/none.html" >/dev/null; then
	why="chromium cannot run here: $(tail -1 "$tmp/chromium.err")"
fi
if [ -n "$why" ]; then
	for d in "DOM holds the chart" "DOM holds the chart's series and marks" "script text stays text" \
		"screenshot is not blank" "page works without any network"; do
		skip "$d: $why"
	done
	exit 0
fi

dom=$(run_chromium --dump-dom "file://$html")
case "$dom" in
*'<svg'*'class="rsw-chart"'*) ok "DOM holds the chart" ;;
*) fail "DOM holds the chart" "$(printf '%s' "$dom" | head -c 400)" ;;
esac
case "$dom" in
*'class="series"'*'<path'*'class="marks"'*'second'*) ok "DOM holds the chart's series and marks" ;;
*) fail "DOM holds the chart's series and marks" ;;
esac
case "$dom" in
*'<script>alert(1)'*) fail "script text stays text" ;;
*'&lt;script&gt;alert(1)&lt;/script&gt;'*) ok "script text stays text" ;;
*) fail "script text stays text" ;;
esac

# A blank page compresses to a few KiB; the chart's colours and text make far more.
printf '<!DOCTYPE html><html><body></body></html>' >"$tmp/blank.html"
run_chromium --window-size=1200,800 --screenshot="$tmp/blank.png" "file://$tmp/blank.html" >/dev/null
run_chromium --window-size=1200,800 --screenshot="$tmp/r.png" "file://$html" >/dev/null
b=$(wc -c <"$tmp/blank.png" 2>/dev/null || echo 0)
r=$(wc -c <"$tmp/r.png" 2>/dev/null || echo 0)
sig=$(od -An -tx1 -N8 "$tmp/r.png" 2>/dev/null | tr -d ' \n')
if [ "$sig" = 89504e470d0a1a0a ] && [ "$r" -gt $((b * 4)) ] && [ "$r" -gt 20000 ]; then
	ok "screenshot is not blank ($r bytes against $b for a blank page)"
else
	fail "screenshot is not blank" "png $r bytes, blank $b bytes, signature $sig"
fi

# Every name unresolvable (set on every run above): the page must not need any.
case "$dom" in
*'Run 1'*'rsw-chart'*'<table>'*) ok "page works without any network" ;;
*) fail "page works without any network" ;;
esac
