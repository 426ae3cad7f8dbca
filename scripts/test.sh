#!/usr/bin/env bash
# Builds everything and runs all tests (unit, cli), then the suite again under ASan+UBSan, and each
# fuzz target briefly. Needs ../shared beside the checkout (real configs and validation cases).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
# Service-backed tests (nginx for the hub, the npm peer, chromium) fail instead of skipping when missing.
export PREFLIGHT_REQUIRE_SERVICES=1
(cd tests/peer && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/llama_cpp && npm ci --no-audit --no-fund --loglevel=error)  # node-llama-cpp 3.21.1: the real llama.cpp for tests/estimate/test_llama_cpp
(cd tests/kubernetes && npm ci --no-audit --no-fund --loglevel=error)  # kubernetes-models, ajv, js-yaml: the schema check of plan --kubernetes (tests/plan/test_kubernetes)
jobs=$(nproc)
# Each tree is built as a unity build (-DPREFLIGHT_UNITY=ON: a module's sources compile in batches; CMakeLists.txt says
# why), in directories of its own so that a developer's incremental build/ keeps one file per compile. If a batch does
# not compile (two sources of one module define the same name in their anonymous namespaces), the tree is built again
# one file per compile, after saying so: the tests still run, and cmake/unity.cmake says how to fix the clash.
build_tree() {  # build_tree DIR [cmake args...] -- [targets...]
  local dir=$1 args=() targets=()
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  targets=("$@")
  cmake -S . -B "$dir" -G Ninja -DPREFLIGHT_UNITY=ON "${args[@]}" >/dev/null
  if ! cmake --build "$dir" -j "$jobs" ${targets[@]+--target "${targets[@]}"}; then
    echo "scripts/test.sh: the unity build of $dir failed (a name clash between two sources of a module? see cmake/unity.cmake); building it one file per compile" >&2
    cmake -S . -B "$dir" -G Ninja -DPREFLIGHT_UNITY=OFF "${args[@]}" >/dev/null
    cmake --build "$dir" -j "$jobs" ${targets[@]+--target "${targets[@]}"}
  fi
}
# The microbenchmarks are built too (not run), so that an API change cannot leave them uncompilable unnoticed.
# No debug info in the test builds (-g costs ~22% of a compile here and most of the link of the test binaries; the ASan
# build keeps line tables, -g1, for its stack traces): CI has 90 minutes on 2 cores for all three builds and their runs.
build_tree build-test -DPREFLIGHT_TESTS=ON -DPREFLIGHT_MICROBENCH=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"
(cd build-test && ctest -j "$jobs" --output-on-failure)
if [ "${PREFLIGHT_SKIP_SANITIZERS:-0}" != "1" ]; then
  build_tree build-asan -DCMAKE_BUILD_TYPE=Debug -DPREFLIGHT_TESTS=ON -DPREFLIGHT_SANITIZE=ON "-DCMAKE_CXX_FLAGS_DEBUG=-g1"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -j "$jobs" --output-on-failure)
fi
if [ "${PREFLIGHT_SKIP_FUZZ:-0}" != "1" ] && command -v clang++ >/dev/null; then
  targets="fuzz_safetensors_header fuzz_gguf fuzz_hf_config fuzz_engine_log fuzz_sse fuzz_llama_cpp_log fuzz_safe_regex fuzz_modelslim_description fuzz_validate_case"
  # shellcheck disable=SC2086
  CXX=clang++ build_tree build-fuzz -DCMAKE_BUILD_TYPE=Debug -DPREFLIGHT_TESTS=OFF -DPREFLIGHT_FUZZ=ON -- $targets
  for t in $targets; do
    corpus=$(mktemp -d)
    cp tests/fuzz/corpus/${t#fuzz_}/* "$corpus"/
    build-fuzz/tests/fuzz/$t -max_total_time="${PREFLIGHT_FUZZ_SECONDS:-20}" -rss_limit_mb=2048 "$corpus" 2>&1 | tail -n 2
    rm -rf "$corpus"
  done
fi
