#!/usr/bin/env bash
# The llama.cpp CPU decode-speed target (issue #17: predicted / real within +-20 %), as a benchmark, not a unit
# test: the real llama.cpp (node-llama-cpp 3.21.1, tests/llama_cpp, `npm ci` there first) decodes 32 greedy tokens
# on 1 thread for the two speed models of tests/llama_cpp/gguf_writer.mjs (a 139 MB F16 llama, a 120 MB Q8_0
# qwen3), and right after each round `preflight fit MODEL.gguf --engine llama.cpp --device cpu --threads 1`
# predicts it from the read bandwidth it measures at that moment. Both sides are rates on a core of their own
# (fit times its read kernel by thread CPU time; llama.cpp is tokens per CPU second of its process), see docs/bw.md.
# Prints every round's ratio and each model's median over R rounds (default 9), with the load average, and exits 1
# when a median is outside 0.80-1.20. The unit test (LlamaCppReal.Issue17_DecodeSpeedMatchesRealLlamaCpp) keeps
# a factor-of-two check only: on a shared 2-core host llama.cpp's Q8_0 rate moves by up to 25 % with the load
# while the prediction holds (0.785 on a quiet host, 1.0-1.1 under load, the same binary).
#   bench/llama_cpp_decode.sh [R]        PREFLIGHT=build/preflight
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT:-build/preflight}
reps=${1:-9}
[ -x "$bin" ] || { echo "build $bin first" >&2; exit 2; }
[ -d tests/llama_cpp/node_modules/node-llama-cpp ] || { echo "run npm ci in tests/llama_cpp first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$reps"); do
  (cd tests/llama_cpp && node speed.mjs "$work/models" 1 32 2>/dev/null) | grep '^{' | while read -r line; do
    file=$(jq -r .file <<<"$line"); model=$(jq -r .model <<<"$line"); real=$(jq -r .tokens_per_cpu_s <<<"$line")
    pred=$("$bin" fit "$file" --engine llama.cpp --device cpu --threads 1 --ctx-size 1024 --flash-attn on --json |
      jq -r .llama_cpp.decode.tokens_per_s_empty_context)
    ratio=$(awk -v a="$pred" -v b="$real" 'BEGIN { printf "%.3f", a / b }')
    echo "round $r $model predicted $pred real $real ratio $ratio load $(cut -d' ' -f1 /proc/loadavg)"
    echo "$model $ratio" >>"$work/ratios"
  done
done
status=0
for m in $(cut -d' ' -f1 "$work/ratios" | sort -u); do
  med=$(awk -v m="$m" '$1 == m { print $2 }' "$work/ratios" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  echo "$m: median predicted / llama.cpp $med over $(grep -c "^$m " "$work/ratios") rounds"
  awk -v x="$med" 'BEGIN { exit !(x < 0.80 || x > 1.20) }' && status=1
done
exit $status
