#!/bin/sh
# The Debian packages (debian/, make deb): built from a copy of the source tree by
# dpkg-buildpackage, checked by lintian (no error), unpacked with dpkg -x into a scratch
# root (never installed on this machine), their files where Debian wants them, the
# installed binary run, and the example client program compiled against the -dev
# package through pkg-config and run, linked statically and dynamically. The package
# build is a fresh build of its own (debian/rules), whatever $BUILD's flags. About 2
# minutes here (2 cores), most of it the build. Prints TAP.
. tests/t/lib.sh
for tool in dpkg-buildpackage dh fakeroot lintian pkg-config; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "1..0 # SKIP $tool not installed (scripts/deps.sh test installs it)"
		exit 0
	fi
done
version=$(sed -n '1s/^rsswatch (\([^)]*\)).*/\1/p' debian/changelog)
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
D=$T/deb
R=$T/root
libdir=usr/lib/$triplet

# --- the build
# what git sees besides its tracked files, before and after: nothing new
tree_extra() { git status --porcelain --ignored 2>/dev/null | sort; }
tree_extra >"$T/tree.before"
start=$(now_ms)
if scripts/deb.sh "$D" >"$OUT" 2>"$ERR"; then
	ok "scripts/deb.sh builds the packages ($(( ($(now_ms) - start) / 1000 ))s)"
else
	not_ok "scripts/deb.sh builds the packages"
	diag_run
fi
for p in rsswatch librsswatch1 librsswatch-dev; do
	check "package $p ${version} for $arch is built" test -f "$D/${p}_${version}_$arch.deb"
done
tree_extra >"$T/tree.after"
check "the source tree gains no file (dpkg-buildpackage ran in a copy)" \
	cmp -s "$T/tree.before" "$T/tree.after"
check "nothing is written beside the source tree" \
	test -z "$(ls -d ../rsswatch_* ../librsswatch* 2>/dev/null)"

# --- lintian: no error; the warnings left are the ones docs/guide/install.md lists
lintian --fail-on error "$D"/*.changes >"$T/lintian" 2>"$T/lintian.err"
lrc=$?
if [ "$lrc" -eq 0 ] && ! grep -q '^E:' "$T/lintian"; then
	ok "lintian: no errors ($(grep -c '^W:' "$T/lintian") warnings)"
else
	not_ok "lintian: no errors (status $lrc)"
	diag "$(grep '^E:' "$T/lintian")" "$(tail -5 "$T/lintian.err")"
fi
grep '^W:' "$T/lintian" | sed 's/^W: [^:]*: \([a-z0-9-]*\).*/\1/' | sort -u >"$T/warned"
undocumented=$(while read -r tag; do
	grep -q -- "$tag" docs/guide/install.md || echo "$tag"; done <"$T/warned")
check "lintian: every warning is listed in docs/guide/install.md" test -z "$undocumented"
[ -n "$undocumented" ] && diag "not listed: $undocumented"

# --- unpacked into a scratch root; each file in its package
in_pkg() {	# in_pkg PACKAGE PATH...: the package holds each path
	_p=$1; shift
	dpkg-deb -c "$D/${_p}_${version}_$arch.deb" | awk '{ print $6 }' | sed 's|^\./||' >"$T/list"
	for _f; do grep -qxF -- "$_f" "$T/list" || { diag "$_p lacks $_f"; return 1; }; done
}
check "rsswatch: the binary, man page, unit and completions" in_pkg rsswatch usr/bin/rsswatch \
	usr/share/man/man1/rsswatch.1.gz lib/systemd/system/rsswatch-agent.service \
	usr/share/bash-completion/completions/rsswatch usr/share/zsh/vendor-completions/_rsswatch
check "librsswatch1: the shared library" in_pkg librsswatch1 "$libdir/librsswatch.so.1"
check "librsswatch-dev: header, static library, .so link and pkg-config file" \
	in_pkg librsswatch-dev usr/include/rsswatch.h "$libdir/librsswatch.a" \
	"$libdir/librsswatch.so" "$libdir/pkgconfig/rsswatch.pc"
check "librsswatch1 carries a symbols file naming rsw_mark" \
	sh -c "dpkg-deb -I '$D/librsswatch1_${version}_$arch.deb' symbols | grep -q '^ rsw_mark@Base'"
mkdir "$R"
for p in rsswatch librsswatch1 librsswatch-dev; do dpkg-deb -x "$D/${p}_${version}_$arch.deb" "$R"; done
check "librsswatch.so.1's soname is librsswatch.so.1" \
	sh -c "readelf -d '$R/$libdir/librsswatch.so.1' | grep -q 'SONAME.*\[librsswatch.so.1\]'"
check "librsswatch.so links to librsswatch.so.1" test "$(readlink "$R/$libdir/librsswatch.so")" = librsswatch.so.1
check "the unit starts /usr/bin/rsswatch" \
	grep -q '^ExecStart=/usr/bin/rsswatch agent ' "$R/lib/systemd/system/rsswatch-agent.service"
check "the man page is rsswatch(1)" sh -c "zcat '$R/usr/share/man/man1/rsswatch.1.gz' | grep -q '^\.TH RSSWATCH 1'"

