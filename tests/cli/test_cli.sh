#!/usr/bin/env bash
# End-to-end tests of the `tagflow` command line: a good run's HDF5 file checked against
# independent facts of the stream, the raw-file round trip, the trace, and every bad input
# the CLI must refuse with a clear message, a non-zero exit code and no output file left; a raw
# file cut inside a record is measured up to the cut, the cut named, exit 3; outputs that are
# the configuration, the source's file, each other, a folder or a pipe are refused before the
# run.
# Usage: test_cli.sh PATH/TO/tagflow
set -uo pipefail
tagflow=$1
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"


# expect_failure NAME EXIT_CODE MESSAGE_SUBSTRING CONFIG_FILE
expect_failure() {
  local name=$1 code=$2 message=$3 config=$4
  rm -f out.h5 out.h5.tmp.*
  "$tagflow" run -q "$config" --output out.h5 >stdout.txt 2>stderr.txt
  local status=$?
  if [ "$status" -ne "$code" ]; then
    fail "$name: exit code $status, expected $code ($(cat stderr.txt))"
  elif ! grep -qF -- "$message" stderr.txt; then
    fail "$name: message '$(cat stderr.txt)' lacks '$message'"
  elif ls out.h5* >/dev/null 2>&1; then
    fail "$name: an output file was left behind"
  else
    pass "$name"
  fi
}

run_section='[run]
duration_ps = 2_000_000_000'
source_section='[source]
kind = "synthetic"
block_size = 1000
[[source.channel]]
channel = 1
kind = "poisson"
rate = 1e9
[[source.channel]]
channel = 2
kind = "clock"
frequency = 1e8
[[source.overflow]]
begin_ps = 500_000_000
end_ps = 700_000_000'

# config FILE MEASUREMENT_BODY [RUN_SECTION]: the synthetic source with one measurement.
config() {
  printf '%s\n%s\n[[measurement]]\n%s\n' "${3:-$run_section}" "$source_section" "$2" >"$1"
}

# --- a good run, checked against independent facts of the stream ----------------------------
config good.toml 'kind = "Counter"
name = "counter"
channels = [1, 2]
binwidth = 100_000_000
n_values = 20
[[measurement]]
kind = "Countrate"
name = "rate"
channels = [1, 2]'
cat >check_good.py <<'PYTHON'
import json, h5py, numpy as np
with h5py.File("good.h5") as f:
    c, r, p = f["counter"], f["rate"], f["profile"]
    assert c.attrs["kind"] == "Counter" and list(c.attrs["channels"]) == [1, 2]
    assert c["data"].attrs["unit"] == "counts" and c["data_normalized"].attrs["unit"] == "Hz"
    data = c["data"][...]
    assert data.shape == (2, 20), data.shape
    # 2 ms in 100 us bins: all 20 bins complete; the 100 MHz clock puts 10000 edges in each
    # bin outside the overflow interval, and none inside it.
    mask = c["overflow_mask"][...]
    assert (data[1][mask == 0] == 10000).all() and (data[1][mask == 1] == 0).all(), data[1]
    # Overflow [500, 700) us touches bins 5 and 6 only.
    assert list(np.nonzero(mask)[0]) == [5, 6], mask
    assert np.isnan(c["data_normalized"][...][:, mask == 1]).all()
    # Totals (missed events included) equal the countrate's counts and match the rates.
    totals = c["data_total_counts"][...]
    assert (totals == r["counts_total"][...]).all(), (totals, r["counts_total"][...])
    assert totals[1] == 200000, totals
    assert abs(totals[0] - 2e6) < 5 * 2e6 ** 0.5, totals
    assert r.attrs["capture_duration_ps"] == 2_000_000_000
    assert abs(r["data"][0] - 1e9) < 5 * 1e9 / 2e6 ** 0.5
    assert list(p["node"].asstr()[...]) == ["source", "counter", "rate"]
    assert (p["tags"][...] == p.attrs["tags"]).all()
