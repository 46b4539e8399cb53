#!/bin/sh
# report: a self-contained HTML page. Checked as text (escaping, nothing to fetch) and
# in headless Chromium (the chart is in the DOM, the screenshot is not blank, and it
# still renders with every host name unresolvable).
. tests/t/lib.sh

"$RSW" record -q -i 20ms -l '<script>alert(1)</script>' -- "$HOG" +50M sleep 300ms +50M sleep 300ms >/dev/null 2>&1
start=$(sqlite3 "$RSSWATCH_DB" 'SELECT started_at FROM run WHERE id = 1')
sqlite3 "$RSSWATCH_DB" "INSERT INTO mark (run_id, t, label) VALUES
	(1, $start + 200000000, 'first <b>half</b> & more'), (1, $start + 450000000, 'second');"
html=$T/r.html
"$RSW" report 1 -o "$html"
if [ $? -eq 0 ] && [ -s "$html" ]; then ok "report writes the page"; else not_ok "report writes the page"; fi

if grep -q '<script>alert(1)</script>' "$html"; then
	not_ok "the label is escaped"
else
	ok "the label is escaped"
fi
if grep -q 'first &lt;b&gt;half&lt;/b&gt; &amp; more' "$html"; then ok "marks are escaped"; else not_ok "marks are escaped"; fi
# Nothing to fetch: no src/href attributes, no url(), no @import, and no http(s) address
# other than the SVG namespace name (an identifier, never fetched).
refs=$(grep -Eo '(src|href)=|url\(|@import|https?://[^"'"'"' ]*' "$html" | grep -v '^http://www.w3.org/2000/svg$')
if [ -z "$refs" ]; then ok "the page refers to nothing outside itself"; else not_ok "the page refers to nothing outside itself"; diag "$refs"; fi

chromium=$(command -v chromium || command -v chromium-browser || true)
run_chromium() {
	timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/prof.XXXXXX")" --host-resolver-rules="MAP * ~NOTFOUND" "$@" \
		2>>"$T/chromium.err"
}
why=""
if [ -z "$chromium" ]; then
	why="chromium is not installed (scripts/deps.sh test installs it)"
elif ! run_chromium --dump-dom "file://$T/none.html" >/dev/null; then
	why="chromium cannot run here: $(tail -1 "$T/chromium.err")"
fi
if [ -n "$why" ]; then
	for d in "DOM holds the chart" "DOM holds the chart's series and marks" "script text stays text" \
		"screenshot is not blank" "page works without any network"; do
		skip "$d: $why"
	done
	done_testing
fi

dom=$(run_chromium --dump-dom "file://$html")
case "$dom" in
*'<svg'*'class="rsw-chart"'*) ok "DOM holds the chart" ;;
*) not_ok "DOM holds the chart"; diag "$(printf '%s' "$dom" | head -c 400)" ;;
esac
case "$dom" in
*'class="series"'*'<path'*'class="marks"'*'second'*) ok "DOM holds the chart's series and marks" ;;
*) not_ok "DOM holds the chart's series and marks" ;;
esac
case "$dom" in
*'<script>alert(1)'*) not_ok "script text stays text" ;;
*'&lt;script&gt;alert(1)&lt;/script&gt;'*) ok "script text stays text" ;;
*) not_ok "script text stays text" ;;
esac

# A blank page compresses to a few KiB; the chart's colours and text make far more.
printf '<!DOCTYPE html><html><body></body></html>' >"$T/blank.html"
run_chromium --window-size=1200,800 --screenshot="$T/blank.png" "file://$T/blank.html" >/dev/null
run_chromium --window-size=1200,800 --screenshot="$T/r.png" "file://$html" >/dev/null
b=$(wc -c <"$T/blank.png" 2>/dev/null || echo 0)
r=$(wc -c <"$T/r.png" 2>/dev/null || echo 0)
sig=$(od -An -tx1 -N8 "$T/r.png" 2>/dev/null | tr -d ' \n')
if [ "$sig" = 89504e470d0a1a0a ] && [ "$r" -gt $((b * 4)) ] && [ "$r" -gt 20000 ]; then
	ok "screenshot is not blank ($r bytes against $b for a blank page)"
else
	not_ok "screenshot is not blank"; diag "png $r bytes, blank $b bytes, signature $sig"
fi

# Every name unresolvable (set on every run above): the page must not need any.
case "$dom" in
*'Run 1'*'rsw-chart'*'<table>'*) ok "page works without any network" ;;
*) not_ok "page works without any network" ;;
esac

done_testing
