#!/bin/sh
# The Python package (bindings/python): its pytest suite, each test one TAP line (a
# real recorder around Python programs, read back and compared with show --json, ls
# --json and export), then a real pip install into a venv, imported from outside the
# source tree. Debian's /usr/bin/python3 only. Prints TAP.
. tests/t/lib.sh
PY=/usr/bin/python3
if ! $PY -c 'import pytest' 2>/dev/null; then
	echo "not ok 1 - python3-pytest is installed (scripts/deps.sh test)"
	exit 1
fi
if [ ! -f "$BUILD/librsswatch.so" ]; then
	echo "not ok 1 - $BUILD/librsswatch.so is built (make)"
	exit 1
fi
# A sanitizer build's library needs the ASan runtime first in the process, which
# /usr/bin/python3 does not have: that build's suite skips this one.
if ldd "$BUILD/librsswatch.so" 2>/dev/null | grep -q libasan; then
	echo "1..0 # SKIP $BUILD/librsswatch.so is built with AddressSanitizer: python3 cannot load it"
	exit 0
fi
export BUILD
# one TAP line per pytest result, from its junit xml
BUILD=$BUILD $PY -m pytest -q -p no:cacheprovider --junitxml="$T/junit.xml" \
	bindings/python/tests >"$T/pytest.out" 2>&1
prc=$?
if [ -s "$T/junit.xml" ]; then
	$PY - "$T/junit.xml" >"$T/tap" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).iter("testcase"):
    name = "python: %s::%s" % (case.get("classname", "").rsplit(".", 1)[-1], case.get("name"))
    bad = case.find("failure") if case.find("failure") is not None else case.find("error")
    if bad is not None:
        print("not ok %s" % name)
        for line in (bad.get("message") or "").splitlines()[:6]:
            print("# " + line)
    elif case.find("skipped") is not None:
        print("skip %s" % (case.find("skipped").get("message") or name))
    else:
        print("ok %s" % name)
PYEOF
	while IFS= read -r line; do
		case "$line" in
		"not ok "*) not_ok "${line#not ok }" ;;
		"ok "*) ok "${line#ok }" ;;
		"skip "*) skip "${line#skip }" ;;
		"# "*) diag "${line#\# }" ;;
		esac
	done <"$T/tap"
fi
check "python: pytest ran (status $prc) and wrote its results" test -s "$T/tap"
check "python: pytest exits 0" test "$prc" -eq 0
[ "$prc" -eq 0 ] || { diag "pytest said:"; tail -30 "$T/pytest.out" | while IFS= read -r l; do diag "  $l"; done; }
check "python: more than 20 pytest results" test "$(grep -c '^ok ' "$T/tap" 2>/dev/null || echo 0)" -gt 20

# --- pip install, offline, into a venv; imported from outside the tree ---
$PY -m venv --system-site-packages "$T/venv" >"$T/venv.out" 2>&1
check "pip: a venv is made" test -x "$T/venv/bin/python"
# a copy of the package's directory: pip builds in it, and the tree stays as it was
git status --porcelain --ignored bindings/python >"$T/status.before" 2>&1
cp -r bindings/python "$T/src"
rm -rf "$T/src/tests"
"$T/venv/bin/python" -m pip install --no-index --no-build-isolation "$T/src" \
	>"$T/pip.out" 2>&1
prc=$?
check "pip: install --no-index --no-build-isolation succeeds" test "$prc" -eq 0
[ "$prc" -eq 0 ] || diag "$(tail -5 "$T/pip.out")"
mkdir "$T/elsewhere"
(cd "$T/elsewhere" && env -u PYTHONPATH RSSWATCH_LIB="$BUILD/librsswatch.so" \
	"$T/venv/bin/python" -c '
import rsswatch, sys
print(rsswatch.__file__)
print(rsswatch.__version__, rsswatch.enabled(), rsswatch.library_path())
rsswatch.mark("from the venv")
rsswatch.counter("venv_items").add(3)
' >"$T/venv-import.out" 2>&1)
check "pip: the installed package imports from outside the tree" \
	grep -q "^$T/venv/lib/python3[0-9.]*/site-packages/rsswatch/__init__.py\$" "$T/venv-import.out"
check "pip: it loads the library named by RSSWATCH_LIB" \
	grep -qx "0.1.0 True $BUILD/librsswatch.so" "$T/venv-import.out"
[ -f "$T/venv-import.out" ] && diag "$(cat "$T/venv-import.out")"
# outside the tree, without RSSWATCH_LIB and with no library on the loader's path,
# the first call says so in one line
(cd "$T/elsewhere" && env -u PYTHONPATH -u RSSWATCH_LIB LD_LIBRARY_PATH= \
	"$T/venv/bin/python" -c '
import ctypes.util, rsswatch
if ctypes.util.find_library("rsswatch"):
    print("installed")
else:
    try:
        rsswatch.mark("x")
    except rsswatch.LibraryError as e:
        print(e)
' >"$T/nolib.out" 2>&1)
if grep -qx installed "$T/nolib.out"; then
	skip "pip: without the library the first call says so (librsswatch is installed here)"
else
	check "pip: without the library the first call says so in one line" \
		sh -c "[ \$(wc -l <'$T/nolib.out') -eq 1 ] && grep -q '^librsswatch.so.1 not found (tried librsswatch.so.1): install rsswatch' '$T/nolib.out'"
fi
# the readers work from the installed package against a recorded run
"$RSW" record -q -i 20ms -- "$HOG" +1M >/dev/null 2>&1
check "pip: the installed package reads a run back" sh -c \
	"cd '$T/elsewhere' && '$T/venv/bin/python' -c 'import rsswatch; r = rsswatch.runs(as_frame=False)[-1]; assert r[\"samples\"] > 0 and r[\"outcome\"] == \"exited\", r'"
git status --porcelain --ignored bindings/python >"$T/status.after" 2>&1
check "pip: the source tree is unchanged by the install" cmp -s "$T/status.before" "$T/status.after"
done_testing
