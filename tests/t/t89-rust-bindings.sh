#!/bin/sh
# The Rust crate (bindings/rust), built with Debian's cargo and rustc offline: its unit,
# integration and doc tests, one TAP line each; its example pipeline recorded by a real
# recorder, whose stored marks, counters and gauges must hold the values the threads
# made; and the three ways build.rs finds the library (RSSWATCH_LIB_DIR or the tree,
# pkg-config, the shared library with the dynamic feature). Prints TAP.
. tests/t/lib.sh
CARGO=/usr/bin/cargo
CRATE=$TOP/bindings/rust
if [ ! -x "$CARGO" ] || [ ! -x /usr/bin/rustc ]; then
	not_ok "Debian's cargo and rustc are installed ($CARGO missing: scripts/deps.sh test installs the cargo package)"
	done_testing
fi
# Debian's toolchain, whatever rustup puts first on the PATH; everything cargo writes is
# under $T (its home, the targets), nothing in the source tree but Cargo.lock (ignored).
RUSTC=/usr/bin/rustc
RUSTDOC=/usr/bin/rustdoc
CARGO_HOME=$T/cargo-home
CARGO_TERM_COLOR=never
export RUSTC RUSTDOC CARGO_HOME CARGO_TERM_COLOR
unset CARGO_TARGET_DIR RUSTFLAGS CARGO_BUILD_TARGET 2>/dev/null
# A library built under the sanitizers (make check SANITIZE=1) cannot be linked into a
# Rust program (the runtimes must come first, which rustc's link does not do): the crate
# then links a plain build of the same sources, made by the Makefile under $T; the
# recorder stays the one under test.
LIBDIR=$BUILD
if nm "$BUILD/librsswatch.a" 2>/dev/null | grep -q __asan_init; then
	LIBDIR=$T/lib-plain
	# (not the SANITIZE=1 that make check SANITIZE=1 hands its children in MAKEFLAGS)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s SANITIZE=0 BUILD="$LIBDIR" \
		"$LIBDIR/librsswatch.a" "$LIBDIR/librsswatch.so" >"$T/make-lib.out" 2>&1 ||
		{ not_ok "a plain librsswatch builds for the crate: $(tail -n 3 "$T/make-lib.out")"; done_testing; }
	diag "$BUILD/librsswatch.a is built with the sanitizers: the crate links $LIBDIR's"
fi
RSSWATCH_LIB_DIR=$LIBDIR
export RSSWATCH_LIB_DIR
mkdir "$T/shm"
RSSWATCH_SHM_DIR=$T/shm
export RSSWATCH_SHM_DIR
shm_empty() { [ -z "$(ls -A "$T/shm")" ]; }

# --- cargo test: each test of each binary, one TAP line ---
(cd "$CRATE" && "$CARGO" test --offline --no-fail-fast --target-dir "$T/target") \
	>"$T/cargo-test.out" 2>&1
crc=$?
# "Running unittests src/lib.rs (...)", "Running tests/page.rs (...)", "Doc-tests rsswatch",
# then "test NAME ... ok|FAILED|ignored"
awk '/^ *Running unittests/ { sec = "unit" } /^ *Running tests\// { sec = $2 }
	/^ *Doc-tests/ { sec = "doc" }
	/^test .* \.\.\. (ok|FAILED|ignored)$/ { r = $NF; sub(/^test /, ""); sub(/ \.\.\. [A-Za-z]+$/, "")
		print r "|" sec ": " $0 }' "$T/cargo-test.out" >"$T/cargo-tests"
while IFS='|' read -r r name; do
	case "$r" in
	ok) ok "cargo test: $name" ;;
	ignored) skip "cargo test: $name (ignored)" ;;
	*) not_ok "cargo test: $name" ;;
	esac
done <"$T/cargo-tests"
check "cargo test: exit 0" test "$crc" -eq 0
nunit=$(grep -c '|unit: ' "$T/cargo-tests")
nint=$(grep -c '|tests/page.rs: ' "$T/cargo-tests")
ndoc=$(grep -c '|doc: ' "$T/cargo-tests")
check "cargo test ran unit ($nunit), integration ($nint) and doc tests ($ndoc)" \
	test "$nunit" -ge 8 -a "$nint" -ge 7 -a "$ndoc" -ge 5
if [ "$crc" -ne 0 ]; then
	diag "cargo test said:"
	grep -v '^test .* \.\.\. ok$' "$T/cargo-test.out" | tail -40 | while IFS= read -r l; do diag "  $l"; done
fi
check "cargo test leaves no page behind" shm_empty
ex=$T/target/debug/examples/pipeline
if [ ! -x "$ex" ]; then
	not_ok "cargo test built the example pipeline ($ex)"
	done_testing
