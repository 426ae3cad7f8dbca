#!/usr/bin/env bash
# One `preflight fit` end to end, process start to exit: median and p90 wall time over N runs
# (default 30) of the README's main job, with the embedded catalogue (no files read but the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BIN:-build/preflight}
n=${1:-30}
[ -x "$bin" ] || { echo "build $bin first (scripts/demo.sh)" >&2; exit 2; }
times=()
for _ in $(seq "$n"); do
  t0=$(date +%s%N)
  "$bin" fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 >/dev/null
  t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$n" '{ a[NR] = $1 } END { printf "fit end to end over %d runs: median %.1f ms, p90 %.1f ms, min %.1f ms\n", n, a[int((n + 1) / 2)] / 1000, a[int(n * 0.9)] / 1000, a[1] / 1000 }'
