#!/usr/bin/env bash
# End-to-end tests of recording and replay from the command line: a FileWriter run and its
# replay through `kind = "tagfile"` give identical Counter and Correlation datasets; `tagflow
# convert` round-trips tag file -> Photon-HDF5 -> tag file -> raw exactly, writes the
# Photon-HDF5 fields with their descriptions, and imports compressed Photon-HDF5 files; bad
# inputs (an unwritable or full path, a foreign file, an unknown format, a compression filter
# that is not available) fail with a clear message and a non-zero exit code, leaving no output;
# a truncated tag file converts up to its damaged tail, exit 3.
# Usage: test_tagfile_cli.sh PATH/TO/tagflow
set -uo pipefail
tagflow=$1
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"


measurements='[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, 2, -1]
binwidth = 1_000_000_000
n_values = 30
[[measurement]]
kind = "Correlation"
name = "correlation"
channel_1 = 2
channel_2 = 1
binwidth = 100
n_bins = 400'

cat >live.toml <<TOML
[run]
output = "live.h5"
duration_ps = 30_000_000_000
[source]
kind = "synthetic"
block_size = 3000
[[source.channel]]
channel = 1
kind = "poisson"
rate = 5e6
[[source.channel]]
channel = 2
kind = "partner"
partner_of = 1
delay_ps = 2000
jitter_ps = 50
probability = 0.5
[[source.channel]]
channel = -1
kind = "poisson"
rate = 1e6
[[source.overflow]]
begin_ps = 10_000_000_000
end_ps = 11_000_000_000
$measurements
[[measurement]]
kind = "FileWriter"
name = "writer"
path = "rec.tags"
channels = [1, 2, -1]
max_file_size = 100_000
configuration = "three channels, one overflow"
TOML

cat >replay.toml <<TOML
[run]
output = "replay.h5"
[source]
kind = "tagfile"
path = "rec.tags"
block_size = 777
$measurements
TOML

# --- record, replay, compare ------------------------------------------------------------------
if "$tagflow" run -q live.toml 2>stderr.txt && "$tagflow" run -q replay.toml 2>>stderr.txt; then
  pass "record and replay run"
else
  fail "record and replay run: $(cat stderr.txt)"
fi
if [ -f rec.1.tags ]; then pass "max_file_size splits the recording into parts"; else fail "no part rec.1.tags"; fi
if "$python" - <<'PY'
import h5py, numpy as np, sys
live, replay = h5py.File("live.h5", "r"), h5py.File("replay.h5", "r")
for group in ("counter", "correlation"):
    names = []
    live[group].visit(lambda name: names.append(name) if isinstance(live[group][name], h5py.Dataset) else None)
    assert names, group
    for name in names:
        a, b = live[group][name][()], replay[group][name][()]
        if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
            sys.exit(f"{group}/{name} differs")
    for key in ("capture_duration_ps", "overflow_count"):
        if live[group].attrs.get(key) != replay[group].attrs.get(key):
            sys.exit(f"{group} fact {key} differs")
assert live["writer"].attrs["total_events"] > 100000
PY
then pass "replay datasets are bit-identical to the live run"; else fail "replay differs from live"; fi

# --- convert ----------------------------------------------------------------------------------
"$tagflow" convert -q rec.tags rec.h5 --description "test recording" &&
  "$tagflow" convert -q rec.h5 back.tags --compression zstd &&
  "$tagflow" convert -q back.tags back.raw && "$tagflow" convert -q rec.tags direct.raw &&
  "$tagflow" convert -q direct.raw --to tags raw.tagfile
if cmp -s back.raw direct.raw && [ -s direct.raw ]; then
  pass "tags -> Photon-HDF5 -> tags (zstd) -> raw equals tags -> raw"
else
  fail "convert round trip differs"
fi
if "$python" - <<'PY'
import h5py, numpy as np
f = h5py.File("rec.h5", "r")
assert f.attrs["format_name"] == b"Photon-HDF5", f.attrs["format_name"]
for path in ("description", "acquisition_duration", "photon_data/timestamps", "photon_data/detectors",
             "photon_data/timestamps_specs/timestamps_unit", "setup/num_pixels", "setup/num_spots",
             "setup/num_spectral_ch", "setup/num_polarization_ch", "setup/num_split_ch",
             "setup/modulated_excitation", "setup/lifetime", "identity/format_name",
             "identity/format_version", "identity/format_url", "identity/software",
             "identity/software_version", "identity/creation_time", "provenance/filename"):
    assert path in f, path