trace = json.load(open("trace.json"))
spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
assert len(spans) >= 3 and {e["tid"] for e in spans} == {0, 1, 2}
PYTHON
if "$tagflow" run -q good.toml --output good.h5 --trace trace.json; then
  if "$python" check_good.py; then pass "good run: HDF5 content and trace"; else fail "good run: HDF5 content and trace"; fi
else
  fail "good run: tagflow exited non-zero"
fi

# --- record a stream to a raw file and replay it: identical counts ----------------------------
config record.toml 'kind = "Countrate"
name = "rate"
channels = [1, 2]'
printf '[source]\nkind = "raw"\npath = "stream.raw"\nblock_size = 777\n[[measurement]]\nkind = "Countrate"\nname = "rate"\nchannels = [1, 2]\n' >replay.toml
if "$tagflow" record record.toml stream.raw >/dev/null &&
  "$tagflow" run -q replay.toml --output replay.h5 && "$tagflow" run -q record.toml --output live.h5 &&
  "$python" -c '
import h5py
a, b = h5py.File("live.h5")["rate/counts_total"][...], h5py.File("replay.h5")["rate/counts_total"][...]
assert (a == b).all() and a.sum() > 0, (a, b)'; then
  pass "record and replay give identical counts"
else
  fail "record and replay give identical counts"
fi

# --- bad input ----------------------------------------------------------------------------------
config unknown_kind.toml 'kind = "Nonsense"
channels = [1]'
expect_failure "unknown measurement kind" 2 "unknown measurement kind 'Nonsense'" unknown_kind.toml

sed 's/kind = "synthetic"/kind = "teleport"/' good.toml >unknown_source.toml
expect_failure "unknown source kind" 2 "unknown source kind 'teleport'" unknown_source.toml

config missing_key.toml 'kind = "Counter"
binwidth = 1000'
expect_failure "missing key" 2 "key 'channels' is missing" missing_key.toml

config mistyped_key.toml 'kind = "Counter"
channels = [1]
binwidth = "wide"'
expect_failure "mistyped key" 2 "key 'binwidth' must be an integer" mistyped_key.toml

config misspelt_key.toml 'kind = "Counter"
channels = [1]
binwidht = 5'
expect_failure "misspelt key" 2 "unknown key 'binwidht'" misspelt_key.toml

config zero_binwidth.toml 'kind = "Counter"
channels = [1]
binwidth = 0'
expect_failure "binwidth <= 0" 2 "binwidth 0 ps is invalid (valid: >= 1)" zero_binwidth.toml

config bad_n_values.toml 'kind = "Counter"
channels = [1]
n_values = -3'
expect_failure "n_values <= 0" 2 "n_values -3 is invalid" bad_n_values.toml

config duplicate.toml 'kind = "Countrate"
channels = [1, 2, 1]'
expect_failure "duplicate channels" 2 "duplicate channel 1" duplicate.toml

config bad_threads.toml 'kind = "Countrate"
channels = [1]' '[run]
threads = -1'
expect_failure "run key out of range" 2 "threads -1 is invalid" bad_threads.toml

config bad_source_key.toml 'kind = "Countrate"
channels = [1]'
sed -i 's/^block_size = 1000/block_size = 0/' bad_source_key.toml
expect_failure "source key out of range" 2 "block_size 0 is invalid (valid: 1..67108864)" bad_source_key.toml

raw_config() {
  printf '[source]\nkind = "raw"\npath = "%s"\n[[measurement]]\nkind = "Countrate"\nchannels = [1]\n' "$1" >"$2"
}
raw_config missing.raw missing_raw.toml
expect_failure "missing raw file" 1 "cannot open raw tag file 'missing.raw'" missing_raw.toml

"$python" -c '
import struct
tags = [(0, 1, 100), (0, 1, 200), (0, 2, 150)]          # the third tag is earlier than the second
open("unsorted.raw", "wb").write(b"".join(struct.pack("<BBHiq", t, 0, 0, c, x) for t, c, x in tags))
open("truncated.raw", "wb").write(struct.pack("<BBHiq", 0, 0, 0, 1, 5) + b"\0" * 7)'
raw_config unsorted.raw unsorted.toml
expect_failure "unsorted raw file" 1 "tag 2 (byte offset 32) at 150 ps is earlier" unsorted.toml
raw_config truncated.raw truncated.toml
rm -f out.h5
"$tagflow" run -q truncated.toml --output out.h5 >stdout.txt 2>stderr.txt
status=$?
if [ "$status" -eq 3 ] && grep -qF "damaged tail: raw tag file 'truncated.raw': the record at byte offset 16 is truncated" stderr.txt &&
  "$python" -c '
