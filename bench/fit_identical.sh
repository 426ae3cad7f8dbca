#!/usr/bin/env bash
# Issue #19: start-up speed-ups must not change what `fit` prints. Runs fit with two binaries (BEFORE: a
# build of the commit before the change, AFTER: this build) and compares stdout and stderr byte for byte,
# and the exit codes: five models x device names that resolve from one catalogue record (910B3, h100)
# and ones that need the whole device catalogue (an ambiguous name, free text with a size, a stage list,
# an unknown name, --device-memory), cards without a runtime total (910A, RTX 4070: the memory-class rule), text and --json (build_commit left out), with and without an
# engine version and TP 2. Set PREFLIGHT_DEVICE_OVERRIDES to compare with a measured overlay too.
#   bench/fit_identical.sh BEFORE_BIN [AFTER_BIN]
set -uo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: bench/fit_identical.sh BEFORE_BIN [AFTER_BIN]}
after=${2:-build/preflight}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=0 differ=0
compare() {  # the preflight arguments
  "$before" "$@" >"$work/before" 2>&1
  local rb=$?
  "$after" "$@" >"$work/after" 2>&1
  local ra=$?
  if [[ " $* " == *" --json "* ]]; then
    jq -S 'del(.build_commit)' "$work/before" >"$work/b" 2>/dev/null && mv "$work/b" "$work/before"
    jq -S 'del(.build_commit)' "$work/after" >"$work/a" 2>/dev/null && mv "$work/a" "$work/after"
  fi
  runs=$((runs + 1))
  if [ "$rb" != "$ra" ] || ! cmp -s "$work/before" "$work/after"; then
    differ=$((differ + 1))
    echo "differs (exit $rb, $ra): $*" >&2
    diff "$work/before" "$work/after" | head -5 >&2
  fi
}
for m in Qwen/Qwen3-VL-8B-Instruct Qwen/Qwen3.5-27B deepseek-ai/DeepSeek-V3 Qwen/Qwen3-0.6B Qwen/Qwen3-30B-A3B; do
  for dev in 910B3 910B4 H100-SXM h100 A100 910B "NVIDIA A100 40GB" "A100-80G,L40S" 910A "RTX 4070"; do
    for form in "" --json; do
      compare fit "$m" --device "$dev" --max-model-len 32768 $form
      compare fit "$m" --device "$dev" --engine vllm-ascend@0.23 $form
      compare fit "$m" --device "$dev" --tensor-parallel-size 2 $form
    done
  done
  compare fit "$m" --device-memory 24GiB --json
  compare fit "$m" --device 910B3 --device-memory 24GiB
  compare fit "$m" --device 910B5
done
echo "fit output: $runs runs, $differ differ"
[ "$differ" -eq 0 ]
