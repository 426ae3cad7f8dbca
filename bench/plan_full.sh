#!/usr/bin/env bash
# Issue #19: the full plan, every catalogue model x every catalogue device x 1/2/4/8/16 cards x the
# quantization variants each engine takes, through plan_for_devices (bench/micro's
# BM_PlanForDevicesWholeCatalogue), in both forms: what the table prints (table:1) and what --json
# writes (table:0, every row's start commands and speed text), on 2 workers and on 1. Each form runs R
# times (default 9); with PREFLIGHT_BEFORE_BENCH=BIN (a bench_micro built from the commit before a
# change) the two binaries alternate run by run, so that both see the same load on this shared
# machine, and the after/before ratios of the medians are printed. Wall time is the target's measure;
# CPU time is that of the calling worker (the other worker's is not counted), steadier under load.
#   bench/plan_full.sh [R]          PREFLIGHT_BENCH=build-bench/bench_micro (scripts/bench.sh builds it)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BENCH:-build-bench/bench_micro}
before=${PREFLIGHT_BEFORE_BENCH:-}
reps=${1:-9}
[ -x "$bin" ] || { echo "build $bin first (scripts/bench.sh)" >&2; exit 2; }
bins=("$bin")
[ -n "$before" ] && bins=("$before" "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases=("table:1/threads:0" "table:0/threads:0" "table:1/threads:1" "table:0/threads:1")
for _ in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    for b in "${bins[@]}"; do
      # One iteration per process, as one `plan` run: a second iteration in the same process would find the memo
      # tables (step traffic, texts) filled and its pages already faulted in, and Google Benchmark averages the two.
      "$b" --benchmark_filter="BM_PlanForDevicesWholeCatalogue/$c/" --benchmark_min_time=0.001 --benchmark_format=json 2>/dev/null |
        jq -r '.benchmarks[0] | "\(.real_time) \(.cpu_time) \(.candidates_per_iteration)"' >>"$work/$(echo "$b$c" | md5sum | cut -c1-12)"
    done
  done
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for c in "${cases[@]}"; do
  line="$c:"
  declare -A wall=() cpu=()
  for b in "${bins[@]}"; do
    f="$work/$(echo "$b$c" | md5sum | cut -c1-12)"
    wall[$b]=$(cut -d' ' -f1 "$f" | median)
    cpu[$b]=$(cut -d' ' -f2 "$f" | median)
    line+=$(printf ' %s: wall %.0f ms, cpu %.0f ms (%s candidates, %d runs);' "$b" "${wall[$b]}" "${cpu[$b]}" "$(head -1 "$f" | cut -d' ' -f3)" "$(wc -l <"$f")")
  done
  [ -n "$before" ] && line+=$(awk -v a="${wall[$bin]}" -v b="${wall[$before]}" -v c="${cpu[$bin]}" -v d="${cpu[$before]}" \
    'BEGIN { printf " after/before: wall %.2f, cpu %.2f", a / b, c / d }')
  echo "$line"
done
