#!/usr/bin/env bash
# Installs what preflight needs from Debian's packages. Idempotent.
#   install-deps.sh build   the compiler, CMake and the libraries the binary links (scripts/demo.sh)
#   install-deps.sh test    build, plus the test and benchmark tools and services (scripts/test.sh)
# With no argument it installs everything (test), as before.
set -euo pipefail
what=${1:-test}
# libfmt-dev: formatting in the CLI; libcurl4-openssl-dev: hub fetches and the bench client; libsqlite3-dev: bench result store.
build_pkgs=(cmake ninja-build g++ ccache nlohmann-json3-dev libfmt-dev libcurl4-openssl-dev libsqlite3-dev)
# libgtest-dev, libbenchmark-dev: tests and microbenchmarks; clang, libclang-rt-14-dev: fuzz targets;
# nginx: hub tests; sqlite3: bench/client_cost.sh; chromium: the HTML report test renders the page headless.
test_pkgs=(libgtest-dev libbenchmark-dev clang libclang-rt-14-dev nginx sqlite3 chromium)
case "$what" in
  build) pkgs=("${build_pkgs[@]}") ;;
  test) pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  *) echo "usage: install-deps.sh [build|test]" >&2; exit 2 ;;
esac
need=()
for pkg in "${pkgs[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
# Node.js and npm for the third-party OpenAI-compatible peer (tests/peer) and the Kubernetes schema
# check (tests/kubernetes); kept if already present.
if [ "$what" = test ] && { ! command -v node >/dev/null || ! command -v npm >/dev/null; }; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm
fi
