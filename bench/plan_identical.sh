#!/usr/bin/env bash
# Issue #19: the planner's speed-ups must not change what `plan` prints. Runs the full plan with two
# binaries (BEFORE: a build of the commit before the change, AFTER: this build) and compares their
# output byte for byte: `plan --device D` (--json and the --all table) for every catalogue device and
# 1/2/4/8/16 cards, and `plan MODEL --devices ...` (--json and the table) for a few models. The JSON's
# build_commit line differs between two builds and is left out; nothing else is (the JSON is compared as written).
#   bench/plan_identical.sh BEFORE_BIN [AFTER_BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: bench/plan_identical.sh BEFORE_BIN [AFTER_BIN]}
after=${2:-build/preflight}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
devices=$("$after" devices --json | jq -r '.devices[].id')
runs=0 differ=0
compare() {  # the plan arguments
  "$before" "$@" >"$work/before" 2>/dev/null || true
  "$after" "$@" >"$work/after" 2>/dev/null || true
  if [[ " $* " == *" --json "* ]]; then  # byte for byte but the build_commit line (round 7: not through jq, which rewrites numbers)
    grep -v '^  "build_commit": ' "$work/before" >"$work/b" || true
    grep -v '^  "build_commit": ' "$work/after" >"$work/a" || true
    mv "$work/b" "$work/before" && mv "$work/a" "$work/after"
  fi
  runs=$((runs + 1))
  if ! cmp -s "$work/before" "$work/after"; then
    differ=$((differ + 1))
    echo "differs: $*" >&2
    diff "$work/before" "$work/after" | head -5 >&2 || true  # diff exits 1 on a difference: under pipefail and -e that ended the script at the first one
  fi
}
for d in $devices; do
  for n in 1 2 4 8 16; do
    compare plan --device "$d" --num-devices "$n" --json
    compare plan --device "$d" --num-devices "$n" --all
  done
done
for m in Qwen/Qwen3-VL-8B-Instruct Qwen/Qwen3.5-27B deepseek-ai/DeepSeek-V3 Qwen/Qwen3-0.6B; do
  compare plan "$m" --devices 910B3,910B4,H100-SXM,A100-80G --json
  compare plan "$m" --devices 910B3,910B4,H100-SXM,A100-80G
  compare plan "$m" --json
  compare plan "$m"
done
echo "plan output: $runs runs, $differ differ ($(echo "$devices" | wc -w) devices x 5 counts x json/table, 4 models x 4 forms)"
[ "$differ" -eq 0 ]
