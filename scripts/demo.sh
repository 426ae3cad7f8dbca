#!/usr/bin/env bash
# Builds preflight and runs the main job on the embedded catalogue: no network, no model download.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh build
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPREFLIGHT_TESTS=OFF >/dev/null
cmake --build build --target preflight
build/preflight fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 || true
# The seed's question: how big a model can one 910B3 run, how fast, and how to start it.
build/preflight plan --device 910B3 --context 32768 || true
