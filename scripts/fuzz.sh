#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for a bounded time
# (FUZZ_SECONDS, default 60) from its seed corpus in fuzz/corpus/<name>/ when there is one.
# Any crash, leak or sanitizer report fails the script. Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-${FUZZ_SECONDS:-60}}"
build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTAGFLOW_BUILD_FUZZ=ON -DTAGFLOW_BUILD_TESTS=OFF -DTAGFLOW_BUILD_BENCH=OFF \
  -DTAGFLOW_BUILD_EXAMPLES=OFF -DTAGFLOW_WERROR=ON >/dev/null
mapfile -t fuzzers < <(cmake --build "$build" --target help | sed -n 's/^\(fuzz_[a-z_]*\):.*/\1/p')
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "no fuzz targets defined" >&2
  exit 1
fi
cmake --build "$build" -j "${TAGFLOW_JOBS:-2}" --target "${fuzzers[@]}"
for fuzzer in "${fuzzers[@]}"; do
  echo "== $fuzzer: ${seconds} s"
  corpus="$build/corpus/$fuzzer"
  mkdir -p "$corpus"
  seeds=()
  [ -d "$root/fuzz/corpus/$fuzzer" ] && seeds=("$root/fuzz/corpus/$fuzzer")
  "$build/fuzz/$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
    "$corpus" "${seeds[@]}" 2>&1 | tail -n 12
done
