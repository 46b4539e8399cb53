#!/bin/sh
# Pictures that tell a run's truth: an OOM run with one sample (killed after it) and a
# run whose peak only VmHWM saw, in show's terminal chart, plot's SVG and the report;
# the report does not scroll sideways at 1280 px with a long cgroup path (headless
# Chromium). The runs are real recordings of memhog, then given the OOM kill and the
# VmHWM peak in the database, so the figures are known exactly.
. tests/t/lib.sh

MIB=1048576
DB=$RSSWATCH_DB
run "$RSW" record -q -i 1s -- "$HOG" +4M sleep 50ms
[ "$RC" -eq 0 ] || diag_run
run "$RSW" record -q -i 20ms -- "$HOG" +20M sleep 200ms
[ "$RC" -eq 0 ] || diag_run
long=/process_api/83c6e56c9f96f51c23fdd8f5e0122c43/a-cgroup-name-far-too-long-to-fit-on-one-line-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/rsswatch-4242
sql "$DB" "DELETE FROM sample WHERE run_id = 1 AND elapsed_ns > (SELECT min(elapsed_ns) FROM sample WHERE run_id = 1);
	UPDATE run SET samples = 1, outcome = 'oom_killed', exit_code = NULL, signal = 9,
		ended_at = started_at + 117000000, peak_rss = 64 * $MIB,
		peak_rss_at = started_at + 117000000, peak_source = 'OOM report',
		oom_at = started_at + 117000000, oom_memcg = '$long', cgroup = '$long' WHERE id = 1;
	INSERT INTO event (run_id, t, kind, pid, detail)
		SELECT 1, started_at + 117000000, 'oom_kill', pid, 'comm=memhog memcg=$long' FROM run WHERE id = 1;
	UPDATE run SET peak_rss = 773 * $MIB, peak_source = 'VmHWM' WHERE id = 2;"

# --- the OOM run with one sample ---
COLUMNS=80 run "$RSW" show 1
check "show says 1 sample, not 1 samples" grep -q ', 1 sample every ' "$OUT"
if grep -q '^RSS over time (highest sample .*; peak 64.0 MiB from the OOM report, marked ^)$' "$OUT"; then
	ok "a one-sample run gets a terminal chart titled with the reported peak"
else
	not_ok "a one-sample run gets a terminal chart titled with the reported peak"; diag_run
fi
if grep -q '^ *64.0 MiB ┤ ' "$OUT" && grep -Eq '^ +0s +117ms\^$' "$OUT"; then
	ok "the terminal chart reaches the kill at 117ms and draws the peak there"
else
	not_ok "the terminal chart reaches the kill at 117ms and draws the peak there"; diag_run
fi

run "$RSW" plot 1 -o "$T/oom.svg"
svg=$(cat "$T/oom.svg" 2>/dev/null)
case "$svg" in
*'<circle class="point"'*'>peak 64.0 MiB from the OOM report<'*'stroke="#b00020"'*)
	ok "plot draws the one sample, the peak from the OOM report and the kill" ;;
*) not_ok "plot draws the one sample, the peak from the OOM report and the kill"; diag_run ;;
esac
case "$svg" in
*'>100ms<'*) ok "plot's time axis reaches past the last sample to the kill" ;;
*) not_ok "plot's time axis reaches past the last sample to the kill" ;;
esac

run "$RSW" report 1 -o "$T/oom.html"
if grep -q 'from the OOM report; highest sample' "$T/oom.html" && ! grep -q 'VmHWM;' "$T/oom.html"; then
	ok "the report says where the peak came from in show's words"
else
	not_ok "the report says where the peak came from in show's words"
	diag "$(grep -o 'Peak RSS.\{0,200\}' "$T/oom.html")"
fi

# --- the run whose peak only VmHWM saw ---
COLUMNS=80 run "$RSW" show 2
if grep -q '^RSS over time (highest sample [0-9.]* MiB; peak 773.0 MiB from VmHWM, marked ^)$' "$OUT"; then
	ok "the terminal chart's title gives the highest sample and the peak from VmHWM"