import h5py
f = h5py.File("out.h5")
assert "byte offset 16" in f.attrs["damaged_tail"]
assert list(f["Countrate0/counts_total"][()]) == [1]'; then
  pass "a raw file cut inside a record: its complete tags measured, exit 3, the tail named"
else
  fail "raw file cut inside a record: exit $status, '$(cat stderr.txt)'"
fi

"$tagflow" run -q good.toml --output /nonexistent-dir/out.h5 >stdout.txt 2>stderr.txt
status=$?
if [ "$status" -eq 1 ] && grep -qF "cannot write output file '/nonexistent-dir/out.h5'" stderr.txt; then
  pass "unwritable output path"
else
  fail "unwritable output path: exit $status, '$(cat stderr.txt)'"
fi

printf 'this is = not [toml\n' >broken.toml
expect_failure "TOML syntax error" 2 "line 1" broken.toml

# An option's value of the wrong type names the option, the value and what it takes.
expect_command_failure "a list option given text" 2 \
  "--drop 'a,b' is invalid (valid: non-negative integers, separated by spaces or commas)" \
  "$tagflow" stream send good.toml --to 127.0.0.1:4799 --drop a,b
expect_command_failure "an integer option given text" 2 \
  "--cpu 'two' is invalid (valid: an integer)" \
  "$tagflow" stream send good.toml --to 127.0.0.1:4799 --cpu two

# --- outputs that would destroy inputs or each other, or cannot be files: refused before the
# run, nothing written ------------------------------------------------------------------------
# refuses NAME MESSAGE COMMAND...: exit 2 (EXIT_CODE, if set, instead), the message, and no
# results or recording left.
refuses() {
  local name=$1 message=$2
  shift 2
  rm -f out.h5 w.tags
  expect_command_failure "$name" "${EXIT_CODE:-2}" "$message" "$@"
  for left in out.h5 w.tags; do
    if [ -e "$left" ]; then fail "$name: an output file was left behind: $left"; fi
  done
}
cp good.toml keep.toml
refuses "results onto the configuration" "[run] output 'keep.toml' is the same file as the configuration" \
  "$tagflow" run -q keep.toml --output keep.toml
cmp -s good.toml keep.toml || fail "the configuration was changed by a refused run"
"$tagflow" record good.toml kept.raw >/dev/null
cp kept.raw kept_before.raw
raw_config kept.raw kept.toml
refuses "results onto the source's file" "is the same file as [source] path 'kept.raw'" \
  "$tagflow" run -q kept.toml --output ./kept.raw
refuses "a recording onto its source" "the recording 'kept.raw' is the same file as [source] path" \
  "$tagflow" record kept.toml kept.raw
refuses "a conversion onto its input" "the output 'kept.raw' is the same file as the input" \
  "$tagflow" convert kept.raw kept.raw
ln -f kept.raw kept_link.raw
refuses "a conversion onto a hard link of its input" \
  "the output 'kept_link.raw' is the same file as the input 'kept.raw'" \
  "$tagflow" convert kept.raw kept_link.raw
rm -f kept_link.raw
cmp -s kept.raw kept_before.raw && pass "the source file is untouched" || fail "the source file changed"
config writer_on_output.toml 'kind = "FileWriter"
name = "w"
path = "out.h5"
channels = [1]'
refuses "a FileWriter onto the results" "[run] output 'out.h5' and FileWriter 'w' path 'out.h5' are the same file" \
  "$tagflow" run -q writer_on_output.toml --output out.h5
