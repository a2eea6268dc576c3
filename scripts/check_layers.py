#!/usr/bin/env python3
"""Fails when an include crosses a layer the wrong way, naming the file and line.

The layers, lowest first (docs/architecture.md):
  core                        includes nothing of the project
  measurements, channels, io  include core only, never each other
  serve                       the live view: includes core and io
  include/ (tagflow.hpp, kinds.hpp: the whole library joined), then tools, bench, examples,
  python, tests, fuzz         may include all of the above

An include names its layer by its path ("tagflow/<layer>/..."); the internal headers of a
library ("fast_path/...", "hdf5/...") may be included only from inside that library.
Usage: scripts/check_layers.py [ROOT]
"""

import pathlib
import re
import sys

LIBRARIES = {"core", "measurements", "channels", "io", "serve"}
ALLOWED = {
    "core": {"core"},
    "measurements": {"core", "measurements"},
    "channels": {"core", "channels"},
    "io": {"core", "io"},
    "serve": {"core", "io", "serve"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".cc"}


def layer_of_include(path: str):
    parts = path.split("/")
    if parts[0] != "tagflow":
        return None
    if len(parts) == 2:  # tagflow/tagflow.hpp, tagflow/kinds.hpp, tagflow/version.hpp
        return "version" if parts[1] == "version.hpp" else "all"
    return parts[1] if parts[1] in LIBRARIES else None


def internal_headers(root: pathlib.Path):
    """Maps the first folder of each library's internal headers to that library."""
    owners = {}
    for library in LIBRARIES:
        src = root / library / "src"
        if not src.is_dir():
            continue
        for folder in src.iterdir():
            if folder.is_dir() and any(folder.glob("*.hpp")):
                owners[folder.name] = library
    return owners


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    owners = internal_headers(root)
    problems = []
    for file in sorted(root.rglob("*")):
        if file.suffix not in SOURCE_SUFFIXES or not file.is_file():
            continue
        relative = file.relative_to(root)
        top = relative.parts[0]
        if top.startswith("build") or top.startswith("."):
            continue
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = match.group(1)
            internal_owner = owners.get(included.split("/")[0]) if "/" in included else None
            if internal_owner is not None and top not in (internal_owner, "tests"):
                problems.append(f"{relative}:{number}: includes {included}, an internal header "
                                f"of {internal_owner}/ (only {internal_owner}/ and its tests may)")
                continue
            if top not in ALLOWED:
                continue
            layer = layer_of_include(included)
            if layer is None or layer == "version":
                continue
            if layer not in ALLOWED[top]:
                valid = ", ".join(sorted(ALLOWED[top]))
                problems.append(f"{relative}:{number}: {top}/ includes {included} "
                                f"(layer {layer}); {top}/ may include only: {valid}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} include(s) cross a layer the wrong way", file=sys.stderr)
        return 1
    print("layers: every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
