#!/usr/bin/env bash
# Builds the microbenchmarks (Release) and prints the median of 5 repetitions for each.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_TESTS=OFF -DPREFLIGHT_MICROBENCH=ON >/dev/null
cmake --build build-bench --target bench_micro -j "$(nproc)"
build-bench/bench_micro --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@"
