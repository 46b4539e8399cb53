#!/bin/sh
# What a call of the Rust crate (bindings/rust) costs beside the C call it wraps: the
# crate's bench (release build, in one process: each Rust call's loop and the C call's
# loop in turns, medians of REPS runs), ROUNDS times, with build/bench/bench_client,
# the C library's own bench, run between them for reference.
#
#   make bench-bin && sh bench/rust-client-cost.sh [ROUNDS [REPS]]     (default 3, 9)
set -eu
BUILD=${BUILD:-build}
rounds=${1:-3}
reps=${2:-9}
top=$(cd "$(dirname "$0")/.." && pwd)
case "$BUILD" in /*) ;; *) BUILD="$top/$BUILD" ;; esac
out=$BUILD/bench/rust
mkdir -p "$out"
for f in /usr/bin/cargo "$BUILD/librsswatch.a" "$BUILD/bench/bench_client"; do
	[ -e "$f" ] || { echo "rust-client-cost: $f missing (scripts/deps.sh test; make bench-bin)" >&2; exit 1; }
done
export RUSTC=/usr/bin/rustc RSSWATCH_LIB_DIR="$BUILD" CARGO_HOME="$out/cargo-home"
cd "$top/bindings/rust"
/usr/bin/cargo bench --offline --no-run --bench client --target-dir "$out/target" >/dev/null 2>&1 ||
	{ echo "rust-client-cost: cargo cannot build the bench" >&2; exit 1; }
echo "rustc $(/usr/bin/rustc --version | cut -d' ' -f2), $(cc --version | head -n 1), at $(git -C "$top" rev-parse --short HEAD)"
for r in $(seq "$rounds"); do
	echo "--- round $r: the crate's bench (Rust beside C, one process)"
	/usr/bin/cargo bench --offline --bench client --target-dir "$out/target" -- "$reps" 2>/dev/null
	echo "--- round $r: bench_client (C alone)"
	"$BUILD/bench/bench_client" "$reps"
done