fi
check "the example links librsswatch statically (no librsswatch.so in NEEDED)" \
	sh -c '! readelf -d "$1" | grep -q "NEEDED.*librsswatch"' sh "$ex"

# --- the example under a real recorder ---
col() {		# col CSV NAME: the column's values, one per row
	awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		c { print $c }' "$1"
}
last() { col "$1" "$2" | grep . | tail -n 1; }
# marks FILE: the labels of show --json's marks, one a line, in order
marks() {
	sqlite3 :memory: "select json_extract(value,'\$.label') from
		json_each(json_extract(readfile('$1'),'\$.marks')) order by key"
}
# marks_timed FILE: the marks' elapsed_s are increasing and within the run
marks_timed() {
	sqlite3 :memory: "select json_extract(value,'\$.elapsed_s') from
		json_each(json_extract(readfile('$1'),'\$.marks')) order by key" >"$T/times"
	awk -v d="$(jget "$1" '$.duration_s')" '$1 < 0 || $1 > d || (NR > 1 && $1 < p) { bad = 1 }
		{ p = $1 } END { exit bad || NR == 0 }' "$T/times"
}
# record NAME BINARY ARGS...: records the pipeline; when the live line shows the
# final partitions_done (WANT), lets it exit. NAME.json, NAME.csv, NAME.show, $rc.
record() {
	name=$1 bin=$2 want=$3
	shift 3
	rm -f "$T/go"
	spawn "$name" "$RSW" record -i 20ms -- "$bin" "$@" --await "$T/go"
	rp=$!
	if ! wait_until 60 grep -q "partitions_done=$want " "$T/$name.err"; then
		diag "$name: the live line never showed partitions_done=$want: $(tail -n 2 "$T/$name.err")"
	fi
	touch "$T/go"
	finish "$rp"
	rc=$RC
	"$RSW" show --json >"$T/$name.json" 2>/dev/null
	COLUMNS=100 "$RSW" show >"$T/$name.show" 2>/dev/null
	"$RSW" export --format csv >"$T/$name.csv" 2>/dev/null
}
# 4 threads x 100,000 partitions, each +1 on partitions_done, +1 and -1 on
# partitions_in_flight, in no order: the stored totals must be exact
record threads "$ex" 400000 --workers 4 --partitions 100000 --size 0
check "record of the Rust pipeline: exit 0" test "$rc" -eq 0
marks "$T/threads.json" >"$T/threads.marks"
printf '%s\n' plan "plan done" synthesis "synthesis done" "all partitions synthesized" \
	>"$T/want.marks"
check "the stage guards' and mark()'s marks are stored, in order" cmp -s "$T/want.marks" "$T/threads.marks"
[ -s "$T/threads.marks" ] && diag "marks: $(tr '\n' ',' <"$T/threads.marks")"
check "the marks' times increase within the run" marks_timed "$T/threads.json"
v=$(last "$T/threads.csv" counter.partitions_done)
check "partitions_done from 4 threads is exactly 400000 (stored: $v)" test "$v" = 400000
v=$(last "$T/threads.csv" counter.partitions_in_flight)
check "partitions_in_flight (+1/-1 from 4 threads) ends at exactly 0 (stored: $v)" test "$v" = 0
v=$(last "$T/threads.csv" counter.workers)
check "the gauge set by name, workers, is 4 (stored: $v)" test "$v" = 4
check "show lists the counters" grep -Eq '^  partitions_done +400000 +400000$' "$T/threads.show"
check "the page is gone after the run" shm_empty

# 2 threads x 6 partitions of 4 MiB: bytes counted by the handle's add(n)
record bytes "$ex" 12 --workers 2 --partitions 6 --size 4
check "record of the pipeline with buffers: exit 0" test "$rc" -eq 0
v=$(last "$T/bytes.csv" counter.bytes_synthesized)
check "bytes_synthesized is 2 x 6 x 4 MiB = 50331648 (stored: $v)" test "$v" = 50331648
v=$(last "$T/bytes.csv" counter.buffers_bytes)
check "the gauge buffers_bytes ends at 0 (stored: $v)" test "$v" = 0
check "show gives bytes_synthesized in bytes' units" \
	grep -Eq '^  bytes_synthesized +48\.0 MiB +48\.0 MiB$' "$T/bytes.show"
peak=$(jget "$T/bytes.json" '$.peak_rss_bytes')
check "the run's peak holds a 4 MiB buffer ($peak bytes)" test "${peak:-0}" -ge 4194304

