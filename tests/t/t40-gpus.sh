#!/bin/sh
# rsswatch gpus against the fake NVML library (tests/fake/fake_nvml.c), and with no
# driver at all. Prints TAP.
. tests/t/lib.sh
fake=$BUILD/fake/libnvidia-ml.so.1
if [ ! -f "$fake" ]; then
	echo "1..0 # SKIP $fake not built"
	exit 0
fi
gpus() {	# gpus SCRIPT [ARGS...]: runs the verb against the fake; out, err, rc
	script=$1; shift
	RSSWATCH_NVML_LIB=$fake FAKE_NVML_SCRIPT=$script "$RSW" gpus "$@" \
		>"$T/out" 2>"$T/err"
	rc=$?
}

cat >"$T/two" <<'END'
device 0 name "Fake H200" total 141G used 12G
device 1 name "Fake H200" total 141G used 0
proc self device 0 bytes 3G
proc 4194304 device 1 bytes na
END
gpus "$T/two"
check "gpus exits 0 with the fake driver" test "$rc" -eq 0
check "device 0 shows used and total" \
	grep -Eq '^0 +Fake H200 +12\.0 GiB +141\.0 GiB$' "$T/out"
check "device 1 shows zero used" grep -Eq '^1 +Fake H200 +0 B +141\.0 GiB$' "$T/out"
check "the process using memory is listed with its comm" \
	grep -Eq '^[0-9]+ +rsswatch +0 +C +3\.0 GiB$' "$T/out"
check "unavailable usage is n/a and an unknown pid has no comm" \
	grep -Eq '^4194304 +\? +1 +C +n/a$' "$T/out"
check "nothing on stderr" test ! -s "$T/err"

gpus "$T/two" --json
check "gpus --json exits 0" test "$rc" -eq 0
check "json has device memory in bytes" \
	grep -q '"index":0,"name":"Fake H200",.*"used_bytes":12884901888,"total_bytes":151397597184' "$T/out"
check "json has the process, null for unavailable bytes" \
	grep -q '"comm":"rsswatch","device":0,"type":"C","bytes":3221225472}.*"pid":4194304,"comm":null,"device":1,"type":"C","bytes":null}' "$T/out"
if command -v python3 >/dev/null 2>&1; then
	json_ok() { python3 -m json.tool "$T/out" >/dev/null 2>&1; }
	check "json parses" json_ok
fi

cat >"$T/lost" <<'END'
device 0 name "Fake H200" total 141G used 1G
device 1 name "Gone" total 141G used 1G
fail memory device 1 error lost
END
gpus "$T/lost"
check "a lost device is shown as lost, not an error" test "$rc" -eq 0
check "lost device line" grep -Eq '^1 +Gone +lost +-$' "$T/out"
check "no processes line" grep -q '^no processes are using GPU memory$' "$T/out"

RSSWATCH_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$RSW" gpus >"$T/out" 2>"$T/err"
rc=$?
check "no driver: exit 1" test "$rc" -eq 1
check "no driver: nothing on stdout" test ! -s "$T/out"
check "no driver: one line on stderr" test "$(wc -l <"$T/err")" -eq 1
check "no driver: the message names the library" \
	grep -q '^rsswatch: no NVIDIA driver found (/nonexistent/libnvidia-ml.so.1: .*)$' "$T/err"

"$RSW" gpus --help >"$T/out" 2>&1
check "--help exits 0" test $? -eq 0
check "--help prints usage" grep -q '^usage: rsswatch gpus' "$T/out"
"$RSW" gpus --bogus >/dev/null 2>&1
check "an unknown option exits 2" test $? -eq 2
done_testing
