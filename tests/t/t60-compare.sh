#!/bin/sh
# compare on real runs of memhog: 100M against 200M must read as higher, repeated runs
# against themselves as no change; --json, -o and usage errors.
set -u
BUILD=${BUILD:-build}
RSW=$BUILD/rsswatch
HOG=$BUILD/tests/bin/memhog
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsw-t60.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export RSSWATCH_DB=$tmp/t.db
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/# /'; }
check() {	# check DESCRIPTION COMMAND...
	d=$1; shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}
echo "1..11"

for size in 100M 100M 200M 200M; do
	"$RSW" record -q -i 20ms -l "hog $size" -- "$HOG" "+$size" sleep 300ms >/dev/null 2>&1
done
check "four runs recorded" test "$("$RSW" ls --json | grep -o '"id":' | wc -l)" -eq 4

out=$("$RSW" compare 1 3 2>&1)
rc=$?
check "compare of two runs succeeds" test "$rc" -eq 0
case "$out" in
*"run 3's peak is "*"% higher than run 1's"*) ok "200M reads as higher than 100M" ;;
*) fail "200M reads as higher than 100M" "$out" ;;
esac
# the difference is about 100 MiB, give or take the process's own few MiB
diff=$(printf '%s\n' "$out" | sed -n 's/^peak .*+\([0-9.]*\) MiB (+[0-9.]*%)$/\1/p')
check "peak difference near 100 MiB ($diff)" awk -v d="${diff:-0}" 'BEGIN { exit !(d > 95 && d < 105) }'

out=$("$RSW" compare 1,2 3,4 2>&1)
case "$out" in
*"B's peak is "*"% higher than A's, well outside the spread within each group"*) ok "groups: a clear difference" ;;
*) fail "groups: a clear difference" "$out" ;;
esac
out=$("$RSW" compare 1,2 2,1 2>&1)
case "$out" in
*"within the spread of repeated runs"*"no evidence of a change"*) ok "groups: no difference" ;;
*) fail "groups: no difference" "$out" ;;
esac

out=$("$RSW" compare 1 3 --json 2>&1)
case "$out" in
'{"runs":[{"id":1,'*'"verdicts":["run 3'*) ok "--json gives one object with a verdict" ;;
*) fail "--json gives one object with a verdict" "$out" ;;
esac

"$RSW" compare 1 2 3 -o "$tmp/o.svg" >/dev/null 2>&1
check "-o draws one RSS line per run" test "$(grep -c '<path fill="none"' "$tmp/o.svg")" -eq 3

"$RSW" compare 1 >/dev/null 2>&1
check "one run is a usage error" test $? -eq 2
"$RSW" compare 1 99 >/dev/null 2>&1
check "a missing run fails" test $? -eq 1
"$RSW" plot 1 2 --align nosuchmark -o "$tmp/p.svg" >/dev/null 2>"$tmp/err"
rc=$?
check "aligning at a missing mark fails and says so" sh -c "[ $rc -eq 1 ] && grep -q \"has no mark 'nosuchmark'\" '$tmp/err'"
