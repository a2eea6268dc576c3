#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install packages, build everything
# (Release, warnings are errors), run every test with ctest, then rebuild the core, graph and
# measurement tests under AddressSanitizer+UBSan, and the core tests under ThreadSanitizer,
# and run them, and last runs each libFuzzer target for a bounded time (FUZZ_SECONDS, default
# 30). Under TSan the tests that run a flow graph are left out: Debian's oneTBB is not
# built with TSan, so the hand-offs it orders between tasks look like races to TSan (see
# docs/testing.md). Build folders: build/, build-asan/, build-tsan/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${TAGFLOW_JOBS:-2}"
bash "$root/scripts/setup.sh"

echo "== Release build and full test suite"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTAGFLOW_WERROR=ON >/dev/null
cmake --build "$root/build" -j "$jobs"
ctest --test-dir "$root/build" -j 2 --output-on-failure

sanitized() {  # name, cmake sanitizer value, ctest selection, targets...
  local name=$1 sanitizer=$2 selection=$3
  shift 3
  echo "== $name build: tests $selection"
  cmake -S "$root" -B "$root/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTAGFLOW_WERROR=ON -DTAGFLOW_SANITIZE="$sanitizer" \
    -DTAGFLOW_BUILD_BENCH=OFF -DTAGFLOW_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$root/build-$name" -j "$jobs" --target "$@"
  # shellcheck disable=SC2086
  ctest --test-dir "$root/build-$name" -j 2 --output-on-failure $selection
}
sanitized asan address '-L core|measurements' tagflow_core_tests tagflow_measurement_tests \
  tagflow_histogram_tests tagflow_clock_tests tagflow_channel_tests
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  sanitized tsan thread '-L core -LE graph' tagflow_core_tests

echo "== libFuzzer: the tag file reader and the UDP decoder, ${FUZZ_SECONDS:-30} s each"
bash "$root/scripts/fuzz.sh" "${FUZZ_SECONDS:-30}"