config two_writers.toml 'kind = "FileWriter"
name = "w"
path = "w.tags"
channels = [1]
[[measurement]]
kind = "FileWriter"
name = "w2"
path = "./w.tags"
channels = [2]'
refuses "two FileWriters on one file" "FileWriter 'w' path 'w.tags' and FileWriter 'w2' path './w.tags'" \
  "$tagflow" run -q two_writers.toml --output out.h5
config parallel_writer.toml 'kind = "FileWriter"
name = "w"
path = "w.tags"
channels = [1]
parallel = 2'
refuses "a FileWriter in shards, before its file is made" "FileWriter cannot be split by time" \
  "$tagflow" run -q parallel_writer.toml --output out.h5
mkdir -p a_folder
# No place for a file: the run fails (exit 1) before it starts.
EXIT_CODE=1 refuses "results onto a folder" "cannot write the results to 'a_folder': it is a folder" \
  "$tagflow" run -q good.toml --output a_folder
EXIT_CODE=1 refuses "a trace onto a folder" "cannot write the trace to 'a_folder': it is a folder" \
  "$tagflow" run -q good.toml --output out.h5 --trace a_folder
mkfifo a_pipe
EXIT_CODE=1 refuses "results onto a pipe" "cannot write the results to 'a_pipe': it is a pipe" \
  "$tagflow" run -q good.toml --output a_pipe
refuses "an empty output path" "the path is empty" "$tagflow" run -q good.toml --output ""
config bad_name.toml 'kind = "FileWriter"
name = "w"
path = "w.tags"
channels = [1]
[[measurement]]
kind = "Countrate"
name = "a/b"
channels = [1]'
refuses "a name no group can have, before the run" "measurement name 'a/b' cannot name a group" \
  "$tagflow" run -q bad_name.toml --output out.h5
# A FileWriter creates its file when it is made. Errors in the measurements listed after it (a
# bad key or value: found before it is made; a channel nothing produces, another FileWriter's
# own checks: found after, and the earlier files put back) leave an earlier recording at its
# path as it was, and nothing else behind.
"$tagflow" record good.toml kept_rec.tags >/dev/null
cp kept_rec.tags kept_rec_before.tags
# refused_after_writer NAME MESSAGE MEASUREMENT_BODY: a run of a FileWriter onto kept_rec.tags
# followed by that measurement is refused with MESSAGE and leaves the files as they were.
refused_after_writer() {
  config after_writer.toml 'kind = "FileWriter"
name = "w"
path = "kept_rec.tags"
channels = [1]
[[measurement]]
'"$3"
  refuses "$1" "$2" "$tagflow" run -q after_writer.toml --output out.h5
  cmp -s kept_rec.tags kept_rec_before.tags && [ ! -e second.tags ] &&
    [ -z "$(ls ./*.tagflow-previous-* 2>/dev/null)" ] &&
    pass "$1: the earlier recording is as it was, nothing else is left" ||
    fail "$1: the files at the FileWriters' paths changed"
}
refused_after_writer "an unknown key after a FileWriter" \
  "(Countrate): unknown key 'bin_width' for Countrate 'rates' (valid keys: channels)" \
  'kind = "Countrate"
name = "rates"
channels = [1]
bin_width = 5'
refused_after_writer "a value out of range after a FileWriter" \
  "measurement 'rates' (Counter): Counter 'rates': binwidth 0 ps is invalid (valid: >= 1)" \
  'kind = "Counter"
name = "rates"
channels = [1]
binwidth = 0'
refused_after_writer "a channel nothing produces after a FileWriter" \
  "Countrate 'rates' reads channel 1500, which nothing produces" \
  'kind = "Countrate"
name = "rates"
channels = [1500]'
refused_after_writer "a second FileWriter that refuses its sync_every" "sync_every 100" \
  'kind = "FileWriter"
name = "w2"
path = "second.tags"
channels = [2]
sync_every = 100'
# A command killed before its stream began leaves the earlier recording moved aside. The next
# command on the path puts it back first; where the killed one had written there, it names it.
sh -c 'exit 0' &
ended_pid=$!
wait "$ended_pid"
mv kept_rec.tags "kept_rec.tags.tagflow-previous-$ended_pid"
# A run refused after the FileWriter was made, so that only the put-back changes the files.
refused_rates='kind = "Countrate"
name = "rates"
channels = [1500]'
refused_after_writer "an earlier recording a killed command left aside is put back" \
  "note: put back './kept_rec.tags'" "$refused_rates"
