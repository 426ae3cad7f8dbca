#!/usr/bin/env bash
# Installs what the build and tests need from Debian's packages. Idempotent.
set -euo pipefail
need=()
# libcurl4-openssl-dev: hub fetches and the bench client; nginx: hub tests; libsqlite3-dev: bench result store;
# sqlite3: bench/client_cost.sh; chromium: the HTML report test renders the page headless; libfmt-dev: the CLI's formatting.
for pkg in cmake ninja-build g++ nlohmann-json3-dev libgtest-dev libbenchmark-dev ccache clang libclang-rt-14-dev \
           libcurl4-openssl-dev nginx libsqlite3-dev sqlite3 chromium libfmt-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
# Node.js and npm for the third-party OpenAI-compatible peer (tests/peer); kept if already present.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm
fi