assert f["photon_data/timestamps_specs/timestamps_unit"][()] == 1e-12
t = f["photon_data/timestamps"][()]
d = f["photon_data/detectors"][()]
assert len(t) == len(d) > 100000 and np.all(np.diff(t) >= 0)
assert set(np.unique(d)) == {-1, 1, 2}, np.unique(d)
assert f["setup/num_pixels"][()] == 3
assert f["description"][()] == b"test recording"
assert abs(f["acquisition_duration"][()] - 0.03) < 1e-9
raw = np.fromfile("direct.raw", dtype=[("type", "u1"), ("reserved", "u1"), ("missed", "<u2"),
                                       ("channel", "<i4"), ("time", "<i8")])
photons = raw[raw["type"] == 0]
assert np.array_equal(photons["time"], t) and np.array_equal(photons["channel"], d)
assert (raw["type"] == 2).sum() == 1 and (raw["type"] == 4).sum() > 0
# What the reference validator checks besides (the Catch tests hold the full field list): a
# TITLE on every node outside /user, the root's official one, measurement_specs, excitation_cw,
# and the photon arrays deflated.
names = []
f.visit(lambda name: names.append(name) if not name.startswith("user") else None)
for name in names:
    assert len(f[name].attrs["TITLE"]) > 0, name
assert f.attrs["TITLE"].startswith(b"A file format for photon-counting detector"), f.attrs["TITLE"]
assert f["photon_data/measurement_specs/measurement_type"][()] == b"generic"
assert list(f["setup/excitation_cw"][()]) == [1] and list(f["setup/excitation_alternated"][()]) == [0]
assert list(f["setup/detectors/id"][()]) == [-1, 1, 2]
assert f["photon_data/timestamps"].compression == "gzip" and f["photon_data/timestamps"].shuffle
PY
then pass "Photon-HDF5 fields and photons match the recording"; else fail "Photon-HDF5 content"; fi

# Photon-HDF5 files of other programs, compressed: gzip always, blosc when its plugin is there.
"$python" - <<'PY'
import h5py, numpy as np
t = np.cumsum(np.arange(1, 3001, dtype="i8") % 97 + 1)
d = (np.arange(3000) % 3).astype("u1")
filters = {"gzip": dict(compression="gzip", shuffle=True)}
if h5py.h5z.filter_avail(32001):
    filters["blosc"] = dict(compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 0))
for name, options in filters.items():
    with h5py.File(f"{name}.h5", "w") as f:
        f.create_dataset("photon_data/timestamps", data=t, chunks=(500,), **options)
        f.create_dataset("photon_data/detectors", data=d, chunks=(500,), **options)
        f["photon_data/timestamps_specs/timestamps_unit"] = 5e-12
raw = np.zeros(3000, dtype=[("type", "u1"), ("reserved", "u1"), ("missed", "<u2"),
                            ("channel", "<i4"), ("time", "<i8")])
raw["time"], raw["channel"] = t * 5, d
raw.tofile("compressed.expected")
PY
for name in gzip blosc; do
  if [ ! -f "$name.h5" ]; then
    echo "skipped: $name import (the blosc HDF5 plugin is not installed: hdf5-filter-plugin-blosc-serial)"
  elif "$tagflow" convert -q "$name.h5" "$name.raw" && cmp -s "$name.raw" compressed.expected; then
    pass "a $name-compressed Photon-HDF5 file imports"
  else
    fail "a $name-compressed Photon-HDF5 file does not import"
  fi
done

# --- bad inputs -------------------------------------------------------------------------------
sed 's#path = "rec.tags"#path = "no/such/folder/x.tags"#' live.toml >unwritable.toml
expect_command_failure "FileWriter to a missing folder" 1 "cannot create tag file 'no/such/folder/x.tags'" \
  "$tagflow" run -q unwritable.toml
sed 's#path = "rec.tags"#path = "/dev/full"#' live.toml >full.toml
expect_command_failure "FileWriter to a full device" 1 "No space left on device" "$tagflow" run -q full.toml
# A file size limit (ulimit -f, its signal ignored) stands for a disk that fills while HDF5
# writes: the write fails as on a full disk (EFBIG for ENOSPC). The command must fail, say why,
# end without a crash and leave no file.
limited() { (trap '' XFSZ && ulimit -f 64 && "$@"); }
expect_command_failure "a Photon-HDF5 export onto a full disk" 1 "File too large" \
  limited "$tagflow" convert -q rec.h5 limited.h5
cat >big_results.toml <<TOML
[run]
duration_ps = 1_000_000_000
[source]
kind = "synthetic"
[[measurement]]
kind = "Counter"
channels = [1, 2, 3, 4, 5, 6, 7, 8]
binwidth = 1000
n_values = 4000
TOML
expect_command_failure "results onto a full disk" 1 "File too large" \
  limited "$tagflow" run -q big_results.toml --output limited.h5
