#!/usr/bin/env bash
# Host memory bandwidth: `preflight bw --target host` side by side with two independent tools on the
# same buffer size, thread count and repeat count, interleaved round by round so that both see the
# same machine load. Prints each figure in decimal GB/s (1e9 B/s) under our counting, and the ratio.
#
#   copy, 1 thread:  preflight bw --kernel copy --threads 1   vs  mbw -t0 (glibc memcpy of one array)
#                    mbw reports MiB copied per second (array size / time), so its figure is converted
#                    as 2 x MiB/s x 1,048,576 / 1e9 (read + write, the STREAM copy convention we use).
#   read, T threads: preflight bw --kernel read --threads T    vs  sysbench memory --memory-oper=read
#                    --memory-scope=local (each thread reads its own block, sequentially); both count
#                    each byte read once; sysbench reports MiB/s, converted x 1,048,576 / 1e9.
#                    sysbench's block per thread is our array divided by T (the same bytes per thread
#                    per run), and its total size is R runs of the whole array.
# Our figure is the aggregate rate (all bytes over all timed seconds) because mbw's AVG line and
# sysbench's total are aggregates too; the median per-run rate is printed beside it.
#
# Environment: PREFLIGHT_BIN (default build/preflight), SIZE_MIB (256), THREADS (nproc), REPEATS (10),
# ROUNDS (5). Installs sysbench, mbw and jq from Debian when missing (root only; CI does not run this).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PREFLIGHT_BIN:-build/preflight}
size=${SIZE_MIB:-256}
threads=${THREADS:-$(nproc)}
repeats=${REPEATS:-10}
rounds=${ROUNDS:-5}

need=()
for tool in sysbench mbw jq; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "bw_vs_peer: install ${need[*]} (apt-get install ${need[*]})" >&2; exit 2; fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -x "$bin" ] || { echo "bw_vs_peer: $bin not found; build it first (cmake --build build --target preflight)" >&2; exit 2; }
if [ $((size % threads)) -ne 0 ]; then echo "bw_vs_peer: SIZE_MIB ($size) must be a multiple of THREADS ($threads)" >&2; exit 2; fi

ours() {  # kernel threads -> "aggregate median" in GB/s
  "$bin" bw --target host --kernel "$1" --threads "$2" --size "$size" --repeats "$repeats" --warmup 2 --json |
    jq -r '.results[0] | "\(.aggregate_gb_per_s) \(.median_gb_per_s)"'
}
mbw_copy() {  # -> GB/s, read + write counted
  mbw -q -n "$repeats" -t0 "$size" | awk '/^AVG/ { for (i = 1; i <= NF; i++) if ($i == "Copy:") print 2 * $(i + 1) * 1048576 / 1e9 }'
}
sysbench_read() {  # -> GB/s, bytes read counted once
  sysbench memory --threads="$threads" --time=0 --memory-oper=read --memory-scope=local --memory-access-mode=seq \
    --memory-block-size="$((size / threads))M" --memory-total-size="$((size * repeats))M" run |
    sed -n 's/.*MiB transferred (\([0-9.]*\) MiB\/sec).*/\1/p' | awk '{ print $1 * 1048576 / 1e9 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "host: $(nproc) CPUs; $size MiB per array; $repeats timed runs; $rounds interleaved rounds; $(sysbench --version); mbw $(dpkg-query -W -f='${Version}' mbw 2>/dev/null || echo '?')"
printf '%-6s %-28s %12s %12s %12s %8s\n' round comparison "ours agg" "ours median" peer ratio
oc=(); pc=(); orr=(); pr=()
for r in $(seq 1 "$rounds"); do
  read -r c_agg c_med < <(ours copy 1)
  c_peer=$(mbw_copy)
  read -r r_agg r_med < <(ours read "$threads")
  r_peer=$(sysbench_read)
  printf '%-6s %-28s %12.2f %12.2f %12.2f %8.3f\n' "$r" "copy 1 thread vs mbw" "$c_agg" "$c_med" "$c_peer" "$(echo "$c_agg $c_peer" | awk '{ print $1 / $2 }')"
  printf '%-6s %-28s %12.2f %12.2f %12.2f %8.3f\n' "$r" "read $threads threads vs sysbench" "$r_agg" "$r_med" "$r_peer" "$(echo "$r_agg $r_peer" | awk '{ print $1 / $2 }')"
  oc+=("$c_agg"); pc+=("$c_peer"); orr+=("$r_agg"); pr+=("$r_peer")
done
mc=$(printf '%s\n' "${oc[@]}" | median); mpc=$(printf '%s\n' "${pc[@]}" | median)
mr=$(printf '%s\n' "${orr[@]}" | median); mpr=$(printf '%s\n' "${pr[@]}" | median)
echo
echo "median over $rounds rounds (GB/s, 1 GB = 1e9 B):"
printf '  copy, 1 thread:        preflight %.2f   mbw memcpy %.2f   ratio %.3f\n' "$mc" "$mpc" "$(echo "$mc $mpc" | awk '{ print $1 / $2 }')"
printf '  read, %s threads:       preflight %.2f   sysbench read %.2f   ratio %.3f\n' "$threads" "$mr" "$mpr" "$(echo "$mr $mpr" | awk '{ print $1 / $2 }')"
