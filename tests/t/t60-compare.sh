#!/bin/sh
# compare on real runs of memhog: 100M against 200M must read as higher, repeated runs
# against themselves as no change; --json, -o and usage errors.
. tests/t/lib.sh

for size in 100M 100M 200M 200M; do
	"$RSW" record -q -i 20ms -l "hog $size" -- "$HOG" "+$size" sleep 300ms >/dev/null 2>&1
done
check "four runs recorded" test "$("$RSW" ls --json | grep -o '"id":' | wc -l)" -eq 4

out=$("$RSW" compare 1 3 2>&1)
rc=$?
check "compare of two runs succeeds" test "$rc" -eq 0
case "$out" in
*"run 3's peak is "*"% higher than run 1's"*) ok "200M reads as higher than 100M" ;;
*) not_ok "200M reads as higher than 100M"; diag "$out" ;;
esac
# the difference is about 100 MiB, give or take the process's own few MiB
diff=$(printf '%s\n' "$out" | sed -n 's/^peak .*+\([0-9.]*\) MiB (+[0-9.]*%)$/\1/p')
check "peak difference near 100 MiB ($diff)" awk -v d="${diff:-0}" 'BEGIN { exit !(d > 95 && d < 105) }'

out=$("$RSW" compare 1,2 3,4 2>&1)
case "$out" in
*"B's peak is "*"% higher than A's, well outside the spread within each group"*) ok "groups: a clear difference" ;;
*) not_ok "groups: a clear difference"; diag "$out" ;;
esac
out=$("$RSW" compare 1,2 2,1 2>&1)
case "$out" in
*"within the spread of repeated runs"*"no evidence of a change"*) ok "groups: no difference" ;;
*) not_ok "groups: no difference"; diag "$out" ;;
esac

out=$("$RSW" compare 1 3 --json 2>&1)
case "$out" in
'{"runs":[{"id":1,'*'"verdicts":["run 3'*) ok "--json gives one object with a verdict" ;;
*) not_ok "--json gives one object with a verdict"; diag "$out" ;;
esac

"$RSW" compare 1 2 3 -o "$T/o.svg" >/dev/null 2>&1
check "-o draws one RSS line per run" test "$(grep -c '<path fill="none"' "$T/o.svg")" -eq 3

"$RSW" compare 1 >/dev/null 2>&1
check "one run is a usage error" test $? -eq 2
"$RSW" compare 1 99 >/dev/null 2>&1
check "a missing run fails" test $? -eq 1
"$RSW" plot 1 2 --align nosuchmark -o "$T/p.svg" >/dev/null 2>"$T/err"
rc=$?
check "aligning at a missing mark fails and says so" sh -c "[ $rc -eq 1 ] && grep -q \"has no mark 'nosuchmark'\" '$T/err'"

done_testing