# --- the installed binary
expect_exit 0 "the installed rsswatch --version runs" "$R/usr/bin/rsswatch" --version
check "it says version $version" test "$(cat "$OUT")" = "rsswatch $version"
expect_exit 0 "the installed rsswatch records /bin/true" \
	"$R/usr/bin/rsswatch" record -q --db "$T/pkg.db" -- /bin/true
"$R/usr/bin/rsswatch" show --db "$T/pkg.db" --json >"$T/pkg.json" 2>"$ERR"
check "the run is stored: outcome exited, status 0" \
	test "$(jget "$T/pkg.json" '$.outcome') $(jget "$T/pkg.json" '$.exit_code')" = "exited 0"
compl=$(PATH="$R/usr/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(rsswatch re); COMP_CWORD=1
	_rsswatch; echo "${COMPREPLY[*]}"' sh "$R/usr/share/bash-completion/completions/rsswatch")
check "the installed bash completion asks the installed binary" test "$compl" = "record report"

# --- the client program against the -dev package, through pkg-config
PKG_CONFIG_PATH=$R/$libdir/pkgconfig
PKG_CONFIG_SYSROOT_DIR=$R
PKG_CONFIG_LIBDIR=$R/$libdir/pkgconfig
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
cflags=$(pkg-config --cflags rsswatch)
libs=$(pkg-config --libs rsswatch)
check "pkg-config: rsswatch $version from the scratch root" \
	test "$(pkg-config --modversion rsswatch)" = "$version"
check "pkg-config: its flags point into the scratch root" \
	sh -c "echo '$cflags $libs' | grep -qF -- '-I$R/usr/include' &&
		echo '$libs' | grep -qF -- '-L$R/$libdir'"
expect_exit 0 "examples/pipeline.c links statically against librsswatch.a" \
	cc -o "$T/pipe-static" examples/pipeline.c $cflags $(pkg-config --libs-only-L rsswatch) \
	-Wl,-Bstatic -lrsswatch -Wl,-Bdynamic $(pkg-config --static --libs-only-l rsswatch | sed 's/-lrsswatch//')
[ "$RC" -ne 0 ] && diag_run
check "the static program needs no librsswatch.so" \
	sh -c "! readelf -d '$T/pipe-static' | grep -q 'NEEDED.*librsswatch'"
expect_exit 0 "examples/pipeline.c links dynamically (pkg-config --libs)" \
	cc -o "$T/pipe-dyn" examples/pipeline.c $cflags $libs -lpthread
[ "$RC" -ne 0 ] && diag_run
check "the dynamic program needs librsswatch.so.1" \
	sh -c "readelf -d '$T/pipe-dyn' | grep -q 'NEEDED.*\[librsswatch.so.1\]'"
check "the loader finds it in the scratch root (LD_LIBRARY_PATH)" \
	sh -c "LD_LIBRARY_PATH='$R/$libdir' ldd '$T/pipe-dyn' | grep -qF '$R/$libdir/librsswatch.so.1'"
# each recorded by the installed recorder: its three marks and its counter stored
pipe_marks() {	# pipe_marks NAME PROGRAM [ENV...]: recorded; marks and partitions_done
	pm_name=$1 pm_prog=$2
	shift 2
	env "$@" "$R/usr/bin/rsswatch" record -q -i 10ms --db "$T/$pm_name.db" -- \
		"$pm_prog" --workers 2 --size 1 --rounds 2 --gpu-ms 1 >"$OUT" 2>"$ERR" ||
		{ diag "$pm_name: record failed: $(tail -3 "$ERR")"; return 1; }
	"$R/usr/bin/rsswatch" show --db "$T/$pm_name.db" --json >"$T/$pm_name.json" || return 1
	"$R/usr/bin/rsswatch" export --db "$T/$pm_name.db" --format csv >"$T/$pm_name.csv" ||
		return 1
	pm_marks=$(sqlite3 :memory: "select group_concat(json_extract(value,'\$.label'), '|')
		from json_each(json_extract(readfile('$T/$pm_name.json'),'\$.marks'))")
	pm_last=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "counter.partitions_done") c = i; next }
		c && $c != "" { v = $c } END { print v }' "$T/$pm_name.csv")
	[ "$pm_marks" = "synthesis starts|all partitions synthesized|gpu done" ] &&
		[ "$pm_last" = 4 ] ||
		{ diag "$pm_name: marks '$pm_marks', partitions_done '$pm_last'"; return 1; }
}
check "the static program runs: 3 marks, partitions_done 2 x 2 = 4 recorded" \
	pipe_marks static "$T/pipe-static"
check "the dynamic program runs against the scratch .so.1: the same" \
	pipe_marks dyn "$T/pipe-dyn" LD_LIBRARY_PATH="$R/$libdir"

# --- make uninstall takes back what make install put, completions included
expect_exit 0 "make uninstall removes the packaged files from a root" \
	make -s --no-print-directory uninstall DESTDIR="$R" PREFIX=/usr LIBDIR="/$libdir" \
	SYSTEMDDIR=/lib/systemd/system
left=$(cd "$R" && find . \( -type f -o -type l \) ! -path './usr/share/doc/*' \
	! -path ./usr/share/man/man1/rsswatch.1.gz)
check "nothing left but the docs and the man page's gzip (not make install's name)" test -z "$left"
[ -n "$left" ] && diag "left: $left"
done_testing