cp kept_rec.tags "kept_rec.tags.tagflow-previous-$ended_pid"
"$tagflow" record good.toml kept_rec.tags >/dev/null 2>stderr.txt
grep -qF "warning: './kept_rec.tags.tagflow-previous-$ended_pid' holds an earlier './kept_rec.tags'" \
  stderr.txt && cmp -s "kept_rec.tags.tagflow-previous-$ended_pid" kept_rec_before.tags &&
  pass "an aside left by a killed command, beside a file of the same name, is named and kept" ||
  fail "an aside beside a file of the same name: $(cat stderr.txt)"
mv "kept_rec.tags.tagflow-previous-$ended_pid" kept_rec.tags
# Two asides of one file (two killed attempts): neither replaces the other.
cp kept_rec.tags "kept_rec.tags.tagflow-previous-$ended_pid"
mv kept_rec.tags kept_rec.tags.tagflow-previous-999999999
"$tagflow" record good.toml kept_rec.tags >/dev/null 2>stderr.txt
[ "$(grep -c "warning: .* holds an earlier './kept_rec.tags'" stderr.txt)" = 2 ] &&
  cmp -s "kept_rec.tags.tagflow-previous-$ended_pid" kept_rec_before.tags &&
  cmp -s kept_rec.tags.tagflow-previous-999999999 kept_rec_before.tags &&
  pass "two asides of one file are both named and kept" ||
  fail "two asides of one file: $(cat stderr.txt)"
rm -f kept_rec.tags.tagflow-previous-999999999 "kept_rec.tags.tagflow-previous-$ended_pid"
# An aside names its host, process and the process's start (clock ticks after boot): a process
# that reuses the number is not the one that made it, and a command on another host is never
# taken for ended.
host=$(uname -n | cut -c1-32 | tr -c 'A-Za-z0-9.\n-' '_')
shell_start=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
rm kept_rec.tags
cp kept_rec_before.tags "kept_rec.tags.tagflow-previous-$host-$$-$((shell_start + 1))"
refused_after_writer "an aside whose process number runs again, started later, is put back" \
  "note: put back './kept_rec.tags'" "$refused_rates"
cp kept_rec.tags "kept_rec.tags.tagflow-previous-$host-$$-$shell_start"
mv kept_rec.tags kept_rec.tags.tagflow-previous-other-host.lab-1-2
"$tagflow" record good.toml kept_rec.tags >/dev/null 2>stderr.txt
[ "$(grep -c "holds an earlier" stderr.txt)" = 1 ] &&
  grep -qF "warning: './kept_rec.tags.tagflow-previous-other-host.lab-1-2' holds an earlier './kept_rec.tags' that a tagflow command on host 'other-host.lab' moved aside" \
    stderr.txt &&
  cmp -s "kept_rec.tags.tagflow-previous-$host-$$-$shell_start" kept_rec_before.tags &&
  cmp -s kept_rec.tags.tagflow-previous-other-host.lab-1-2 kept_rec_before.tags &&
  pass "an aside of a running process is left alone, one of another host named and kept" ||
  fail "asides of a running process and of another host: $(cat stderr.txt)"
mv kept_rec.tags.tagflow-previous-other-host.lab-1-2 kept_rec.tags
rm -f "kept_rec.tags.tagflow-previous-$host-$$-$shell_start"
config duplicate.toml 'kind = "Countrate"
name = "rates"
channels = [1]
[[measurement]]
kind = "Counter"
name = "rates"
channels = [1]
binwidth = 1000
n_values = 10'
refuses "a duplicate name, counted as the other errors count" \
  "[[measurement]] #2 (line 21): duplicate name 'rates'" "$tagflow" run -q duplicate.toml --output out.h5
