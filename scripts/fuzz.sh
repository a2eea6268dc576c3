#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each for a bounded time
# (FUZZ_SECONDS, default 60) from its seed corpus in fuzz/corpus/<name>/ when there is one,
# with the dictionary fuzz/<name>.dict when there is one.
# Any crash, leak or sanitizer report fails the script.
# Usage: scripts/fuzz.sh [seconds [target...]] (default: every fuzz_* target)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-${FUZZ_SECONDS:-60}}"
build="$root/build-fuzz"
# -O1 with line tables, as libFuzzer's documentation builds its targets: quicker to compile than
# -O2 -g, and crash reports still name files and lines.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTAGFLOW_BUILD_FUZZ=ON -DTAGFLOW_BUILD_TESTS=OFF -DTAGFLOW_BUILD_BENCH=OFF \
  -DTAGFLOW_BUILD_EXAMPLES=OFF -DTAGFLOW_WERROR=ON >/dev/null
mapfile -t fuzzers < <(cmake --build "$build" --target help | sed -n 's/^\(fuzz_[a-z_]*\):.*/\1/p')
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "no fuzz targets defined" >&2
  exit 1
fi
if [ $# -gt 1 ]; then
  for wanted in "${@:2}"; do
    if ! printf '%s\n' "${fuzzers[@]}" | grep -qx -- "$wanted"; then
      echo "unknown fuzz target '$wanted' (valid: ${fuzzers[*]})" >&2
      exit 1
    fi
  done
  fuzzers=("${@:2}")
fi
cmake --build "$build" -j "${TAGFLOW_JOBS:-2}" --target "${fuzzers[@]}"
for fuzzer in "${fuzzers[@]}"; do
  echo "== $fuzzer: ${seconds} s"
  corpus="$build/corpus/$fuzzer"
  mkdir -p "$corpus"
  seeds=()
  [ -d "$root/fuzz/corpus/$fuzzer" ] && seeds=("$root/fuzz/corpus/$fuzzer")
  dictionary=()
  [ -f "$root/fuzz/$fuzzer.dict" ] && dictionary=("-dict=$root/fuzz/$fuzzer.dict")
  "$build/fuzz/$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
    "${dictionary[@]}" "$corpus" "${seeds[@]}" 2>&1 | tail -n 12
done
