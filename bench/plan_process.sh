#!/usr/bin/env bash
# The full `plan` end to end, process start to exit: `preflight plan --device D --num-devices N` (the
# table) for every catalogue device and 1/2/4/8/16 cards, one process each, run back to back. Prints
# the median and p90 wall time of that whole sweep over R repetitions (default 5), and of one process
# over all of them. PLAN_FORM=--json times the JSON form instead (every row's start commands and speed text).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BIN:-build/preflight}
reps=${1:-5}
form=${PLAN_FORM:---all}
[ -x "$bin" ] || { echo "build $bin first (scripts/demo.sh)" >&2; exit 2; }
devices=$("$bin" devices --json | jq -r '.devices[].id')
sweeps=() one=()
for _ in $(seq "$reps"); do
  s0=$(date +%s%N)
  for d in $devices; do
    for n in 1 2 4 8 16; do
      t0=$(date +%s%N)
      "$bin" plan --device "$d" --num-devices "$n" $form >/dev/null || true  # exit 1 = nothing fits: still a full plan
      t1=$(date +%s%N)
      one+=($(( (t1 - t0) / 1000 )))
    done
  done
  s1=$(date +%s%N)
  sweeps+=($(( (s1 - s0) / 1000 )))
done
summary() {  # label, values in us
  local label=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v label="$label" '{ a[NR] = $1 } END { p = int(NR * 0.9); if (p < 1) p = 1; printf "%s: median %.1f ms, p90 %.1f ms, min %.1f ms (%d runs)\n", label, a[int((NR + 1) / 2)] / 1000, a[p] / 1000, a[1] / 1000, NR }'
}
summary "full plan ($(echo "$devices" | wc -w) devices x 1/2/4/8/16 cards, $form), one sweep" "${sweeps[@]}"
summary "one plan --device D --num-devices N process" "${one[@]}"
