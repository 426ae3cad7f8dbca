#!/usr/bin/env bash
# The full `plan` end to end, process start to exit: `preflight plan --device D --num-devices N` (the
# table) for every catalogue device and 1/2/4/8/16 cards, one process each, run back to back. Prints
# the median and p90 wall time of one process over all of them and R repetitions (default 5), and of
# the whole sweep. PLAN_FORM=--json times the JSON form instead (every row's start commands and speed
# text). PREFLIGHT_BEFORE=BIN runs that binary too, alternating with this one process by process, so
# that both see the same load (this machine is shared), and prints its figures beside.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BIN:-build/preflight}
before=${PREFLIGHT_BEFORE:-}
reps=${1:-5}
form=${PLAN_FORM:---all}
[ -x "$bin" ] || { echo "build $bin first (scripts/demo.sh)" >&2; exit 2; }
bins=("$bin")
[ -n "$before" ] && bins=("$before" "$bin")
devices=$("$bin" devices --json | jq -r '.devices[].id')
declare -A one sweep
for _ in $(seq "$reps"); do
  declare -A total=()
  for d in $devices; do
    for n in 1 2 4 8 16; do
      for b in "${bins[@]}"; do
        t0=$(date +%s%N)
        "$b" plan --device "$d" --num-devices "$n" $form >/dev/null || true  # exit 1 = nothing fits: still a full plan
        t1=$(date +%s%N)
        one[$b]+=" $(( (t1 - t0) / 1000 ))"
        total[$b]=$(( ${total[$b]:-0} + (t1 - t0) / 1000 ))
      done
    done
  done
  for b in "${bins[@]}"; do sweep[$b]+=" ${total[$b]}"; done
done
summary() {  # label, values in us
  local label=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v label="$label" '{ a[NR] = $1 } END { p = int(NR * 0.9); if (p < 1) p = 1; printf "%s: median %.1f ms, p90 %.1f ms, min %.1f ms (%d runs)\n", label, a[int((NR + 1) / 2)] / 1000, a[p] / 1000, a[1] / 1000, NR }'
}
for b in "${bins[@]}"; do
  # shellcheck disable=SC2086
  summary "$b: one plan --device D --num-devices N process ($form)" ${one[$b]}
  # shellcheck disable=SC2086
  summary "$b: the sum over $(echo "$devices" | wc -w) devices x 1/2/4/8/16 cards" ${sweep[$b]}
done
