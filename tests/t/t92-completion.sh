#!/bin/sh
# The shell completions (dist/completion/): bash's completion function driven as bash
# drives it (COMP_WORDS, COMP_CWORD, then COMPREPLY), offering verbs, a verb's options
# from its option table, a choice's values, run ids from the database (--db too),
# process names and ids, files and commands; zsh's script parsed and its function run
# with compadd stood in for. Prints TAP.
. tests/t/lib.sh
BASH_SCRIPT=$TOP/dist/completion/rsswatch
ZSH_SCRIPT=$TOP/dist/completion/_rsswatch
if ! command -v bash >/dev/null 2>&1; then
	echo "1..0 # SKIP bash not installed"
	exit 0
fi
mkdir "$T/bin"
ln -s "$RSW" "$T/bin/rsswatch"

# comp WORD...: the words of a command line, the last being completed (bash splits
# "--opt=" at '=' itself: give "--opt" "=" "" for that); COMPREPLY, one per line, sorted
comp() {
	PATH="$T/bin:$PATH" bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		_rsswatch
		for w in "${COMPREPLY[@]}"; do printf "%s\n" "$w"; done | sort' \
		sh "$BASH_SCRIPT" rsswatch "$@"
}
# offers DESC WANT WORD...: the completion of WORD... is exactly WANT (lines)
offers() {
	_d=$1 _want=$2
	shift 2
	comp "$@" >"$T/got"
	if [ "$(cat "$T/got")" = "$_want" ]; then
		ok "$_d"
	else
		not_ok "$_d"
		diag "completing: $*" "wanted:" "$_want" "got:" "$(cat "$T/got")"
	fi
}
# has DESC LINE WORD...: the completion of WORD... includes LINE
has() {
	_d=$1 _want=$2
	shift 2
	comp "$@" >"$T/got"
	if grep -qxF -- "$_want" "$T/got"; then
		ok "$_d"
	else
		not_ok "$_d"
		diag "completing: $*" "wanted among them: $_want" "got:" "$(head -20 "$T/got")"
	fi
}

check "bash: the script parses" bash -n "$BASH_SCRIPT"

# --- verbs and options, from the tables
offers "verbs: 're' is record or report" "$(printf 'record\nreport')" re
"$RSW" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | sort >"$T/verbs"
comp "" >"$T/got"
check "verbs: '' offers every verb of --help ($(lines "$T/verbs")), nothing else" \
	cmp -s "$T/verbs" "$T/got"
offers "verbs: the hidden __complete is not offered" "" __
offers "record: '--memo' is --memory-limit" "--memory-limit" record --memo
# every long option of record --help's options part, and only those
"$RSW" record --help | sed -n 's/^  \(-., \|    \)\(--[a-z][a-z-]*\).*/\2/p' | sort -u >"$T/opts"
comp record -- >"$T/got"
check "record: '--' offers every option record --help lists ($(lines "$T/opts")), nothing else" \
	cmp -s "$T/opts" "$T/got"
offers "rsswatch --db PATH VERB: options still by the verb" "--json" --db "$T/x.db" show --js

# --- values: a choice, formats, files, commands
offers "record --stacks=: the choice's values" "$(printf 'faults\nmalloc\nmmap')" record --stacks = ""
offers "record --stacks=f: faults" "faults" record --stacks = f
offers "show --format: text or json" "$(printf 'json\ntext')" show --format ""
offers "export -f: the row formats" "$(printf 'csv\njsonl\ntsv')" export -f ""
: >"$T/pick-me.svg"
offers "plot -o: files" "$T/pick-me.svg" plot -o "$T/pick-"
offers "--db: files" "$T/pick-me.svg" ls --db "$T/pick-"
cp /bin/true "$T/bin/rswcmd$$"
offers "record -- COMMAND: commands" "rswcmd$$" record -- "rswcmd$$"
offers "record COMMAND ARG: files" "$T/pick-me.svg" record -- "rswcmd$$" "$T/pick-"

check "the bash script registers its function for rsswatch (complete -p)" \
	sh -c 'bash -c ". \"\$1\"; complete -p rsswatch" sh "$1" | grep -q -- "-F _rsswatch rsswatch\$"' \
	sh "$BASH_SCRIPT"