config checkpoint.toml 'kind = "Countrate"
channels = [1]' '[run]
checkpoint_s = 1e9'
refuses "a checkpoint interval beyond its bound" \
  "[run] checkpoint_s 1e+09 is invalid (valid: 0 for none, or up to 31536000 seconds, a year)" \
  "$tagflow" run -q checkpoint.toml --output out.h5
# A [run] written as an array of tables would be passed over, its keys with it.
config run_array.toml 'kind = "Countrate"
channels = [1]' '[[run]]
duration_ps = 1000'
refuses "a [[run]] array" "'run' is not a [run] table (line 1)" \
  "$tagflow" run -q run_array.toml --output out.h5

# A checkpoint that cannot be written (its folder moved away while the run goes: at once, where
# a removal could race a checkpoint's file) ends the run with exit 1 and the write's error, not
# an abort.
printf '[run]\nduration_ps = 8_000_000_000_000\ncheckpoint_s = 0.2\n[source]\nkind = "synthetic"\nspeed = 1.0\n[[measurement]]\nkind = "Countrate"\nchannels = [1]\n' >ck.toml
mkdir -p ck_folder
"$tagflow" run -q ck.toml --output ck_folder/out.h5 >stdout.txt 2>stderr.txt &
running=$!
sleep 1
mv ck_folder ck_moved
wait "$running"
status=$?
rm -rf ck_moved
if [ "$status" -eq 1 ] && grep -qF "ck_folder/out.h5" stderr.txt; then
  pass "a checkpoint that cannot be written ends the run with exit 1"
else
  fail "a failed checkpoint: exit $status, '$(cat stderr.txt)'"
