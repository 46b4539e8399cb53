#!/bin/sh
# --format on every reading verb (render/format.c's table): --format json prints what
# --json prints, --format text what the verb prints by default; a name no format has,
# or a format the verb does not write, is one line naming the formats it accepts and
# exit status 2, as other usage errors; export writes every row format; report and plot
# take the formats of their files.
. tests/t/lib.sh

# three runs with a parameter: enough for `model` (KEYS + 2)
for pw in 1 2 3; do
	"$RSW" record -q -i 20ms --param pw=$pw -- "$HOG" "+$((pw * 8))M" sleep 100ms \
		>/dev/null 2>&1
done
check "three runs recorded" test "$("$RSW" ls --json | grep -c '"id":')" -eq 3

# keep: the last command's output and status, for same.
keep() {
	cp "$OUT" "$T/kept"
	_krc=$RC
}

# same DESC: the last command exited as the kept one did and printed the same bytes.
same() {
	if [ "$RC" -eq "$_krc" ] && [ -s "$OUT" ] && cmp -s "$T/kept" "$OUT"; then
		ok "$1"
	else
		not_ok "$1"
		diag "exit $_krc, then $RC"
		diff "$T/kept" "$OUT" | head -5 | while read -r l; do diag "$l"; done
	fi
}

# both VERB ARGS...: --format json is --json, --format text is the default.
both() {
	run "$RSW" "$@" --json
	keep
	run "$RSW" "$@" --format json
	same "$1 --format json prints what --json prints ($*)"
	run "$RSW" "$@" --format=json
	same "$1 --format=json prints what --json prints"
	run "$RSW" "$@" -f json
	same "$1 -f json prints what --json prints"
	run "$RSW" "$@"
	keep
	run "$RSW" "$@" --format text
	same "$1 --format text prints the default ($*)"
}

both ls
both ls --series
both ls -n 2 --param pw=2
both show 2
both show --events
both compare 1 2 3
both compare 1,2 3 --by pw
both model 'peak ~ pw'

# gc changes the database: each command on its own copy of the same files
for v in a b c d; do
	mkdir "$T/gc.$v"
	cp "$RSSWATCH_DB"* "$T/gc.$v/"
done
run "$RSW" gc --db "$T/gc.a/rsswatch.db" --json
keep
run "$RSW" gc --db "$T/gc.b/rsswatch.db" --format json
same "gc --format json prints what --json prints"
run "$RSW" gc --db "$T/gc.c/rsswatch.db"
keep
run "$RSW" gc --db "$T/gc.d/rsswatch.db" --format text
same "gc --format text prints the default"
both gc --dry-run

fake=$BUILD/fake/libnvidia-ml.so.1
if [ -f "$fake" ]; then
	cat >"$T/gpus" <<'END'
device 0 name "Fake H200" total 141G used 12G
proc 4194304 device 0 bytes 3G
END
	export RSSWATCH_NVML_LIB="$fake" FAKE_NVML_SCRIPT="$T/gpus"
	both gpus
	unset RSSWATCH_NVML_LIB FAKE_NVML_SCRIPT
else
	skip "gpus: $fake not built"
fi

# export: each row format, the same run's rows
expect_exit 0 "export --format csv: exit 0" "$RSW" export 3 --format csv
keep
samples=$("$RSW" show 3 --json | sed -n 's/.*"samples":\([0-9]*\).*/\1/p')
check "export csv: a header and one line per sample ($samples)" \
	test "$(lines "$OUT")" -eq $((samples + 1))