# --- runs from the database
offers "show RUN without a database: last" "last" show ""
"$RSW" record -q -- /bin/true >"$OUT" 2>"$ERR"
"$RSW" ls --json >"$T/ls.json"
id=$(jget "$T/ls.json" '$[0].id')
offers "show RUN: last and the recorded run $id" "$(printf '%s\nlast' "$id")" show ""
has "compare RUN RUN: the run again" "$id" compare "$id" ""
has "mark --run: the run" "$id" mark --run ""
"$RSW" record -q --db "$T/other.db" -- /bin/true >"$OUT" 2>"$ERR"
"$RSW" record -q --db "$T/other.db" -- /bin/true >"$OUT" 2>"$ERR"
offers "show --db: that database's runs" "$(printf '1\n2\nlast')" show --db "$T/other.db" ""
offers "rsswatch --db PATH show: that database's runs" "$(printf '1\n2\nlast')" \
	--db "$T/other.db" show ""
offers "rm RUN: by prefix" "2" rm --db="$T/other.db" 2
"$RSW" record -q -l labelled --param pw=12 -- /bin/true >"$OUT" 2>"$ERR"
offers "compare --by: the runs' parameter keys" "pw" compare --by ""
# a followed service's series (record --follow stores its id in each run's row)
sqlite3 "$T/other.db" "update run set series = 7 where id = 2"
offers "show --db: the runs, and s7 for the series of run 2" "$(printf '1\n2\nlast\ns7')" \
	show --db "$T/other.db" ""
offers "compare s: the series by its id" "s7" compare --db "$T/other.db" s
# the counter and gauge names of the run named on the line, in a comma list
if [ -x "$BUILD/examples/pipeline" ]; then
	"$RSW" record -q --db "$T/counters.db" -- "$BUILD/examples/pipeline" --workers 1 \
		--size 1 --rounds 1 --gpu-ms 0 >"$OUT" 2>"$ERR"
	offers "plot --counters: the run's counter names" \
		"$(printf 'buffers_in_flight\nbytes_in_flight\npartitions_done')" \
		plot --db "$T/counters.db" 1 --counters ""
	offers "plot --counters A,: the names after the comma keep A in front" \
		"partitions_done,buffers_in_flight" plot --db "$T/counters.db" 1 --counters \
		partitions_done,bu
else
	skip "plot --counters: the run's counter names ($BUILD/examples/pipeline not built)"
	skip "plot --counters A,: the names after the comma keep A in front"
fi
offers "ls --param: KEY=" "pw=" ls --param ""

# --- processes: -n by name, -p by id
name=rswcomp$$
cp /bin/sleep "$T/$name"
spawn sleeper "$T/$name" 600
sleeper=$!
wait_until 10 grep -qx "$name" "/proc/$sleeper/comm"
offers "record -n: a running process's name" "$name" record -n rswcomp
offers "record --name=: the same" "$name" record --name = rswcomp
offers "agent -n: the same" "$name" agent -n rswcomp
has "record -p: its pid" "$sleeper" record -p "$sleeper"
kill "$sleeper"
finish "$sleeper" 10
offers "record -n: a process gone is not offered" "" record -n rswcomp

# --- zsh
if command -v zsh >/dev/null 2>&1; then
	check "zsh: the script parses (zsh -n)" zsh -n "$ZSH_SCRIPT"
	# the function itself, compadd and compset standing in for zsh's completion system
	zcomp() {
		PATH="$T/bin:$PATH" zsh -f -c '
			compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }
			compset() { return 0 }
			_files() { print files }
			_command_names() { print commands }
			script=$1; shift
			words=(rsswatch "$@"); CURRENT=${#words}
			source "$script"' zsh "$ZSH_SCRIPT" "$@" | sort
	}
	check "zsh: 're' is record or report" test "$(zcomp re)" = "$(printf 'record\nreport')"
	check "zsh: record --stacks=: the choice's values" \
		test "$(zcomp record --stacks=)" = "$(printf 'faults\nmalloc\nmmap')"
	check "zsh: plot -o: files" \
		test "$(zcomp plot -o "")" = files
else
	skip "zsh not installed (scripts/deps.sh test installs it)"
fi
done_testing
