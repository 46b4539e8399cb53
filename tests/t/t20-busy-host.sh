#!/bin/sh
# Exit records on a busy host: every exit on the host reaches the listener, and a record
# of a process the run does not know yet (its parent's record comes after it) waits
# for the next drain. Here a loop outside the recording runs /bin/true as fast as it
# can (over a thousand exits a second) while a memhog lives between two samples 5 s
# apart, under a shell that lives between them too: memhog's record comes among
# thousands of others, which the set must set aside (its fork events say they are not
# its own) rather than let them fill the room where memhog's waits.
. tests/t/lib.sh

if [ "$(id -u)" != 0 ]; then
	skip "exit records need root"
	done_testing
fi
sh -c 'while [ ! -e "$1/stop" ]; do /bin/true; done' - "$T" &
flood=$!
at_exit "touch '$T/stop'; kill $flood 2>/dev/null"
n0=$(awk '/^processes/ { print $2 }' /proc/stat)
expect_exit 0 "a memhog under a short shell, between two samples 5 s apart: exit 0" \
	"$RSW" record -q -i 5s -- sh -c 'sleep 2; sh -c "\"\$1\" +100M exit 0" - "$1"; sleep 1' - "$HOG"
n1=$(awk '/^processes/ { print $2 }' /proc/stat)
touch "$T/stop"
finish "$flood" 10
show_json
diag "processes forked on the host during the run: $((n1 - n0)); exit records: $(sfield exit_records)"
check "the host was busy: over 600 processes forked during the run" test $((n1 - n0)) -gt 600
row=$(sql "$RSSWATCH_DB" "SELECT peak_rss || '|' || peak_source FROM process WHERE run_id = (SELECT max(id) FROM run) AND comm = 'memhog'")
diag "memhog's row: ${row:-none}"
check "memhog is in the process table with its exact peak (>= 100 MiB, from its exit record)" \
	awk -F'|' -v r="$row" 'BEGIN { split(r, a, "|"); exit !(a[1] >= 100 * 1048576 && a[2] == "exit record") }'
lost=$(sql "$RSSWATCH_DB" "SELECT detail FROM event WHERE run_id = (SELECT max(id) FROM run) AND kind = 'exit_records_lost'")
diag "exit_records_lost: ${lost:-none}"
check "no exit record was dropped: the others' were set aside" test -z "$lost"
check "the run's peak is at least memhog's" test "$(sfield peak_rss_bytes)" -ge $((100 * 1048576))
done_testing
