#!/usr/bin/env bash
# End-to-end test of `tagflow plot`: a short run of every measurement kind it draws, then the
# figures checked as images (PNG signature, size, real content), the options, the plotter's
# exit status passed through, and every bad input refused with a clear message.
# Usage: test_plot.sh PATH/TO/tagflow PATH/TO/plot.toml
set -uo pipefail
tagflow=$1
config=$2
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"


# expect_failure NAME EXIT_CODE MESSAGE_SUBSTRING ARGS...: no figure folder may be left behind.
expect_failure() {
  local name=$1 code=$2 message=$3
  shift 3
  rm -rf ./*_plots
  "$tagflow" plot "$@" >stdout.txt 2>stderr.txt
  local status=$?
  if [ "$status" -ne "$code" ]; then
    fail "$name: exit code $status, expected $code ($(cat stderr.txt))"
  elif ! grep -qF -- "$message" stderr.txt; then
    fail "$name: message '$(cat stderr.txt)' lacks '$message'"
  elif ls -d ./*_plots >/dev/null 2>&1; then
    fail "$name: a figure folder was created"
  else
    pass "$name"
  fi
}

if ! "$tagflow" run -q "$config" --output results.h5; then
  fail "tagflow run of the plot configuration"
  echo "$passed passed, $failed failed"
  exit 1
fi

# --- the figures: one per measurement and the profile, each a real picture --------------------
expected="counter countrate g2 g2_log profile"
cat >check_images.py <<'PYTHON'
import sys
import matplotlib.image
import numpy as np
folder, stems = sys.argv[1], sys.argv[2:]
listed = open("stdout.txt").read().split()
assert listed == [f"{folder}/{s}.png" for s in stems], listed
for path in listed:
    with open(path, "rb") as image:
        assert image.read(8) == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pixels = matplotlib.image.imread(path)[..., :3]
    height, width = pixels.shape[:2]
    assert height >= 300 and width >= 600, (path, pixels.shape)
    # A figure with axes, lines and text: a few percent of the pixels drawn, many colours.
    drawn = (pixels < 0.95).any(axis=2).mean()
    colours = len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert drawn > 0.02 and colours > 50, (path, drawn, colours)
PYTHON
if "$tagflow" plot results.h5 >stdout.txt 2>stderr.txt; then
  # shellcheck disable=SC2086
  if "$python" check_images.py "$work/results_plots" $expected; then
    pass "one valid, non-trivial PNG per measurement and the profile"
  else
    fail "one valid, non-trivial PNG per measurement and the profile"
  fi
else
  fail "tagflow plot exited non-zero: $(cat stderr.txt)"
fi

if "$tagflow" plot results.h5 -o figures --format svg >stdout.txt 2>stderr.txt &&
  [ "$(ls figures | tr '\n' ' ')" = "counter.svg countrate.svg g2.svg g2_log.svg profile.svg " ] &&
  grep -q "<svg" figures/g2_log.svg; then
  pass "--output folder and --format svg"
else
  fail "--output folder and --format svg: $(ls figures 2>&1) $(cat stderr.txt)"
fi

# The plotter's exit status and output come through unchanged.
printf 'import sys\nprint("plotter", sys.argv[1:])\nsys.exit(3)\n' >fake_plot.py
TAGFLOW_PLOT_SCRIPT=$work/fake_plot.py "$tagflow" plot results.h5 -o somewhere >stdout.txt 2>&1
status=$?
forwarded="plotter ['results.h5', '--format', 'png', '--output', 'somewhere']"
if [ "$status" -eq 3 ] && grep -qF "$forwarded" stdout.txt; then
  pass "TAGFLOW_PLOT_SCRIPT overrides the plotter; its exit status is returned"
else
  fail "TAGFLOW_PLOT_SCRIPT override: exit $status, '$(cat stdout.txt)'"
fi

# --- bad input ----------------------------------------------------------------------------------
expect_failure "missing results file" 1 "cannot open results file 'missing.h5': No such file" \
  missing.h5
printf 'not hdf5\n' >notes.txt
expect_failure "not an HDF5 file" 1 "'notes.txt' is not an HDF5 file" notes.txt
"$python" -c 'import h5py; h5py.File("other.h5", "w")["x"] = [1, 2]'
expect_failure "HDF5 file that is not a tagflow result" 1 \
  "'other.h5' is not a tagflow results file: it has no 'format' attribute" other.h5
expect_failure "output folder below a file" 1 "cannot create output folder 'notes.txt/figs'" \
  results.h5 -o notes.txt/figs
TAGFLOW_PLOT_SCRIPT=$work/none.py expect_failure "plotter script missing" 1 \
  "plot script '$work/none.py' not found" results.h5
expect_failure "no results file given" 2 "results is required"
expect_failure "unknown image format" 2 "gif not in {png,svg,pdf}" results.h5 --format gif

finish
