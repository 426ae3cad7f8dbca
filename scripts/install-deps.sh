#!/usr/bin/env bash
# Installs what the build and tests need from Debian's packages. Idempotent.
set -euo pipefail
need=()
for pkg in cmake ninja-build g++ nlohmann-json3-dev libgtest-dev libbenchmark-dev ccache clang libclang-rt-14-dev libcurl4-openssl-dev nginx; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
