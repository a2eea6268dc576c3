#!/usr/bin/env bash
# The main job on a fresh Debian machine: install packages, build (Release), and run the demo
# graph (synthetic source -> Counter + Countrate for 1 s of stream time), which prints live
# progress and the per-measurement profile and writes results.h5 in the current folder, then
# draws its figures into results_plots/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" --target tagflow
"$root/build/tools/tagflow" run "$root/examples/demo.toml" --output "${1:-results.h5}"
"$root/build/tools/tagflow" plot "${1:-results.h5}"
