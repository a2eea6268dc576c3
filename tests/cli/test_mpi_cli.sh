#!/usr/bin/env bash
# Distributed runs: a recording of three parts with an overflow interval, analysed by
# `tagflow run` alone, by `mpirun -n 2` and by `mpirun -n 4 --oversubscribe` (each rank seeks
# to its share of the time range through the parts' time indexes), gives results files whose
# measurement datasets and attributes are identical (Countrate, also of two virtual channels
# with a 3 ms look-back, Counter, HistogramLogBins with and without gates, and a Correlation run
# as two shards on each rank); the profile holds every rank's nodes.
# FrequencyStability and PhaseNoise agree with one pass within what the cut changes. A source
# that cannot seek and a measurement that cannot split are refused by name.
# Usage: test_mpi_cli.sh PATH/TO/tagflow PATH/TO/mpiexec
set -uo pipefail
tagflow=$1
mpiexec=$2
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# Open MPI refuses root unless told twice; CI runs as root.
mpirun=("$mpiexec")
if [ "$(id -u)" -eq 0 ]; then
  mpirun+=(--allow-run-as-root)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

source_channels='[[source.channel]]
kind = "poisson"
channel = 1
rate = 5e6
[[source.channel]]
kind = "partner"
channel = 2
partner_of = 1
delay_ps = 2000
jitter_ps = 50
probability = 0.3
[[source.channel]]
kind = "clock"
channel = 3
frequency = 1e6
jitter_ps = 30
[[source.overflow]]
begin_ps = 60_000_000_000
end_ps = 61_000_000_000'

cat >record.toml <<TOML
[run]
output = "record.h5"
duration_ps = 200_000_000_000
[source]
kind = "synthetic"
seed = 5
$source_channels
[[measurement]]
kind = "FileWriter"
name = "recording"
path = "rec.tags"
channels = [1, 2, 3]
max_file_size = 2_000_000
TOML

measurements='[[channel]]
kind = "DelayedChannel"
name = "late"
input_channel = 1
delay = 3_000_000_000
[[channel]]
kind = "Coincidence"
name = "pair"
channels = ["late", 2]
coincidence_window = 3_000_000_000
[[measurement]]
kind = "Countrate"
name = "rate"
channels = [1, 2, 3, "late", "pair"]
[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, 2, 3]
binwidth = 3_000_000_000
n_values = 50
[[measurement]]
kind = "Correlation"
name = "g2"
channel_1 = 2
channel_2 = 1
binwidth = 1000
n_bins = 1000
parallel = 2
[[measurement]]
kind = "HistogramLogBins"
name = "hlb"
click_channel = 2
start_channel = 1
exp_start = -11
exp_stop = -6
n_bins = 100
[[measurement]]
kind = "HistogramLogBins"
name = "hlb_gated"
click_channel = 2
start_channel = 1
exp_start = -11
exp_stop = -6
n_bins = 100
click_gate = [3, 1, 0]
start_gate = [1, 3, 1]'

cat >analyse.toml <<TOML
[run]
output = "one.h5"
[source]
kind = "tagfile"
path = "rec.tags"
$measurements
TOML

if "$tagflow" run -q record.toml && [ -f rec.2.tags ]; then
  pass "a recording of three parts"
else
  fail "the recording"
fi
"$tagflow" info rec.tags >info.txt
if grep -q "seekable by its time index" info.txt; then pass "tagflow info shows the index"; else
  fail "tagflow info: $(cat info.txt)"; fi

"$tagflow" run -q analyse.toml || fail "the run as one process"
"${mpirun[@]}" -n 2 "$tagflow" run -q analyse.toml -o two.h5 >mpi2.txt 2>&1 ||
  fail "mpirun -n 2: $(cat mpi2.txt)"
"${mpirun[@]}" -n 4 --oversubscribe "$tagflow" run -q analyse.toml -o four.h5 >mpi4.txt 2>&1 ||
  fail "mpirun -n 4: $(cat mpi4.txt)"

for file in two.h5 four.h5; do
  if "$python" - "$file" <<'PY'; then pass "$file equals the run as one process"; else fail "$file differs"; fi
import sys
import h5py
import numpy as np

