#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install packages, check that includes point
# down the layers, build everything (Release, warnings are errors) and run every test with
# ctest (the installed package used from a project of its own among them). Then rebuild and
# run the core, graph, measurement and channel tests for a baseline x86-64 processor (the
# portable fallbacks of the AVX2 fast paths); those, the split-by-time and the live view's
# C++ tests under AddressSanitizer+UBSan; and the core, UDP link and tag file tests (their
# recorder's threads) under ThreadSanitizer. Last, each libFuzzer target runs for a bounded
# time (FUZZ_SECONDS, default 20). Each stage's heading says how long the script has run. Under TSan the tests that run a flow graph are left out:
# Debian's oneTBB is not built with TSan, so the hand-offs it orders between tasks look like
# races to TSan (see docs/testing.md). Build folders: build/, build-baseline/, build-asan/,
# build-tsan/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${TAGFLOW_JOBS:-2}"
bash "$root/scripts/setup.sh"
python3 "$root/scripts/check_layers.py" "$root"

echo "== Release build and full test suite (at ${SECONDS} s)"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTAGFLOW_WERROR=ON >/dev/null
cmake --build "$root/build" -j "$jobs"
ctest --test-dir "$root/build" -j 2 --output-on-failure

sanitized() {  # name, cmake sanitizer value, CPU target, ctest selection, targets...
  local name=$1 sanitizer=$2 cpu=$3 selection=$4
  shift 4
  echo "== $name build ($cpu): tests $selection (at ${SECONDS} s)"
  # -O1 with line tables: a quarter less compile time than -O2 -g, and the optimisation level
  # the sanitizers are usually run at; reports still name files and lines.
  cmake -S "$root" -B "$root/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DTAGFLOW_WERROR=ON -DTAGFLOW_SANITIZE="$sanitizer" -DTAGFLOW_CPU_TARGET="$cpu" \
    -DTAGFLOW_BUILD_BENCH=OFF -DTAGFLOW_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$root/build-$name" -j "$jobs" --target "$@"
  # shellcheck disable=SC2086
  ctest --test-dir "$root/build-$name" -j 2 --output-on-failure $selection
}
unit_tests=(tagflow_core_tests tagflow_measurement_tests tagflow_histogram_tests
  tagflow_clock_tests tagflow_channel_tests)
sanitized baseline "" x86-64 '-L core|measurements' "${unit_tests[@]}"
sanitized asan address x86-64-v3 '-L core|measurements|serve' "${unit_tests[@]}" \
  tagflow_split_tests tagflow_serve_tests
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  sanitized tsan thread x86-64-v3 "-L core|udp|tagfile -LE graph|netns" tagflow_core_tests \
  tagflow_udp_tests tagflow_tagfile_tests

echo "== libFuzzer: every fuzz target (tag files, UDP decoder, vendor readers), ${FUZZ_SECONDS:-20} s each (at ${SECONDS} s)"
bash "$root/scripts/fuzz.sh" "${FUZZ_SECONDS:-20}"
echo "== done (at ${SECONDS} s)"