else
	not_ok "the terminal chart's title gives the highest sample and the peak from VmHWM"; diag_run
fi
check "show's summary gives the same peak" grep -q '^peak      773.0 MiB at .*, from VmHWM; the highest sampled' "$OUT"
run "$RSW" plot 1 2 -o "$T/both.svg"
if grep -q '(peak 773.0 MiB from VmHWM)' "$T/both.svg" && grep -q '(peak 64.0 MiB from the OOM report)' "$T/both.svg" &&
	[ "$(grep -o '<g class="peak">' "$T/both.svg" | wc -l)" -eq 2 ]; then
	ok "an overlay marks and names each run's reported peak"
else
	not_ok "an overlay marks and names each run's reported peak"; diag_run
fi

# --- counters and gauges, with byte units, in show, plot and report ---
sql "$DB" "INSERT INTO counter (run_id, elapsed_ns, name, value) VALUES
	(2, 0, 'bytes_held', 0), (2, 50000000, 'bytes_held', 314572800),
	(2, 0, 'partitions_in_flight', 3), (2, 60000000, 'partitions_in_flight', 12)"
run "$RSW" show 2
if grep -Eq '^  bytes_held +300.0 MiB +300.0 MiB$' "$OUT" && grep -Eq '^  partitions_in_flight +12 +12$' "$OUT"; then
	ok "show gives a byte gauge in MiB and a count as a number"
else
	not_ok "show gives a byte gauge in MiB and a count as a number"; diag_run
fi
run "$RSW" plot 2 -o "$T/c.svg"
if grep -q '<g class="counters">' "$T/c.svg" && grep -q '>bytes_held</tspan> max 300.0 MiB, last 300.0 MiB<' "$T/c.svg" &&
	grep -q '>partitions_in_flight</tspan> max 12, last 12<' "$T/c.svg"; then
	ok "plot draws the counters in a panel, in their units"
else
	not_ok "plot draws the counters in a panel, in their units"; diag_run
fi
run "$RSW" plot 2 --counters partitions_in_flight -o "$T/c1.svg"
if [ "$RC" -eq 0 ] && grep -q '>partitions_in_flight</tspan>' "$T/c1.svg" && ! grep -q '>bytes_held<' "$T/c1.svg"; then
	ok "plot --counters picks the counters to draw"
else
	not_ok "plot --counters picks the counters to draw"; diag_run
fi
expect_exit 1 "plot --counters with an unknown name fails" "$RSW" plot 2 --counters nosuch -o "$T/c2.svg"
check "... and names it" grep -q "no counter or gauge 'nosuch'" "$ERR"
run "$RSW" report 2 -o "$T/c.html"
if grep -q '<h2>Counters and gauges</h2>' "$T/c.html" && grep -q '<td class="r">300.0 MiB</td>' "$T/c.html" &&
	grep -q '<g class="counters">' "$T/c.html"; then
	ok "the report has the counters panel and their table"
else
	not_ok "the report has the counters panel and their table"
fi

# --- one launched process: its peak label alone (the largest process is the run) ---
run "$RSW" record -q -i 10ms -- "$HOG" +40M sleep 200ms
[ "$RC" -eq 0 ] || diag_run
one_id=$(sql "$DB" 'SELECT max(id) FROM run')
run "$RSW" plot "$one_id" -o "$T/one.svg"
if grep -q '>peak [0-9.]* MiB from ' "$T/one.svg" && ! grep -q 'largest process' "$T/one.svg"; then
	ok "plot of one launched process labels its peak, not its largest process"
else
	not_ok "plot of one launched process labels its peak, not its largest process"
	diag "$(grep -o '>peak [^<]*\|largest process[^<]*' "$T/one.svg")"
fi

