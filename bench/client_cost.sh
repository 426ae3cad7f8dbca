#!/usr/bin/env bash
# Client cost: CPU time the preflight bench client spends per streamed token with 256 concurrent
# streams against the in-repo fake server (tests/fake_server) on loopback. The client's user+system
# CPU comes from getrusage of the child process (bash `time`); tokens from the run's JSON.
# usage: bench/client_cost.sh [BUILD_DIR] [CONCURRENCY] [OUTPUT_TOKENS] [ITL_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
concurrency=${2:-256}
output_tokens=${3:-200}
itl_ms=${4:-10}
num_prompts=$((concurrency * 2))
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
"$build/tests/fake_openai_server" --ttft-ms 50 --itl-ms "$itl_ms" >"$work/server.out" &
server_pid=$!
for _ in $(seq 50); do grep -q PORT "$work/server.out" && break; sleep 0.1; done
port=$(sed -n 's/^PORT //p' "$work/server.out")
TIMEFORMAT='%U %S %R'
{ time "$build/preflight" bench --url "http://127.0.0.1:$port" --model fake --concurrency "$concurrency" --num-prompts "$num_prompts" \
    --input-len 16 --output-len "$output_tokens" --ignore-eos --db "$work/bench.db" --json >"$work/run.json" 2>/dev/null; } 2>"$work/time.txt"
read -r user sys real <"$work/time.txt"
tokens=$(grep -m1 '"output_tokens"' "$work/run.json" | tr -dc '0-9')
failed=$(grep -m1 '"failed"' "$work/run.json" | tr -dc '0-9')
stored=$(sqlite3 "$work/bench.db" 'SELECT COUNT(*) FROM requests' 2>/dev/null || echo "?")
awk -v u="$user" -v s="$sys" -v r="$real" -v t="$tokens" -v c="$concurrency" -v f="$failed" -v n="$num_prompts" -v d="$stored" 'BEGIN {
  printf "client cost at %d concurrent streams: %d requests (%s failed, %s stored), %d tokens in %.2f s wall\n", c, n, f, d, t, r;
  printf "client CPU: user %.3f s + system %.3f s = %.3f s -> %.2f us per streamed token (%.1f%% of one core)\n", u, s, u + s, (u + s) * 1e6 / t, (u + s) * 100 / r }'