def contents(path):
    datasets, attributes = {}, {}
    with h5py.File(path, "r") as f:
        for group in ("rate", "counter", "g2", "hlb", "hlb_gated"):
            attributes[group] = {k: v for k, v in f[group].attrs.items() if k != "running"}
            for name, item in f[group].items():
                datasets[group + "/" + name] = item[()]
        ranks = {node.split(":")[0] for node in f["profile/node"].asstr()[()]}
        attributes["profile"] = {"stream_duration_ps": f["profile"].attrs["stream_duration_ps"]}
    return datasets, attributes, ranks

one, one_attributes, _ = contents("one.h5")
other, other_attributes, ranks = contents(sys.argv[1])
ok = True  # the profile's stream duration too: the time the results cover, not the ranks' sum
for key, value in one.items():
    if key not in other or not np.array_equal(value, other[key], equal_nan=True):
        print("dataset", key, "differs"); ok = False
for group, attributes in one_attributes.items():
    for key, value in attributes.items():
        if not np.array_equal(value, other_attributes[group].get(key)):
            print("attribute", group, key, value, other_attributes[group].get(key)); ok = False
expected = 2 if "two" in sys.argv[1] else 4
if ranks != {f"rank {r}" for r in range(expected)}:
    print("profile ranks", ranks); ok = False
if one["counter/data"].sum() == 0 or one["g2/data"].sum() == 0 or one["hlb_gated/data"].sum() == 0 or one_attributes["g2"]["overflow_count"] != 1:
    print("the reference run counted nothing"); ok = False
sys.exit(0 if ok else 1)
PY
done

# The clock measurements split too; each rank's range is a series of its own (docs/parallel.md):
# with every edge a sample, the samples and carrier are those of one pass, and the deviations
# lose only the terms across the one cut (3 n of 2e5 at n = 100: within 1 %).
cat >clocks.toml <<TOML
[run]
output = "clocks_one.h5"
[source]
kind = "tagfile"
path = "rec.tags"
[[measurement]]
kind = "FrequencyStability"
name = "fs"
channel = 3
steps = [1, 10, 100]
average = 1
[[measurement]]
kind = "PhaseNoise"
name = "pn"
channels = [3]
samples_per_octave = 16
TOML
"$tagflow" run -q clocks.toml || fail "the clock measurements as one process"
if "${mpirun[@]}" -n 2 "$tagflow" run -q clocks.toml -o clocks_two.h5 >mpi_clocks.txt 2>&1 &&
  "$python" - <<'PY'; then pass "FrequencyStability and PhaseNoise over two ranks"; else fail "clock measurements over two ranks: $(cat mpi_clocks.txt)"; fi
import sys
import h5py
import numpy as np

with h5py.File("clocks_one.h5", "r") as one, h5py.File("clocks_two.h5", "r") as two:
    ok = one["fs"].attrs["samples"] == two["fs"].attrs["samples"] > 150000
    ok &= bool(np.allclose(one["fs/adev"][()], two["fs/adev"][()], rtol=0.01))
    ok &= bool(np.allclose(one["pn/frequency"][()], two["pn/frequency"][()], rtol=1e-9))
    level = lambda f: np.mean(10 ** (f["pn/phase_noise"][0][f["pn/segments"][0] >= 20] / 10))
    ok &= abs(10 * np.log10(level(one) / level(two))) < 0.3
    if not ok:
        print(one["fs"].attrs["samples"], two["fs"].attrs["samples"], one["fs/adev"][()],
              two["fs/adev"][()], level(one), level(two))
sys.exit(0 if ok else 1)
PY

cat >synthetic.toml <<TOML
[run]
output = "synthetic.h5"
duration_ps = 1_000_000_000
[source]
kind = "synthetic"
$source_channels
$measurements
TOML
if "${mpirun[@]}" -n 2 "$tagflow" run -q synthetic.toml >refused.txt 2>&1; then
  fail "a synthetic source over two ranks was not refused"
elif grep -q "needs a source that knows its time range" refused.txt; then
  pass "a source that cannot seek is refused"
else
  fail "refusal message: $(cat refused.txt)"
fi

cat analyse.toml - >with_writer.toml <<TOML
[[measurement]]
kind = "FileWriter"
name = "copy"
path = "copy.tags"
channels = [1]
TOML
if "${mpirun[@]}" -n 2 "$tagflow" run -q with_writer.toml -o writer.h5 >refused.txt 2>&1; then
  fail "a FileWriter over two ranks was not refused"
elif grep -q "FileWriter 'copy' cannot be split by time" refused.txt; then
  pass "a measurement that cannot split is refused"
else
  fail "refusal message: $(cat refused.txt)"
fi
finish