# --- a set of 30 processes: who used the memory ---
run "$RSW" record -q -i 20ms -- sh -c "for i in \$(seq 30); do '$HOG' +\${i}M sleep 300ms & done; '$HOG' +60M sleep 500ms; wait"
[ "$RC" -eq 0 ] || diag_run
set_id=$(sql "$DB" 'SELECT max(id) FROM run')
run "$RSW" plot "$set_id" -o "$T/set.svg"
nproc=$(sql "$DB" "SELECT count(*) FROM event WHERE run_id = $set_id AND kind IN ('proc_start', 'proc_exit')")
if grep -q '>largest process: memhog (pid [0-9]*), peak 6[0-9].[0-9] MiB<' "$T/set.svg"; then
	ok "plot of a set labels its largest process"
else
	not_ok "plot of a set labels its largest process"; diag "$(grep -o 'largest process[^<]*' "$T/set.svg")"
fi
diamonds=$(grep -c 'l5 5l-5 5l-5 -5z' "$T/set.svg")
ticks=$(grep -c 'class="proc-event"' "$T/set.svg")
# (a busy machine may add an event of another kind, e.g. sampling_behind: a symbol each,
# and one in the legend)
others=$(sql "$DB" "SELECT count(*) FROM event WHERE run_id = $set_id AND
	kind NOT IN ('proc_start', 'proc_exit', 'exit', 'oom_kill', 'warn')")
[ "$others" -eq 0 ] || diag "other events: $(sql "$DB" "SELECT group_concat(kind) FROM event
	WHERE run_id = $set_id AND kind NOT IN ('proc_start', 'proc_exit', 'exit', 'oom_kill', 'warn')")"
if [ "$nproc" -gt 30 ] && [ "$diamonds" -eq "$((others ? others + 1 : 0))" ] && [ "$ticks" -eq "$nproc" ] &&
	grep -q "process start or exit ($nproc)" "$T/set.svg"; then
	ok "its $nproc process starts and exits are ticks on the axis, counted in the legend, not symbols"
else
	not_ok "its process starts and exits are ticks, not symbols ($nproc events, $diamonds symbols, $ticks ticks, $others others)"
fi
run "$RSW" report "$set_id" -o "$T/set.html"
rows=$(sed -n '/<h2>Processes/,/<\/table>/p' "$T/set.html" | grep -c '<tr><td class="r">')
# (at least 32: the shell, 31 memhogs; under SANITIZE=1 a leak checker's tracer too at
# each memhog's exit)
nps=$(sed -n 's/.*<h2>Processes <span class="none">(\([0-9]*\), largest peak first).*/\1/p' "$T/set.html")
if [ "${nps:-0}" -ge 32 ] && [ "$rows" -eq 20 ] &&
	grep -q "<details><summary>$((nps - 20)) more processes" "$T/set.html"; then
	ok "the report has the per-process table: the 20 largest, the rest folded"
else
	not_ok "the report has the per-process table: the 20 largest, the rest folded ($rows rows of ${nps:-?})"
fi

run "$RSW" plot "$set_id" --by-process -o "$T/set-bp.svg"
others=$(sed -n 's/.*>\([0-9]*\) other processes<.*/\1/p' "$T/set-bp.svg")
# (the processes with sampled figures: one that lived only between two samples, known
# from its exit record, is in the table but has no area; under SANITIZE=1 the leak
# checker's tracers are such)
nsampled=$(sql "$DB" "SELECT count(DISTINCT pid) FROM proc_sample WHERE run_id = $set_id")
if [ "$RC" -eq 0 ] && [ "$(grep -c '</title></path>' "$T/set-bp.svg")" -eq 9 ] &&
	[ "${others:-0}" -eq $((${nsampled:-0} - 8)) ]; then
	ok "plot --by-process of the set: 8 members named, the other $others as one layer"
else
	not_ok "plot --by-process of the set: 8 members named, the other ${others:-?} (of ${nsampled:-?} sampled) as one layer"
fi

# --- a real OOM kill in a 200 MiB cgroup: the picture alone explains it ---
# A set of two: one holds 50 MiB, the other grows at 200 MiB/s until the kernel kills
# it. The plot must draw the limit at the height of its axis's 200 MiB gridline, the
# cgroup's charged peak labelled, and the kill's cross at the victim's own RSS from the
# kernel's report (show --json), naming it; the report puts the cgroup's peak beside the
# summed RSS; headless Chromium paints the limit's red across the plot.
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ "$(id -u)" -ne 0 ] || [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	skip "a real OOM kill's pictures: needs root and a memory cgroup controller"
else
	run "$RSW" record -q -i 100ms --memory-limit 200M -- sh -c \
		"'$HOG' +50M await '$T/oom-done' & '$HOG' grow 400M 200M; touch '$T/oom-done'; wait"
	oom_id=$(sql "$DB" 'SELECT max(id) FROM run')
	"$RSW" show "$oom_id" --json >"$T/oomr.json" 2>/dev/null
	kpid=$(jget "$T/oomr.json" '$.oom[0].pid')
	krss=$(sqlite3 :memory: "select json_extract(readfile('$T/oomr.json'), '\$.oom[0].anon_rss_bytes')
		+ json_extract(readfile('$T/oomr.json'), '\$.oom[0].file_rss_bytes')
		+ json_extract(readfile('$T/oomr.json'), '\$.oom[0].shmem_rss_bytes')")
	diag "OOM run $oom_id: killed pid ${kpid:-?} with RSS ${krss:-?} B; cgroup peak $(jget "$T/oomr.json" '$.peak_cgroup_bytes') B"
	check "the grower was OOM-killed (the kernel's report is stored)" test -n "$kpid" -a "${krss:-0}" -gt $((100 * MIB))
	"$RSW" plot "$oom_id" -o "$T/oomr.svg" 2>"$ERR"
	# y of the axis gridline labelled L, of the limit's line, of the first kill's cross
	grid_y() { sed -n "s/.*<path d=\"M[0-9.]* \([0-9.]*\)H[0-9.]*\" stroke=\"#e6e6e6\"\/><text [^>]*>$1<\/text>.*/\1/p" "$T/oomr.svg" | head -1; }
	g200=$(grid_y '200 MiB')
	g100=$(grid_y '100 MiB')
	ly=$(sed -n 's/.*<g class="cgroup-limit"><path d="M[0-9.]* \([0-9.]*\)H.*/\1/p' "$T/oomr.svg" | head -1)
	ky=$(sed -n 's/.*<g class="oom-kill"><path d="M[0-9.]* \([0-9.]*\)l10 10.*/\1/p' "$T/oomr.svg" | head -1)
	diag "gridlines 100 MiB at y ${g100:-?}, 200 MiB at y ${g200:-?}; limit line at y ${ly:-?}; kill cross at y ${ky:-?} (+5)"
	check "plot: the cgroup limit is a line at the height of the 200 MiB gridline" \
		awk -v a="${ly:-x}" -v b="${g200:-y}" 'BEGIN { exit !(a != "x" && b != "y" && a - b < 0.15 && b - a < 0.15) }'
	check "plot: the limit is labelled" grep -q '>cgroup limit 200.0 MiB<' "$T/oomr.svg"
	check "plot: the cgroup's charged peak is labelled" \
		grep -Eq '>cgroup peak (19[0-9]|200)\.[0-9] MiB \(charged by the kernel\)<' "$T/oomr.svg"
	# the cross's centre against the axis: 100 MiB between the two gridlines
	check "plot: the kill's cross is at the victim's own RSS (${krss:-?} B), not the run's total" \
		awk -v k="${ky:-x}" -v a="${g100:-x}" -v b="${g200:-x}" -v r="${krss:-0}" -v m="$MIB" \
		'BEGIN { if (k == "x" || a == "x" || b == "x") exit 1; want = a - (r / m - 100) * (a - b) / 100;
		         d = k + 5 - want; exit !(d < 1 && d > -1) }'
	check "plot: the kill names its process" grep -q ">killed: memhog (pid $kpid), " "$T/oomr.svg"
	check "plot: the kill's tooltip gives the kernel's figures" \
		grep -q "<title>OOM kill of pid $kpid (memhog): RSS [0-9.]* MiB at the kill (anon " "$T/oomr.svg"
	"$RSW" report "$oom_id" -o "$T/oomr.html" 2>"$ERR"
	check "report: a Cgroup peak card, the kernel's charged figure" \
		grep -q '<div class="k">Cgroup peak</div><div class="v">[0-9.]* MiB</div><div class="n">memory the kernel charged to the run[^ ]* cgroup (shared pages once' "$T/oomr.html"
	check "report: the set's RSS card says it is summed" \
		grep -q '<div class="k">Peak RSS, summed</div>.*pages they share count once per process' "$T/oomr.html"
	check "report: its chart has the limit line and the cgroup peak too" \
		sh -c 'grep -q "<g class=\"cgroup-limit\">" "$1" && grep -q "<g class=\"cgroup-peak\">" "$1"' - "$T/oomr.html"
fi

# --- the report in a browser: no sideways scrolling at 1280 px ---
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	skip "the report does not scroll sideways at 1280 px: chromium is not installed"
	skip "the report's screenshot is the page's width: chromium is not installed"
	done_testing
fi
chrome() {
	timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/prof.XXXXXX")" --host-resolver-rules="MAP * ~NOTFOUND" "$@" \
		2>>"$T/chromium.err"
}
# the page as it is, plus a line that writes its scrolling width into the DOM
{ cat "$T/oom.html"; echo '<script>document.body.setAttribute("data-w",
document.documentElement.scrollWidth + " " + document.documentElement.clientWidth)</script>'; } >"$T/w.html"
w=$(chrome --window-size=1280,900 --dump-dom "file://$T/w.html" | grep -o 'data-w="[0-9]* [0-9]*"' | tr -dc '0-9 ')
sw=${w% *}
cw=${w#* }
if [ -n "$w" ] && [ "$sw" -le "$cw" ]; then
	ok "the report does not scroll sideways at 1280 px (scrollWidth $sw, clientWidth $cw)"
else
	not_ok "the report does not scroll sideways at 1280 px (scrollWidth $sw, clientWidth $cw)"
	diag "$(tail -3 "$T/chromium.err")"
fi
chrome --window-size=1280,900 --screenshot="$T/oom.png" "file://$T/oom.html" >/dev/null
sig=$(od -An -tx1 -N8 "$T/oom.png" 2>/dev/null | tr -d ' \n')
pw=$(od -An -tu1 -j16 -N4 "$T/oom.png" 2>/dev/null | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
if [ "$sig" = 89504e470d0a1a0a ] && [ "$pw" = 1280 ]; then
	ok "the report's screenshot is the page's width"
else
	not_ok "the report's screenshot is the page's width ($sig, $pw px)"
fi
# The plot of the real OOM run, painted by Chromium: the limit's red (#b00020) runs
# across the plot at the line's height (a row of the screenshot mostly that colour).
if [ -n "${ly:-}" ] && [ -s "$T/oomr.svg" ]; then
	chrome --window-size=960,600 --screenshot="$T/oomr.png" "file://$T/oomr.svg" >/dev/null
	red=$(/usr/bin/python3 - "$T/oomr.png" "$ly" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w, h, ct = 8, b"", 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ct = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ct]
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
ly = float(sys.argv[2])
best = 0
for y in range(max(0, int(ly) - 2), min(h, int(ly) + 3)):
    r = rows[y]
    best = max(best, sum(1 for x in range(w) if r[x*bpp] > 140 and r[x*bpp+1] < 60 and r[x*bpp+2] < 80))
print(best)
PY
)
	diag "Chromium's screenshot: ${red:-?} red pixels on the limit's row (of 960)"
	check "Chromium paints the cgroup limit across the plot (a dashed line: over 300 red pixels in its row)" \
		test "${red:-0}" -gt 300
else
	skip "Chromium paints the cgroup limit: no real OOM run here"
fi
done_testing
