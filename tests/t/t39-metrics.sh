#!/bin/sh
# record --listen: /metrics in the Prometheus text format while recording (promtool
# finds nothing wrong with it), OpenMetrics when asked; label values escaped once (a
# process name with a backslash, a double quote and a newline); only GET of /metrics
# and / served; bad requests (404, 405, a 1 MiB header, 500 idle connections) answered
# or refused without disturbing the samples or growing the recorder; the run's end
# served before the endpoint goes; a bad or unbindable address refused with exit 2.
# Prints TAP.
. tests/t/lib.sh

HOSTILE="$BUILD/tests/bin/hostile"
SHM="$T/shm"
mkdir -m 1777 "$SHM"
chmod 1777 "$SHM"
RSSWATCH_SHM_DIR=$SHM
export RSSWATCH_SHM_DIR

# fetch URL [ACCEPT]: the body on stdout, the status in $T/status, the Content-Type in
# $T/ctype. With curl where there is one, else with python3's urllib.
fetch() {
	if command -v curl >/dev/null 2>&1 && [ -z "${NO_CURL:-}" ]; then
		curl -s -o "$T/body" -w '%{http_code} %{content_type}' ${2:+-H "Accept: $2"} "$1" \
			>"$T/head" 2>/dev/null || return 1
	else
		/usr/bin/python3 - "$1" "${2:-}" "$T/body" >"$T/head" 2>/dev/null <<'PY' || return 1
import sys, urllib.request, urllib.error
url, accept, body = sys.argv[1:4]
req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
try:
    r = urllib.request.urlopen(req, timeout=5)
except urllib.error.HTTPError as e:
    r = e
data = r.read()
open(body, "wb").write(data)
sys.stdout.write("%d %s" % (r.getcode(), r.headers.get("Content-Type", "")))
PY
	fi
	cut -d' ' -f1 "$T/head" >"$T/status"
	cut -d' ' -f2- "$T/head" >"$T/ctype"
	cat "$T/body"
}