# --- without a recorder, and where the page cannot be made ---
expect_exit 0 "the pipeline runs without a recorder" "$ex" --workers 2 --partitions 1000 --size 0
check "... and removes its page at exit" shm_empty
RSSWATCH_SHM_DIR=$T/no-such-dir
expect_exit 0 "the pipeline runs where the page cannot be made" "$ex" --workers 2 --partitions 10 --size 0
RSSWATCH_SHM_DIR=$T/shm
check "... and says once why no figures are recorded" \
	grep -qx 'pipeline: figures will not be recorded: cannot set up the page: No such file or directory (os error 2)' "$ERR"

# --- the ways build.rs finds the library ---
# In the tree, with no RSSWATCH_LIB_DIR: the tree's build directory (only where that is
# the build under test).
if [ "$BUILD" = "$TOP/build" ]; then
	(cd "$CRATE" && env -u RSSWATCH_LIB_DIR "$CARGO" build --offline --example pipeline \
		--target-dir "$T/target-tree") >"$T/build-tree.out" 2>&1
	check "in the tree, build.rs finds build/librsswatch.a" test $? -eq 0
	check "... and links it statically" sh -c '! readelf -d "$1" | grep -q "NEEDED.*librsswatch"' \
		sh "$T/target-tree/debug/examples/pipeline"
else
	skip "in the tree, build.rs finds build/librsswatch.a (BUILD is $BUILD, not the tree's build)"
	skip "... and links it statically"
fi
# An installed layout as make install makes it, under a prefix in $T.
pfx=$T/prefix
mkdir -p "$pfx/lib/pkgconfig" "$pfx/include"
cp "$LIBDIR/librsswatch.a" "$pfx/lib/"
cp "$LIBDIR/librsswatch.so" "$pfx/lib/librsswatch.so.1"
ln -s librsswatch.so.1 "$pfx/lib/librsswatch.so"
cp include/rsswatch.h "$pfx/include/"
sed -e "s|@PREFIX@|$pfx|g" -e "s|@LIBDIR@|$pfx/lib|g" -e 's|@VERSION@|0|g' rsswatch.pc.in >"$pfx/lib/pkgconfig/rsswatch.pc"
# The crate out of the tree, where only pkg-config can find the library.
mkdir "$T/crate"
(cd "$CRATE" && cp -R Cargo.toml build.rs src examples tests benches "$T/crate/")
build_out() {	# build_out NAME ENV [CARGO-ARG]: cargo build of the example in $T/crate
	(cd "$T/crate" && env -u RSSWATCH_LIB_DIR "$2" "$CARGO" build --offline --example pipeline \
		--target-dir "$T/target-$1" ${3:+"$3"}) >"$T/build-$1.out" 2>&1
}
build_out pc PKG_CONFIG_PATH="$pfx/lib/pkgconfig"
check "out of the tree, build.rs finds librsswatch.a through pkg-config" test $? -eq 0
record pc "$T/target-pc/debug/examples/pipeline" 2000 --workers 2 --partitions 1000 --size 0
check "... and the pipeline linked so is recorded: partitions_done is 2000" \
	test "$(last "$T/pc.csv" counter.partitions_done)" = 2000
build_out dyn PKG_CONFIG_PATH="$pfx/lib/pkgconfig" --features=dynamic
check "with --features dynamic, it links librsswatch.so through pkg-config" test $? -eq 0
check "... whose binary needs librsswatch.so.1" \
	sh -c 'readelf -d "$1" | grep -q "NEEDED.*librsswatch\.so\.1"' sh \
	"$T/target-dyn/debug/examples/pipeline"
LD_LIBRARY_PATH=$pfx/lib
export LD_LIBRARY_PATH
record dyn "$T/target-dyn/debug/examples/pipeline" 2000 --workers 2 --partitions 1000 --size 0
unset LD_LIBRARY_PATH
check "... and, given the library's directory, is recorded: partitions_done is 2000" \
	test "$(last "$T/dyn.csv" counter.partitions_done)" = 2000
build_out nopc PKG_CONFIG="$T/no-pkg-config"
check "with no library dir and no pkg-config, the build fails" test $? -ne 0
check "... saying how to point it at the library" \
	grep -q "rsswatch: cannot run $T/no-pkg-config to find librsswatch: .*set RSSWATCH_LIB_DIR" \
	"$T/build-nopc.out"
mkdir "$T/empty"
(cd "$T/crate" && RSSWATCH_LIB_DIR=$T/empty "$CARGO" build --offline --example pipeline \
	--target-dir "$T/target-nodir") >"$T/build-nodir.out" 2>&1
check "RSSWATCH_LIB_DIR without the library: the build fails and says so" \
	grep -q "rsswatch: no librsswatch.a in RSSWATCH_LIB_DIR ($T/empty)" "$T/build-nodir.out"
check "the shm dir is empty at the end" shm_empty
done_testing
