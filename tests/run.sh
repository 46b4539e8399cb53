#!/bin/sh
# Runs every test suite and ends with one line "N passed, N failed" over all of them.
# Unit tests (cmocka) and shell tests both speak TAP: each "ok" or "not ok" line is one
# test. A suite that dies without reporting counts as one failed test.
# Run a subset with: tests/run.sh PATTERN (matched against the suite's file name).
set -u
BUILD=${BUILD:-build}
export BUILD
# the sanitizer build: leaks that are third-party libraries' caches, not ours
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0}
export LSAN_OPTIONS
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
pattern=${1:-}
log=$(mktemp -d "${TMPDIR:-/tmp}/rsswatch-tests.XXXXXX")
passed=0
failed=0
skipped=0

run_suite() {	# run_suite NAME COMMAND...
	name=$1; shift
	case "$name" in *"$pattern"*) ;; *) return ;; esac
	out="$log/$(basename "$name").tap"
	CMOCKA_MESSAGE_OUTPUT=TAP "$@" >"$out" 2>"$out.err"
	rc=$?
	# a skipped test ("ok N - # SKIP why") is neither a pass nor a failure
	k=$(grep -Ec '^ok [0-9]+( -)? *# *SKIP' "$out")
	p=$(($(grep -c '^ok ' "$out") - k))
	f=$(grep -c '^not ok ' "$out")
	skipped=$((skipped + k))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$out"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -eq 0 ] && [ "$k" -gt 0 ]; then
		printf '%-40s %4d passed, %d skipped\n' "$name" "$p" "$k"
		grep -E '^ok [0-9]+( -)? *# *SKIP' "$out" | sed 's/^/    /' | head -5
	elif [ "$f" -eq 0 ]; then
		printf '%-40s %4d passed\n' "$name" "$p"
	else
		printf '%-40s %4d passed, %d FAILED\n' "$name" "$p" "$f"
		grep -E '^(not ok|#)' "$out" | sed 's/^/    /' | head -40
		sed 's/^/    stderr: /' "$out.err" | tail -20
	fi
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_suite "unit/$(basename "$t")" "$t"
done
# every fuzz harness, unguided, for a few seconds (make fuzz runs them under libFuzzer)
for t in "$BUILD"/tests/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	run_suite "fuzz/$(basename "$t")" "$t" "${FUZZ_CHECK_SECONDS:-5}" tests/fixtures
done
for t in tests/t/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	run_suite "shell/$(basename "$t")" sh "$t"
done
rm -rf "$log"
# The closing line stays "N passed, N failed"; skips are counted on the line before.
echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
