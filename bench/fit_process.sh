#!/usr/bin/env bash
# One `preflight fit` end to end, process start to exit: median and p90 wall time over N runs
# (default 30) of the README's main job, with the embedded catalogue (no files read but the binary),
# and in the same run, interleaved, /bin/true under the same harness (the `date` forks around each
# process cost about as much as a small process), so that the difference is preflight's own start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BIN:-build/preflight}
n=${1:-30}
[ -x "$bin" ] || { echo "build $bin first (scripts/demo.sh)" >&2; exit 2; }
fit=() base=()
for _ in $(seq "$n"); do
  t0=$(date +%s%N)
  "$bin" fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 >/dev/null
  t1=$(date +%s%N)
  /bin/true
  t2=$(date +%s%N)
  fit+=($(( (t1 - t0) / 1000 )))
  base+=($(( (t2 - t1) / 1000 )))
done
summary() {  # label, then the times in us
  local label=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v n="$n" -v label="$label" '{ a[NR] = $1 } END { printf "%s over %d runs: median %.1f ms, p90 %.1f ms, min %.1f ms\n", label, n, a[int((n + 1) / 2)] / 1000, a[int(n * 0.9)] / 1000, a[1] / 1000 }'
}
summary "fit end to end" "${fit[@]}"
summary "/bin/true, same harness" "${base[@]}"