ls limited.h5* >/dev/null 2>&1 && fail "a write onto a full disk left a file: $(ls limited.h5*)"
cat >foreign.toml <<TOML
[source]
kind = "tagfile"
path = "direct.raw"
$measurements
TOML
expect_command_failure "a raw file as a tag file" 1 "is not a tag file" "$tagflow" run -q foreign.toml
expect_command_failure "convert: unknown extension" 2 "cannot tell the format" "$tagflow" convert rec.tags out.xyz
expect_command_failure "convert: a raw file as Photon-HDF5" 1 "not an HDF5 file" "$tagflow" convert --from h5 direct.raw x.tags
# Converting a later part of a set onto the set's first part would move the input aside with
# the output's earlier parts: refused before anything is touched.
parts_before=$(ls rec*.tags | wc -l)
expect_command_failure "convert: a later part onto its own set" 2 \
  "the output's later part 'rec.1.tags' is the same file as the input 'rec.1.tags'" \
  "$tagflow" convert rec.1.tags rec.tags
if [ "$(ls rec*.tags | wc -l)" = "$parts_before" ] && "$tagflow" convert -q rec.tags check.raw &&
  cmp -s check.raw direct.raw; then
  pass "the set is untouched"
else
  fail "converting a later part onto its set changed the set"
fi
# A later part given alone is read on to the end of its set, in parts named after part 0
# (rec.2.tags after rec.1.tags): a FileWriter or a merge writing one of them is refused.
[ -f rec.2.tags ] || fail "the recording has no part rec.2.tags to read on into"
cp rec.2.tags rec_2_before.tags
cat >from_part.toml <<TOML
[source]
kind = "tagfile"
path = "rec.1.tags"
[[measurement]]
kind = "FileWriter"
name = "copy"
path = "rec.2.tags"
channels = [1]
TOML
expect_command_failure "a FileWriter onto a part its source reads on into" 2 \
  "path 'rec.2.tags' is the same file as [source] path 'rec.1.tags', read on into its later part" \
  "$tagflow" run -q from_part.toml --output from_part.h5
expect_command_failure "merge onto a part an input reads on into" 2 \
  "output 'rec.2.tags' is the same file as an input 'rec.1.tags', read on into its later part" \
  "$tagflow" merge rec.2.tags rec.1.tags
if cmp -s rec.2.tags rec_2_before.tags && [ ! -e from_part.h5 ]; then
  pass "the part read on into is untouched"
else
  fail "a refused run or merge changed rec.2.tags or left from_part.h5"
fi

# --- merge ----------------------------------------------------------------------------------
# The recording merged with a copy of itself on channels shifted by 10 and 1000 ps later: each
# copy's tags come back shifted, in time order, the two overflow intervals as one.
if "$tagflow" merge -q merged.tags rec.tags rec.tags --channel-offsets 0,10 --time-offsets 0,1000 &&
  "$tagflow" convert -q merged.tags merged.raw && "$python" - <<'PY'; then
import numpy as np
record = [("type", "u1"), ("reserved", "u1"), ("missed", "<u2"), ("channel", "<i4"), ("time", "<i8")]
direct = np.fromfile("direct.raw", dtype=record)
merged = np.fromfile("merged.raw", dtype=record)
assert np.all(np.diff(merged["time"]) >= 0)
tags = direct[direct["type"] == 0]
merged_tags = merged[merged["type"] == 0]
original = merged_tags[np.abs(merged_tags["channel"]) < 10]
copy = merged_tags[np.abs(merged_tags["channel"]) > 10]
assert len(tags) > 0 and np.array_equal(original["time"], tags["time"])
assert np.array_equal(original["channel"], tags["channel"])
assert np.array_equal(copy["time"], tags["time"] + 1000)
assert np.array_equal(copy["channel"], tags["channel"] + np.sign(tags["channel"]) * 10)
assert list(merged["time"][merged["type"] == 2]) == [10_000_000_000]
assert list(merged["time"][merged["type"] == 3]) == [11_000_001_000]
missed = merged["missed"][merged["type"] == 4].sum()
assert missed == 2 * direct["missed"][direct["type"] == 4].sum() and missed > 0
PY
  pass "merge: two shifted copies of a recording, in order, overflows united"
else
  fail "merge of two shifted copies"
fi
# The same merge as a source of its own, named in a configuration.
cat >merged_source.toml <<'TOML'
[source]
kind = "merged"
[[source.input]]
kind = "tagfile"
path = "rec.tags"
[[source.input]]
kind = "tagfile"
path = "rec.tags"
channel_offset = 10
time_offset_ps = 1000
TOML
if "$tagflow" record merged_source.toml viasource.raw >/dev/null && cmp -s viasource.raw merged.raw; then
  pass "merged source: the stream of tagflow merge"
