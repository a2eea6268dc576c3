"""Checks a results file downloaded from `tagflow serve` (GET /api/results.h5).

Usage: check_results.py RESULTS_H5 STOPPED_NAME CAPTURE_PS [--config CONFIG_TOML]

Requires the file to be a tagflow results file (docs/hdf5-layout.md) holding one group per
measurement of the run's configuration, each of the configured kind, and the measurement
STOPPED_NAME (stopped on the page before the download) to have stored exactly CAPTURE_PS as its
`capture_duration_ps` (what the page showed once it was stopped). The configuration is read
from CONFIG_TOML when given, else from the file's own `config` attribute. Prints a one-line
summary; exits 1 with the reason when a check fails.
"""

import argparse
import sys
import tomllib

import h5py


def configured_measurements(config_text):
    """(name, kind) of each [[measurement]], named as tools/run_config.cpp names them."""
    config = tomllib.loads(config_text)
    out = []
    for i, table in enumerate(config.get("measurement", [])):
        kind = table["kind"]
        out.append((table.get("name", f"{kind}{i}"), kind))
    return out


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def check(args):
    with h5py.File(args.results, "r") as f:
        if text(f.attrs.get("format", "")) != "tagflow-results/1":
            return f"format attribute is {f.attrs.get('format')!r}, not 'tagflow-results/1'"
        if args.config:
            with open(args.config, encoding="utf-8") as c:
                config_text = c.read()
        else:
            config_text = text(f.attrs.get("config", ""))
            if not config_text:
                return "the file stores no configuration and no --config was given"
        expected = configured_measurements(config_text)
        if not expected:
            return "the configuration has no [[measurement]]"
        for name, kind in expected:
            if name not in f or not isinstance(f[name], h5py.Group):
                return f"measurement group /{name} is missing (groups: {sorted(f.keys())})"
            stored = text(f[name].attrs.get("kind", ""))
            if stored != kind:
                return f"/{name} has kind {stored!r}, the configuration says {kind!r}"
        if args.stopped not in dict(expected):
            return f"{args.stopped!r} is not a configured measurement"
        group = f[args.stopped]
        if "capture_duration_ps" not in group.attrs:
            return f"/{args.stopped} has no capture_duration_ps attribute"
        capture = int(group.attrs["capture_duration_ps"])
        if capture != args.capture_ps:
            return (f"/{args.stopped} capture_duration_ps is {capture}, the page showed "
                    f"{args.capture_ps} after stopping it")
        if "running" in group.attrs and int(group.attrs["running"]) != 0:
            return f"/{args.stopped} is stored as running, but it was stopped"
        print(f"check_results: ok: {len(expected)} measurement groups, /{args.stopped} "
              f"capture_duration_ps = {capture}")
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results")
    parser.add_argument("stopped")
    parser.add_argument("capture_ps", type=int)
    parser.add_argument("--config")
    args = parser.parse_args()
    try:
        error = check(args)
    except (OSError, KeyError, ValueError, tomllib.TOMLDecodeError) as e:
        error = f"{type(e).__name__}: {e}"
    if error:
        print(f"check_results: FAILED: {args.results}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
