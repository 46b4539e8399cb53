#!/bin/sh
# The accuracy of the time-to-exhaustion projection (record/eta.h) on the workload of
# tests/t/t63-eta.sh: memhog touching memory at a steady RATE under --memory-limit 64M
# until the OOM killer takes it. For each fraction of the way (25%, 50%, 75%), one run
# with --warn-eta set to the time that should be left then; the warn_eta event says
# when the projection first fell under it and what it was; the kernel's OOM report says
# when the end came. Prints one line per run: where on the way the projection was made
# (% of the time to the kill), the projection, the time actually left, the error.
# Needs root and a memory cgroup controller. Usage: bench/eta-accuracy.sh [RATE...]
# (sizes a second; default 4M 2M). Takes about 3 minutes with the defaults.
BUILD=${BUILD:-build}
bin=$BUILD/rsswatch
hog=$BUILD/tests/bin/memhog
[ -x "$bin" ] && [ -x "$hog" ] || { echo "eta-accuracy: build first (make bench-bin)" >&2; exit 2; }
dir=$(mktemp -d /tmp/eta-accuracy.XXXXXX) || exit 1	# mktemp -d makes it 0700
trap 'rm -rf "$dir"' EXIT
export RSSWATCH_DB="$dir/runs.db"
[ $# -gt 0 ] || set -- 4M 2M
printf '%-8s %-6s %10s %12s %12s %8s\n' rate way made_at_s projected_s actual_s error
for rate in "$@"; do
	mib=${rate%M}
	for frac in 0.25 0.5 0.75; do
		# about 62 MiB to go (the limit, less what the process holds at the start)
		left=$(awk -v m="$mib" -v f="$frac" 'BEGIN { printf "%.1f", (1 - f) * 62 / m }')
		"$bin" record -q -i 100ms --memory-limit 64M --warn-eta "${left}s" -- \
			"$hog" grow 512M "$rate" >/dev/null 2>&1
		"$bin" show --json >"$dir/json"
		eta=$(sed -n 's/.*"kind":"warn_eta",[^}]*eta_s=\([0-9.]*\).*/\1/p' "$dir/json")
		at=$(sed -n 's/.*"kind":"warn_eta",[^}]*elapsed_s=\([0-9.]*\).*/\1/p' "$dir/json")
		end=$(sed -n 's/.*"oom":\[{[^}]*"elapsed_s":\([0-9.]*\).*/\1/p' "$dir/json")
		if [ -z "$eta" ] || [ -z "$end" ]; then
			printf '%-8s %-6s no projection or no OOM kill\n' "$rate/s" "$frac"
			continue
		fi
		awk -v r="$rate/s" -v a="$at" -v p="$eta" -v e="$end" 'BEGIN {
			left = e - a; err = (p - left) / left * 100
			printf "%-8s %5.0f%% %10.1f %12.1f %12.1f %+7.1f%%\n", r, a / e * 100, a, p, left, err }'
	done
done