run "$RSW" export 3 -f csv
same "export -f csv prints what --format csv prints"
expect_exit 0 "export --format jsonl: exit 0" "$RSW" export 3 --format=jsonl
check "export jsonl: no header, one object per sample" test "$(lines "$OUT")" -eq "$samples"
check "export jsonl: every line an object" sh -c "! grep -qv '^{.*}\$' '$OUT'"
# every row format export --help names (the table's) writes every sample, with its
# header line where it has one: a format added to the table is tried here with no edit
formats=$("$RSW" export --help | sed -n 's/^  -f, --format F  *//p' | sed 's/,/ /g; s/ or / /')
check "export --help names the row formats ($formats)" test -n "$formats"
for f in $formats; do
	expect_exit 0 "export --format $f: exit 0" "$RSW" export 3 --format "$f"
	n=$(lines "$OUT")
	check "export --format $f: one line per sample, a header at most ($n)" \
		test "$n" -eq "$samples" -o "$n" -eq $((samples + 1))
done

# report and plot: the format of the file they write
run "$RSW" report 2 -o -
keep
run "$RSW" report 2 --format html -o -
same "report --format html writes the page report -o - writes"
run "$RSW" plot 2 -o -
keep
run "$RSW" plot 2 --format svg -o -
same "plot --format svg -o - writes what plot -o - writes"
"$RSW" plot 2 -o "$T/p.svg" >/dev/null 2>&1
check "plot --format svg -o - writes what -o FILE.svg holds" cmp -s "$OUT" "$T/p.svg"
expect_exit 2 "plot --format png with -o FILE.svg: exit 2" "$RSW" plot 2 --format png -o "$T/q.svg"
check "plot: the name and the format disagree, in one line" \
	sh -c "test \$(wc -l <'$ERR') -eq 1 && grep -q 'disagree' '$ERR'"
check "plot: nothing written" test ! -e "$T/q.svg"

# bad_format DESC WANT VERB ARGS...: exit 2 and one line on stderr holding WANT,
# nothing on stdout.
bad_format() {
	_d=$1
	_w=$2
	shift 2
	run "$@"
	if [ "$RC" -eq 2 ] && [ "$(lines "$ERR")" -eq 1 ] && grep -qF -- "$_w" "$ERR" &&
	    [ ! -s "$OUT" ]; then
		ok "$_d"
	else
		not_ok "$_d"
		diag_run
	fi
}

for v in ls "show 1" "compare 1 2" "model peak~pw" gc gpus; do
	# shellcheck disable=SC2086
	set -- $v
	bad_format "$1 --format xml: exit 2, one line naming text and json" \
		"rsswatch $1: unknown format 'xml': give text or json (see 'rsswatch $1 --help')" \
		"$RSW" "$@" --format xml
	bad_format "$1 --format csv: refused, naming text and json" \
		"rsswatch $1: $1 does not write csv: give text or json" "$RSW" "$@" --format csv
	bad_format "$1 --format JSON: names are exact" "unknown format 'JSON'" "$RSW" "$@" --format JSON
	bad_format "$1 --format without a value: exit 2" "needs a value" "$RSW" "$@" --format
done
bad_format "export --format xml: exit 2, one line naming the row formats" \
	"rsswatch export: unknown format 'xml': give csv" "$RSW" export 1 --format xml
bad_format "export --format json: refused, jsonl named" \
	"rsswatch export: export does not write json: give csv" "$RSW" export 1 --format json
bad_format "export --format text: refused" "export does not write text" "$RSW" export 1 -f text
bad_format "export without --format: the formats named" "give --format csv" "$RSW" export 1
bad_format "report --format json: refused, html named" \
	"rsswatch report: report does not write json: give html" "$RSW" report 1 --format json -o -
bad_format "plot --format html: refused, svg and png named" \
	"rsswatch plot: plot does not write html: give svg or png" "$RSW" plot 1 --format html -o -
bad_format "a format name with an escape byte stays one printable line" \
	"unknown format 'x?y'" "$RSW" ls --format "$(printf 'x\033y')"

# --help names the formats
for v in ls show compare model gc gpus export report plot; do
	run "$RSW" $v --help
	check "$v --help names --format" grep -q -- '--format' "$OUT"
done
run "$RSW" export --help
check "export --help lists the row formats from the table" grep -Eq 'format F +csv' "$OUT"

done_testing
