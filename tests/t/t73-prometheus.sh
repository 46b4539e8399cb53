#!/bin/sh
# record --listen scraped by a real Prometheus server (Debian's prometheus package, from
# scripts/deps.sh test) every second, with the alerting rules of docs/guide/alerts.yml loaded:
# the resident bytes Prometheus holds agree with what rsswatch stored for the same
# moment (memory held steady), and after a real OOM kill of a member in a
# --memory-limit cgroup the OOM-kill counter rises and RsswatchOOMKill fires. Also
# promtool check rules on docs/guide/alerts.yml. Skipped only where prometheus cannot run,
# or (the OOM part) without root and a memory cgroup controller. Prints TAP.
. tests/t/lib.sh

if ! prometheus --version >/dev/null 2>&1 || ! promtool --version >/dev/null 2>&1 ||
   ! command -v curl >/dev/null 2>&1; then
	echo "1..0 # SKIP prometheus, promtool or curl cannot run here (scripts/deps.sh test installs them)"
	exit 0
fi
. tests/t/memcg.sh
cgdir=$(memcg_dir)
oom_ok=0
[ "$(id -u)" -eq 0 ] && [ -n "$cgdir" ] && [ -d "$cgdir" ] && oom_ok=1

promtool check rules docs/guide/alerts.yml >"$T/rules" 2>&1
check "promtool check rules docs/guide/alerts.yml" test "$?" -eq 0
grep -q "SUCCESS: 3 rules found" "$T/rules" || diag "$(cat "$T/rules")"

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
rport=$(free_port)
pport=$(free_port)
while [ "$pport" = "$rport" ]; do pport=$(free_port); done
prom="http://127.0.0.1:$pport"

# The recording: a launched tree in a 256 MiB cgroup. One memhog holds 64 MiB and then
# stays as it is; another, when told, asks for 512 MiB and is OOM-killed.
limit=256M
[ "$oom_ok" = 1 ] || limit=""
spawn rec "$RSW" record -q -i 200ms ${limit:+--memory-limit $limit} --listen "127.0.0.1:$rport" -- \
	sh -c "\"$HOG\" +64M touch \"$T/ready\" sleep 120s & \"$HOG\" await \"$T/go\" +512M; wait"
rec=$!

cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $TOP/docs/guide/alerts.yml
scrape_configs:
  - job_name: rsswatch
    static_configs:
      - targets: ['127.0.0.1:$rport']
EOF
spawn prometheus prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn
pserver=$!
ready() { curl -sf "$prom/-/ready" >/dev/null 2>&1; }
if wait_until 60 ready; then ok "prometheus starts on loopback"; else
	not_ok "prometheus starts on loopback"; diag "$(tail -5 "$T/prometheus.err")"; fi

# query PROMQL: the value of the first series of an instant query ("" when none)
query() {
	curl -s "$prom/api/v1/query" --data-urlencode "query=$1" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
v = r.get("data", {}).get("result", [])
print(v[0]["value"][1] if v else "")'
}
# Has Prometheus scraped rsswatch at least N times with samples in it?
scraped() { [ "$(query "count_over_time(rsswatch_resident_bytes[1m])")" -ge "$1" ] 2>/dev/null; }
wait_until 20 test -e "$T/ready"
if wait_until 40 scraped 5; then ok "prometheus scrapes rsswatch_resident_bytes"; else
	not_ok "prometheus scrapes rsswatch_resident_bytes"; diag "$(curl -s "$prom/api/v1/targets")"; fi
curl -s "$prom/api/v1/targets" >"$T/targets"
check "the target is up, with no scrape error" \
	grep -q '"health":"up"' "$T/targets"
grep -q '"lastError":""' "$T/targets" || diag "$(cat "$T/targets")"
check "the scrape has no error" grep -q '"lastError":""' "$T/targets"

# The resident bytes: Prometheus's value against the samples rsswatch stored around
# the moment of that value (memory is steady: within 3%).
curl -s "$prom/api/v1/query" --data-urlencode 'query=rsswatch_resident_bytes' >"$T/q"
pv=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["result"][0]["value"][1])' "$T/q" 2>/dev/null)
pt=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["result"][0]["value"][0])' "$T/q" 2>/dev/null)
check "prometheus holds a resident figure above 64 MiB" test "${pv:-0}" -gt 67108864
check "its series has the run, pid and comm labels" \
	sh -c "grep -q '\"comm\":\"sh\"' '$T/q' && grep -q '\"pid\":\"[0-9]*\"' '$T/q' && grep -q '\"run\":\"[0-9]*\"' '$T/q'"

if [ "$oom_ok" = 1 ]; then
	pre=$(query 'rsswatch_oom_kills_total')
	check "no OOM kill counted before it happens" test "$pre" = 0
	touch "$T/go"
	oom_seen() { [ "$(query 'rsswatch_oom_kills_total')" -ge 1 ] 2>/dev/null; }
	if wait_until 30 oom_seen; then ok "prometheus sees rsswatch_oom_kills_total rise after the OOM kill"
	else not_ok "prometheus sees rsswatch_oom_kills_total rise after the OOM kill"; fi
	firing() { curl -s "$prom/api/v1/alerts" | grep -q '"alertname":"RsswatchOOMKill".*"state":"firing"'; }
	check "the alert RsswatchOOMKill fires" wait_until 20 firing
	check "the recording goes on after a member's OOM kill" alive "$rec"
else
	skip "the OOM kill: needs root and a memory cgroup controller"
	skip "RsswatchOOMKill"
	skip "the recording after the OOM kill"
fi

kill -TERM "$rec"
finish "$rec"
check "the recorder ends on SIGTERM" test "$RC" -eq 143
run_id=$(sqlite3 "$RSSWATCH_DB" 'select id from run order by id desc limit 1')
# the stored samples of the 3 s up to the moment of Prometheus's value (its scrape was
# in them; the OOM kill's memhog started growing after it)
sv=$(sqlite3 "$RSSWATCH_DB" "select avg(s.rss) from sample s join run r on r.id = s.run_id
	where r.id = $run_id and (r.started_at + s.elapsed_ns) / 1e9 between ${pt:-0} - 3 and ${pt:-0}")
diag "resident bytes: prometheus $pv, rsswatch stored ${sv:-nothing} (at $pt)"
close() { /usr/bin/python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(not (b > 0 and abs(a - b) / b < 0.03))' "$1" "$2"; }
check "prometheus's resident bytes within 3% of what rsswatch stored for that moment" \
	close "${pv:-0}" "${sv:-0}"
if [ "$oom_ok" = 1 ]; then
	check "the run stores the OOM kill" \
		test "$(sqlite3 "$RSSWATCH_DB" "select count(*) from oom_kill where run_id = $run_id")" -ge 1
fi
kill -TERM "$pserver"
finish "$pserver"
check "prometheus ends cleanly" test "$RC" -eq 0
done_testing
