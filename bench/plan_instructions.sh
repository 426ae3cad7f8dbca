#!/usr/bin/env bash
# Issue #19: the full plan's work as a count that the load on this shared machine does not change: the
# instructions executed inside plan_for_devices (valgrind callgrind, Ir) by BM_PlanForDevicesWholeCatalogue
# on one worker, in both forms (table:1, what the table prints; table:0, what --json writes). With
# PREFLIGHT_BEFORE_BENCH=BIN (a bench_micro built from the commit before a change) both binaries are counted
# and the after/before ratio printed. Instructions leave out what a count cannot see (page faults, cache
# misses, the kernel), so bench/plan_full.sh's times stay the measure; this says how much work went.
# About a minute per run (callgrind runs the code ~50x slower).
#   bench/plan_instructions.sh      PREFLIGHT_BENCH=build-bench/bench_micro (scripts/bench.sh builds it)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BENCH:-build-bench/bench_micro}
before=${PREFLIGHT_BEFORE_BENCH:-}
[ -x "$bin" ] || { echo "build $bin first (scripts/bench.sh)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() {  # binary, case -> instructions inside plan_for_devices
  valgrind --tool=callgrind --callgrind-out-file="$work/out" --toggle-collect='preflight::plan::plan_for_devices*' \
    "$1" --benchmark_filter="BM_PlanForDevicesWholeCatalogue/$2/" >/dev/null 2>"$work/err"
  awk '/^summary:/ { print $2 }' "$work/out"
}
for c in table:1/threads:1 table:0/threads:1; do
  after=$(count "$bin" "$c")
  if [ -n "$before" ]; then
    prior=$(count "$before" "$c")
    awk -v c="$c" -v a="$after" -v b="$prior" 'BEGIN { printf "%s: %.3g instructions, before %.3g, after/before %.3f\n", c, a, b, a / b }'
  else
    awk -v c="$c" -v a="$after" 'BEGIN { printf "%s: %.3g instructions\n", c, a }'
  fi
done
