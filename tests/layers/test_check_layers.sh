#!/usr/bin/env bash
# scripts/check_layers.py passes on the source tree and fails, naming file and line, on each
# kind of wrong include planted in a scratch tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$root/scripts/check_layers.py"
python3 "$check" "$root"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
plant() {  # file, include: a tree with one file holding one include; the check must fail
  rm -rf "$scratch"/*
  mkdir -p "$scratch/channels/src/fast_path" "$(dirname "$scratch/$1")"
  echo '#pragma once' > "$scratch/channels/src/fast_path/kernel.hpp"
  printf '// planted\n#include "%s"\n' "$2" > "$scratch/$1"
  if python3 "$check" "$scratch" 2> "$scratch/errors.txt"; then
    echo "FAIL: $1 including $2 was accepted" >&2
    exit 1
  fi
  grep -q "^$1:2: " "$scratch/errors.txt" || {
    echo "FAIL: the message does not name $1:2:" >&2
    cat "$scratch/errors.txt" >&2
    exit 1
  }
}
plant core/include/tagflow/core/tag.hpp tagflow/io/sources/raw_file.hpp
plant core/src/tag.cpp tagflow/kinds.hpp
plant measurements/src/counter.cpp tagflow/io/tagfile/file_writer.hpp
plant channels/include/tagflow/channels/registry.hpp tagflow/measurements/registry.hpp
plant io/src/sources/raw_file.cpp tagflow/channels/combiner.hpp
plant measurements/src/counter.cpp fast_path/kernel.hpp
plant tools/run_command.cpp fast_path/kernel.hpp
plant serve/src/server.cpp tagflow/measurements/counter.hpp
plant io/src/source_registry.cpp tagflow/serve/server.hpp

# Allowed directions stay accepted.
rm -rf "$scratch"/*
mkdir -p "$scratch/tools" "$scratch/io/src" "$scratch/channels/src/fast_path"
echo '#pragma once' > "$scratch/channels/src/fast_path/kernel.hpp"
printf '#include "tagflow/kinds.hpp"\n#include "tagflow/channels/combiner.hpp"\n' > "$scratch/tools/a.cpp"
printf '#include "tagflow/core/tag.hpp"\n' > "$scratch/io/src/b.cpp"
printf '#include "fast_path/kernel.hpp"\n' > "$scratch/channels/src/c.cpp"
python3 "$check" "$scratch"
echo "layer check: passes on the tree, fails on each planted wrong include"