# probe method PORT METHOD: the head of the answer to METHOD /metrics
# probe bighdr PORT: a request with a 1 MiB header: the status, or "closed"
# probe flood PORT N SECS: N connections opened and left idle for SECS ("opened N")
# probe scrape PORT FILE: /metrics every 100 ms until nothing listens (30 s at most);
#   the last answer in FILE, the number of answers in FILE.scrapes
probe() {
	/usr/bin/python3 - "$@" <<'PY'
import socket, sys, time
what, port = sys.argv[1], int(sys.argv[2])
def ask(raw, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    data = b""
    try:
        s.sendall(raw)
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    s.close()
    return data
if what == "method":
    m = sys.argv[3].encode()
    sys.stdout.write(ask(m + b" /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                     .split(b"\r\n\r\n")[0].decode().replace("\r", ""))
elif what == "bighdr":
    a = ask(b"GET /metrics HTTP/1.1\r\nHost: t\r\nX-Big: " + b"x" * (1 << 20) +
            b"\r\nConnection: close\r\n\r\n")
    print(a.split(b" ")[1].decode() if a.startswith(b"HTTP/1.1 ") else "closed")
elif what == "flood":
    n, secs = int(sys.argv[3]), float(sys.argv[4])
    socks = []
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    time.sleep(secs)
    print("opened", len(socks))
    for s in socks:
        s.close()
elif what == "scrape":
    out, n, end = sys.argv[3], 0, time.time() + 30
    while time.time() < end:
        try:
            a = ask(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 2)
        except OSError:
            break
        if a.startswith(b"HTTP/1.1 200"):
            open(out, "wb").write(a.split(b"\r\n\r\n", 1)[1])
            n += 1
            open(out + ".scrapes", "w").write("%d\n" % n)
        time.sleep(0.1)
PY
}

# Does anything accept connections on 127.0.0.1:PORT?
listening() {
	/usr/bin/python3 -c 'import socket,sys; s=socket.socket(); s.settimeout(2); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))) != 0)' "$1"
}

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

port=$(free_port)
url="http://127.0.0.1:$port"
mkdir "$T/bin"
name=$(printf 'a\\b"c\nd')	# a\b"c, a newline, d
cp "$HOSTILE" "$T/bin/$name"
spawn rec "$RSW" record -q -i 50ms --listen "127.0.0.1:$port" -- "$T/bin/$name" stale "$T/ready"
rec=$!
has_sample() { fetch "$url/metrics" >"$T/m" && grep -q '^rsswatch_app_value{' "$T/m"; }
if wait_until 15 has_sample; then ok "/metrics answers while recording"; else not_ok "/metrics answers while recording"; diag "$(cat "$T/rec.err")"; fi
check "content type: Prometheus text 0.0.4" grep -q '^text/plain; version=0.0.4' "$T/ctype"
lbl='{run="[0-9]*",pid="[0-9]*",comm="a\\\\b\\"c\\nd"'
for m in resident anon file shmem swap high_water; do
	check "rsswatch_${m}_bytes with run, pid and the escaped comm" \
		grep -qE "^rsswatch_${m}_bytes$lbl} [0-9]+$" "$T/m"
	check "# TYPE rsswatch_${m}_bytes gauge" grep -qx "# TYPE rsswatch_${m}_bytes gauge" "$T/m"
done
# bytes, not KiB: a small C program holds about 1 MiB, sometimes a little less
check "resident bytes above 256 KiB (bytes, not KiB)" \
	sh -c "grep -E '^rsswatch_resident_bytes\{' '$T/m' | awk '{exit !(\$2 > 262144)}'"
check "rsswatch_samples_total counts samples" grep -qE "^rsswatch_samples_total$lbl} [1-9][0-9]*$" "$T/m"
check "rsswatch_oom_kills_total is 0" grep -qE "^rsswatch_oom_kills_total$lbl} 0$" "$T/m"
check "# TYPE rsswatch_oom_kills_total counter" grep -qx '# TYPE rsswatch_oom_kills_total counter' "$T/m"
check "rsswatch_cpu_seconds_total by mode" grep -qE "^rsswatch_cpu_seconds_total$lbl,mode=\"system\"} " "$T/m"
check "the recorder's own CPU" grep -qE "^rsswatch_recorder_cpu_seconds_total$lbl,mode=\"user\"} " "$T/m"
check "the application's gauge, by name" grep -qE "^rsswatch_app_value$lbl,name=\"stale_gauge\"} 4242$" "$T/m"
check "no raw quote in any label value" sh -c "! grep -v '^#' '$T/m' | grep -qF 'b\"c'"
check "no doubled backslash in the comm label" sh -c "! grep -qF 'a\\\\\\\\b' '$T/m'"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$T/m" >"$T/promtool" 2>&1
	check "promtool check metrics finds nothing" test "$?" -eq 0 -a ! -s "$T/promtool"
	[ -s "$T/promtool" ] && diag "$(cat "$T/promtool")"
else
	skip "promtool check metrics: no promtool (scripts/deps.sh test installs it)"
fi
check "the run is running" grep -qE "^rsswatch_run_outcome$lbl,outcome=\"running\"} 1$" "$T/m"
check "no samples dropped" grep -qE "^rsswatch_samples_dropped_total$lbl} 0$" "$T/m"
check "the recorder's cost of a sample, under a second" \
	sh -c "grep -E '^rsswatch_sample_duration_seconds\{' '$T/m' | awk '{exit !(\$2 > 0 && \$2 < 1)}'"
check "every line a comment or a sample" sh -c "! grep -vE '^(# (HELP|TYPE) |rsswatch_[a-z_]+\{.*\} -?[0-9.e+-]+$)' '$T/m'"

fetch "$url/metrics" "application/openmetrics-text; version=1.0.0" >"$T/om"
check "OpenMetrics when the Accept header asks for it" grep -q '^application/openmetrics-text' "$T/ctype"
check "OpenMetrics ends with # EOF" test "$(tail -n 1 "$T/om")" = "# EOF"
check "OpenMetrics counter family named without _total" grep -qx '# TYPE rsswatch_oom_kills counter' "$T/om"
fetch "$url/nope" >/dev/null
check "another path: 404" test "$(cat "$T/status")" = 404
fetch "$url/" >/dev/null
check "/: an index page" test "$(cat "$T/status")" = 200
check "listening while recording" listening "$port"
for m in POST PUT DELETE OPTIONS; do
	probe method "$port" "$m" >"$T/head"
	check "$m /metrics: 405" grep -q '^HTTP/1.1 405 ' "$T/head"
	check "$m /metrics: the answer says Allow: GET, HEAD" grep -qi '^Allow: GET, HEAD' "$T/head"
done

# Hostile clients. The recorder's memory before, to see that they cost it nothing lasting.
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$rec/status"; }
rss0=$(rss_kb)
probe bighdr "$port" >"$T/big"
check "a 1 MiB header: 431, or the connection closed" grep -qE '^(431|closed)$' "$T/big"
diag "a 1 MiB header: $(cat "$T/big")"
check "the recorder still runs after the 1 MiB header" alive "$rec"
probe flood "$port" 500 3 >"$T/flood"
check "500 idle connections held for 3 s" grep -q '^opened 500$' "$T/flood"
fetch "$url/metrics" >"$T/m2"
check "/metrics answers once they close" test "$(cat "$T/status")" = 200
rss1=$(rss_kb)
check "the recorder grew by less than 8 MiB ($rss0 kB, then $rss1 kB)" test $((rss1 - rss0)) -lt 8192

# The end of the run: a scraper that keeps coming sees how it ended before the
# endpoint goes (the command ends by the SIGTERM passed on to it).
spawn scraper probe scrape "$port" "$T/end"
scraper=$!
scraped_twice() { [ "$(cat "$T/end.scrapes" 2>/dev/null)" -ge 2 ] 2>/dev/null; }
wait_until 10 scraped_twice
kill -TERM "$rec"
finish "$rec"
check "the recording ends cleanly on SIGTERM (passed to the command)" test "$RC" -eq 143
check "the recorder itself was not killed by the SIGTERM: the run is stored as signaled" \
	test "$(sqlite3 "$RSSWATCH_DB" 'select outcome from run order by id desc limit 1')" = signaled
finish "$scraper"
check "a scrape after the end says outcome=\"signaled\"" \
	grep -qE "^rsswatch_run_outcome$lbl,outcome=\"signaled\"} 1$" "$T/end"
check "... the signal, 15" grep -qE "^rsswatch_run_signal$lbl} 15$" "$T/end"
check "... the time it ended" grep -qE "^rsswatch_run_end_timestamp_seconds$lbl} [0-9]{10}" "$T/end"
check "... the run's last sample count, as stored" \
	grep -qE "^rsswatch_samples_total$lbl} $(sqlite3 "$RSSWATCH_DB" 'select samples from run order by id desc limit 1')$" "$T/end"

# The samples went on through all of it: no gap of a second between two (every 50 ms).
"$RSW" export --format csv -o "$T/csv" 2>/dev/null
max_gap() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "elapsed_s") c = i; next }
	NR > 2 && $c - p > g { g = $c - p } { p = $c } END { print g + 0 }' "$T/csv"; }
gap=$(max_gap)
diag "longest gap between two samples: ${gap}s; $(($(wc -l <"$T/csv") - 1)) samples"
check "sampling went on: no gap over 1 s between samples" awk -v g="$gap" 'BEGIN { exit !(g > 0 && g < 1) }'

not_listening() { ! listening "$1"; }
check "nothing listens on the port after the run" not_listening "$port"

expect_exit 2 "--listen without a port: exit 2" "$RSW" record --listen 127.0.0.1 -- true
check "one line says why" test "$(wc -l <"$ERR")" -eq 1
expect_exit 2 "--listen with a host name: exit 2" "$RSW" record --listen example.com:80 -- true
expect_exit 2 "--listen with port 0: exit 2" "$RSW" record --listen 127.0.0.1:0 -- true
expect_exit 2 "--listen on an address not on this host: exit 2" \
	"$RSW" record --listen 192.0.2.1:$port -- true
check "it says it cannot listen there" grep -q "cannot listen on 192.0.2.1:$port" "$ERR"

# A new database with --listen, scraped as the recorder starts: its schema was made in
# a forked child while the exporter's thread ran, and under the sanitizer build that
# child could wait for ever on a lock the other thread held (7 hangs in 100 starts).
# Twelve starts, each must end.
hung=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	p=$(free_port)
	timeout 20 "$RSW" record -q --db "$T/new$i.db" --listen "127.0.0.1:$p" -i 100ms -- sleep 0.2 \
		>/dev/null 2>&1 &
	r=$!
	for k in 1 2 3 4 5 6; do curl -s -m 1 "http://127.0.0.1:$p/metrics" >/dev/null 2>&1; done
	wait "$r" || hung=$((hung + 1))
done
check "a new database with --listen, scraped at the start: 12 starts end ($hung did not)" \
	test "$hung" -eq 0
# rsswatch_cgroup_peak_bytes is the run's cgroup peak: 150 MiB held in a cgroup made
# for the run, then freed; after the free it must stay at what the kernel charged while
# the memory was held (memory.usage_in_bytes or memory.current, read by this test then:
# the cgroup's own peak file is reset by rsswatch at each sample, where it can, and
# is no reference after the fact).
. "$(dirname "$0")/memcg.sh"
cgdir=$(memcg_dir)
if [ "$(id -u)" -ne 0 ] || [ -z "$cgdir" ] || [ ! -d "$cgdir" ]; then
	skip "the cgroup peak after a free: needs root and a memory cgroup controller"
else
	p=$(free_port)
	curl_m() { fetch "http://127.0.0.1:$p/metrics" >"$T/cg.m" 2>/dev/null; }
	metric() { sed -n "s/^$1{[^}]*} \([0-9]*\)$/\1/p" "$T/cg.m"; }
	spawn cgrec "$RSW" record -q -i 50ms --memory-limit 1G --listen "127.0.0.1:$p" -- \
		"$HOG" +150M touch "$T/cg-held" await "$T/cg-go" - touch "$T/cg-freed" await "$T/cg-end"
	cgrec=$!
	wait_until 15 test -e "$T/cg-held"
	hog=$(cat "/proc/$cgrec/task/$cgrec/children" 2>/dev/null | awk '{print $1}')
	cgpath=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p; s/^0::\(.*\)$/\1/p' "/proc/$hog/cgroup" 2>/dev/null | head -1)
	ref=""
	for f in memory.usage_in_bytes memory.current; do
		for root in /sys/fs/cgroup/memory /sys/fs/cgroup; do
			[ -z "$ref" ] && [ -r "$root$cgpath/$f" ] && [ "$cgpath" != / ] && ref=$(cat "$root$cgpath/$f")
		done
	done
	diag "the cgroup ($cgpath) charged ${ref:-?} bytes while 150 MiB was held"
	held_seen() { curl_m && [ "$(metric rsswatch_cgroup_usage_bytes)" -ge $((150 << 20)) ] 2>/dev/null; }
	wait_until 15 held_seen
	touch "$T/cg-go"
	wait_until 15 test -e "$T/cg-freed"
	freed_seen() { curl_m && [ "$(metric rsswatch_cgroup_usage_bytes)" -lt $((100 << 20)) ] 2>/dev/null; }
	if wait_until 15 freed_seen; then ok "a sample after the free is served"; else not_ok "a sample after the free is served"; diag "$(cat "$T/cgrec.err"; curl -sS "http://127.0.0.1:$p/metrics" 2>&1 | head -5)"; fi
	peak=$(metric rsswatch_cgroup_peak_bytes)
	diag "after the free: usage $(metric rsswatch_cgroup_usage_bytes), peak ${peak:-none}"
	check "the kernel's figure while held was read (150 MiB or more)" test "${ref:-0}" -ge $((150 << 20))
	check "rsswatch_cgroup_peak_bytes after the free is still the charged peak (>= ${ref:-?})" \
		test "${peak:-0}" -ge "${ref:-1}"
	check "... and no more than the limit" test -n "$peak" -a "${peak:-0}" -le $((1 << 30))
	touch "$T/cg-end"
	finish "$cgrec"
	check "the cgroup run ends with 0" test "$RC" -eq 0
fi
done_testing