fi
# A corrupt input fails the command (exit 1) and leaves no part of its output.
"$tagflow" record good.toml corrupt.tags >/dev/null
"$python" -c '
b = bytearray(open("corrupt.tags", "rb").read())
b[len(b) // 2] ^= 0xFF
open("corrupt.tags", "wb").write(b)'
raw_config corrupt.tags corrupt_source.toml
sed -i 's/kind = "raw"/kind = "tagfile"/' corrupt_source.toml
for command in "convert corrupt.tags half.raw" "convert corrupt.tags half.tags --max-file-size 65536" \
  "record corrupt_source.toml half.raw"; do
  rm -f half.raw half.tags half.*.tags
  # shellcheck disable=SC2086
  "$tagflow" $command >stdout.txt 2>stderr.txt
  status=$?
  if [ "$status" -eq 1 ] && grep -qF "payload checksum mismatch" stderr.txt &&
    [ -z "$(ls half.raw half.tags half.*.tags 2>/dev/null)" ]; then
    pass "tagflow $command: a corrupt input leaves no output"
  else
    fail "tagflow $command: exit $status, '$(cat stderr.txt)', left: $(ls half* 2>/dev/null)"
  fi
done

# A failed command leaves what was at its output path before: a file, the parts of an earlier
# set, a device. A command that succeeds replaces the earlier set, parts included.
for command in "convert corrupt.tags earlier.raw" "convert corrupt.tags earlier.ptu" \
  "convert corrupt.tags earlier.tags --max-file-size 65536" "record corrupt_source.toml earlier.tags"; do
  output=${command##* }
  [ "$output" = "65536" ] && output=earlier.tags
  rm -f earlier.*
  echo "earlier file" >"$output"
  echo "earlier part" >earlier.1.tags
  # shellcheck disable=SC2086
  "$tagflow" $command >stdout.txt 2>stderr.txt
  status=$?
  if [ "$status" -eq 1 ] && [ "$(cat "$output")" = "earlier file" ] &&
    [ "$(cat earlier.1.tags)" = "earlier part" ] && [ "$(ls earlier* | wc -l)" -eq 2 ]; then
    pass "tagflow $command: a failure leaves the earlier files as they were"
  else
    fail "tagflow $command: exit $status, left: $(ls earlier* 2>/dev/null)"
  fi
done
"$tagflow" convert kept.raw earlier.tags >/dev/null
if [ ! -e earlier.1.tags ] && "$tagflow" info earlier.tags >/dev/null; then
  pass "a conversion replaces an earlier set, its later parts included"
else
  fail "an earlier set's part was left beside a new one"
fi
# A tag file cut short has no time index: info reads it through and says where it stops, with
# the tags convert gets from it.
"$tagflow" convert kept.raw whole.tags >/dev/null
head -c $(($(stat -c %s whole.tags) * 2 / 3)) whole.tags >cut.tags
"$tagflow" convert cut.tags cut.raw >/dev/null 2>&1
if "$tagflow" info cut.tags >info.txt 2>&1 &&
  grep -q "cut short: .*truncated at byte offset" info.txt &&
  grep -q "read through, $(($(stat -c %s cut.raw) / 16)) tags" info.txt; then
  pass "info reads a tag file without its index through and names its cut"
else
  fail "info of a cut tag file: $(cat info.txt)"
fi
# A file that only looks like a later part is another file where the output is not a tag file.
echo "another file" >earlier.1.raw
"$tagflow" convert kept.raw earlier.raw >/dev/null
"$tagflow" convert corrupt.tags earlier.raw >/dev/null 2>&1
[ "$(cat earlier.1.raw)" = "another file" ] && cmp -s earlier.raw kept.raw &&
  pass "a raw output's conversions leave a file named like a part alone" ||
  fail "a raw output's conversion changed earlier.1.raw or lost earlier.raw"
mknod device c 1 3 2>/dev/null || mkfifo device
"$tagflow" convert corrupt.tags device --to raw >/dev/null 2>&1
[ -e device ] && [ ! -f device ] && pass "a failed conversion to a device keeps the device" ||
  fail "a failed conversion removed or replaced the device it wrote to"
rm -f device
refuses "the standard output as a recording" "the recording '-': standard output is not written to" \
  "$tagflow" record good.toml -
refuses "the standard output as results" "'-': standard output is not written to" \
  "$tagflow" run -q good.toml --output -
[ -e ./- ] && fail "a file named '-' was made"

refuses "a tag file option for a raw output" "--compression applies to tags outputs only" \
  "$tagflow" convert kept.raw other.raw --compression zstd
refuses "a Photon-HDF5 option for a PTU output" "--description applies to h5 outputs only" \
  "$tagflow" convert kept.raw other.ptu --description "a test"
[ -z "$(ls other.raw other.ptu 2>/dev/null)" ] || fail "a refused conversion left its output"

EXIT_CODE=1 refuses "a folder for a configuration" "cannot read config file 'a_folder': it is a folder" \
  "$tagflow" run -q a_folder
EXIT_CODE=1 refuses "a folder to convert" "'a_folder' is a folder, not a file" \
  "$tagflow" convert a_folder other.raw
head -c 1000 kept.raw >noise.ptu
EXIT_CODE=1 refuses "a .ptu that holds no PTU" "'noise.ptu' is named as a ptu file, but its content is not one" \
  "$tagflow" convert noise.ptu other.raw

config no_kind.toml 'name = "nameless"
channels = [1]'
expect_failure "a measurement without a kind" 2 "[[measurement]] #1 (line" no_kind.toml
sed '/^kind = "synthetic"/d' good.toml >no_source_kind.toml
expect_failure "a source without a kind" 2 "[source] has no key 'kind' (valid: synthetic, raw," \
  no_source_kind.toml
refuses "an unknown command" "unknown command 'bogus' (valid: run, serve, record, convert," \
  "$tagflow" bogus
"$tagflow" run --help >help.txt
long_lines=$(awk 'length($0) > 100' help.txt | wc -l)
if grep -q "HistogramLogBins" help.txt && [ "$long_lines" -eq 0 ]; then
  pass "run --help lists the kinds in lines of at most 100 columns"
else
  fail "run --help: $(awk 'length($0) > 100' help.txt | head -3)"
fi

config run_forever.toml 'kind = "Countrate"
channels = [1]' '[run]
duration_ps = -1'
refuses "[run] duration_ps -1" "duration_ps -1 is invalid (valid: 1..2^62" \
  "$tagflow" run -q run_forever.toml --output out.h5

finish
