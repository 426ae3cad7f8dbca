#!/usr/bin/env bash
# Sizes a 163-shard DeepSeek-V3-layout fixture (91,985 tensors, 684.7 GB of sparse shards) served by nginx on
# loopback, cold (empty metadata cache) and warm, and prints time, requests and bytes. The fixture, nginx and
# the measurement are in tests/hub/test_hub_cli.cpp (HubBench.*); the record goes to bench/hub_sizing.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target test_hub >/dev/null
out=${1:-bench/hub_sizing.json}
PREFLIGHT_REQUIRE_SERVICES=1 PREFLIGHT_HUB_BENCH_OUT="$out" build/tests/test_hub --gtest_filter='HubBench.*' >/dev/null
cat "$out"
