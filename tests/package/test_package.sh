#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then configures, builds and runs the consumer
# project of tests/package against it. Usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
here="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
test -f "$scratch/prefix/lib/cmake/tagflow/tagflowConfig.cmake"
test -f "$scratch/prefix/include/tagflow/tagflow.hpp"
if find "$scratch/prefix/include" -path '*fast_path*' -o -name 'handle.hpp' | grep -q .; then
  echo "internal headers were installed" >&2
  exit 1
fi
cmake -S "$here" -B "$scratch/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
"$scratch/consumer/consumer"
# The Python package installed under the same prefix imports from there.
if [ -d "$scratch"/prefix/lib/python3*/*-packages/tagflow ]; then
  PYTHONPATH=$(echo "$scratch"/prefix/lib/python3*/*-packages) /usr/bin/python3 -c \
    "import tagflow, numpy; g = tagflow.Graph(tagflow.SyntheticSource(duration_ps=10**9)); r = tagflow.Countrate(g, [1]); g.run(); assert r.getCountsTotal()[0] > 0; print('python package', tagflow.__version__)"
fi
