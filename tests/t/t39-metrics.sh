#!/bin/sh
# record --listen: /metrics in the Prometheus text format while recording, OpenMetrics
# when asked; label values escaped (a process name with a double quote); only GET of
# /metrics and / served; a bad or unbindable address refused with exit 2. Prints TAP.
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
name='a"b'
cp "$HOSTILE" "$T/bin/$name"
spawn rec "$RSW" record -q -i 50ms --listen "127.0.0.1:$port" -- "$T/bin/$name" stale "$T/ready"
rec=$!
has_sample() { fetch "$url/metrics" >"$T/m" && grep -q '^rsswatch_app_gauge{' "$T/m"; }
if wait_until 15 has_sample; then ok "/metrics answers while recording"; else not_ok "/metrics answers while recording"; diag "$(cat "$T/rec.err")"; fi
check "content type: Prometheus text 0.0.4" grep -q '^text/plain; version=0.0.4' "$T/ctype"
lbl='{run="[0-9]*",pid="[0-9]*",comm="a\\"b"'
for m in resident anon file shmem swap high_water; do
	check "rsswatch_${m}_bytes with run, pid and the escaped comm" \
		grep -qE "^rsswatch_${m}_bytes$lbl} [0-9]+$" "$T/m"
	check "# TYPE rsswatch_${m}_bytes gauge" grep -qx "# TYPE rsswatch_${m}_bytes gauge" "$T/m"
done
check "resident bytes above 1 MiB" sh -c "grep -E '^rsswatch_resident_bytes\{' '$T/m' | awk '{exit !(\$2 > 1048576)}'"
check "rsswatch_samples_total counts samples" grep -qE "^rsswatch_samples_total$lbl} [1-9][0-9]*$" "$T/m"
check "rsswatch_oom_kills_total is 0" grep -qE "^rsswatch_oom_kills_total$lbl} 0$" "$T/m"
check "# TYPE rsswatch_oom_kills_total counter" grep -qx '# TYPE rsswatch_oom_kills_total counter' "$T/m"
check "rsswatch_cpu_seconds_total by mode" grep -qE "^rsswatch_cpu_seconds_total$lbl,mode=\"system\"} " "$T/m"
check "the recorder's own CPU" grep -qE "^rsswatch_recorder_cpu_seconds_total$lbl,mode=\"user\"} " "$T/m"
check "the application's gauge, by name" grep -qE "^rsswatch_app_gauge$lbl,name=\"stale_gauge\"} 4242$" "$T/m"
check "no raw quote in any label value" sh -c "! grep -v '^#' '$T/m' | grep -q 'comm=\"a\"b\"'"
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
if command -v curl >/dev/null 2>&1; then
	curl -s -o /dev/null -w '%{http_code}' -X POST "$url/metrics" >"$T/status"
	check "POST: 405" test "$(cat "$T/status")" = 405
fi
kill -TERM "$rec"
finish "$rec"
check "the recording ends cleanly on SIGTERM (passed to the command)" test "$RC" -eq 143

not_listening() { ! listening "$1"; }
check "nothing listens on the port after the run" not_listening "$port"

expect_exit 2 "--listen without a port: exit 2" "$RSW" record --listen 127.0.0.1 -- true
check "one line says why" test "$(wc -l <"$ERR")" -eq 1
expect_exit 2 "--listen with a host name: exit 2" "$RSW" record --listen example.com:80 -- true
expect_exit 2 "--listen with port 0: exit 2" "$RSW" record --listen 127.0.0.1:0 -- true
expect_exit 2 "--listen on an address not on this host: exit 2" \
	"$RSW" record --listen 192.0.2.1:$port -- true
check "it says it cannot listen there" grep -q "cannot listen on 192.0.2.1:$port" "$ERR"
done_testing