else
  fail "merged source: viasource.raw differs from merged.raw"
fi
sed 's/channel_offset = 10/channel_offset = 10\nchannel_ofset = 3/' merged_source.toml >bad_key.toml
expect_command_failure "merged source: an unknown key of an input" 2 "source.input #1" \
  "$tagflow" record bad_key.toml x.raw
sed 's/channel_offset = 10/channel_offset = 200_000_000/' merged_source.toml >bad_offset.toml
expect_command_failure "merged source: an offset out of range" 2 \
  "source.input #1: channel_offset 200000000 is invalid (valid: -134217727..134217727)" "$tagflow" record bad_offset.toml x.raw
sed 's/kind = "merged"/kind = "merged"\nblock_size = 2_000_000/' merged_source.toml >big_blocks.toml
expect_command_failure "merged source: blocks larger than a tag file record" 2 \
  "block_size 2000000 is invalid (valid: 1..1048576)" "$tagflow" record big_blocks.toml x.raw
expect_command_failure "merge: offsets for another number of inputs" 2 \
  "1 channel offsets for 2 inputs" "$tagflow" merge m.tags rec.tags rec.tags --channel-offsets 3
expect_command_failure "merge: the output among the inputs" 2 "rec.tags" \
  "$tagflow" merge rec.tags rec.tags rec.tags
if [ -e m.tags ]; then fail "a refused merge left m.tags"; else pass "a refused merge leaves no output"; fi

# A damaged tail: everything before it is converted, exit 3 (test_killed_recording.sh makes
# them by killing recordings).
# Inside the last record of part 0: before its part end and the time index that part end
# carries (the trailer's second number is the index's size).
index_size=$(od -An -t u8 -j $(($(stat -c %s rec.tags) - 16)) -N 8 rec.tags | tr -d ' ')
cut=$(($(stat -c %s rec.tags) - index_size - 56 - 100))
head -c "$cut" rec.tags >cut.tags
expect_command_failure "convert: a truncated tag file" 3 "truncated at byte offset $cut" "$tagflow" convert cut.tags cut.raw
expect_command_failure "convert: a truncated tag file to Photon-HDF5" 3 "truncated at byte offset $cut" \
  "$tagflow" convert cut.tags cut.h5
if "$python" - <<'PY'; then
import h5py, os
tags = os.path.getsize("cut.raw") // 16
assert tags > 0 and open("cut.raw", "rb").read() == open("direct.raw", "rb").read(16 * tags)
with h5py.File("cut.h5") as f:
    exported = len(f["photon_data/timestamps"]) + len(f["user/tagflow/special_times"])
assert exported == tags, (exported, tags)
PY
  pass "a truncated tag file converts to its complete records, to raw and Photon-HDF5"
else
  fail "a truncated tag file did not convert to its complete records"
fi
expect_command_failure "convert: Photon-HDF5 into a missing folder" 1 \
  "cannot create Photon-HDF5 file 'no/such/folder/x.h5'" "$tagflow" convert rec.tags no/such/folder/x.h5
# A field that must be one number, stored as an array, is named, not read past its end.
"$python" -c '
import h5py, numpy as np
with h5py.File("unit_array.h5", "w") as f:
    f.create_dataset("photon_data/timestamps", data=np.arange(1000, dtype="i8"))
    f["photon_data/timestamps_specs/timestamps_unit"] = np.full(100000, 1e-12)'
expect_command_failure "convert: a unit stored as an array" 1 \
  "photon_data/timestamps_specs/timestamps_unit holds 100000 values (valid: one, a scalar)" \
  "$tagflow" convert unit_array.h5 unit_array.tags
# h5py has the lzf filter built in; tagflow's HDF5 has it only from a plugin (hdf5-plugin-lzf).
"$python" -c '
import h5py, numpy as np
with h5py.File("lzf.h5", "w") as f:
    f.create_dataset("photon_data/timestamps", data=np.arange(1000, dtype="i8"), compression="lzf")
    f["photon_data/timestamps_specs/timestamps_unit"] = 1e-12'
if compgen -G "/usr/lib/*/hdf5/serial/plugins/*lzf*" >/dev/null || [ -n "${HDF5_PLUGIN_PATH:-}" ]; then
  echo "skipped: a missing filter (an lzf plugin may be installed)"
else
  expect_command_failure "convert: a filter that is not available is named" 1 "HDF5 filter 32000 (lzf)" \
    "$tagflow" convert lzf.h5 lzf.tags
  if [ -e lzf.tags ]; then fail "a failed import left lzf.tags"; else
    pass "a failed import leaves no output"; fi
fi

finish
