#!/usr/bin/env bash
# A recording killed with SIGKILL at any moment reads back: `tagflow record` to a tag file and
# to a raw file, and a FileWriter (in parts of 1 MiB) in `tagflow run`, are killed at 20
# random moments in all. Each file, and a copy of it cut at a random byte as a kill in the
# middle of a write would leave it, is read back with `tagflow convert` (the FileWriter's also
# with `tagflow run` and a Countrate): a file without a damaged tail reads without a word and
# exit 0; one with a damaged tail gives exit 3 and a message naming the file and the byte offset
# where the tail begins; either way every tag of every complete record comes back, in order,
# and those are the first tags of the stream recorded in full (check_killed_recording.py works
# out what is on disk from the file's bytes). The synthetic stream is replayed from its full
# recording in real time, because the generator runs at tens of MTags/s and twenty kills of it
# would write gigabytes.
# Usage: test_killed_recording.sh PATH/TO/tagflow [SEED]  (the seed of the kill moments and cuts)
set -uo pipefail
tagflow=$1
seed=${2:-$((10#$(date +%N) % 100000))}
checker="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/check_killed_recording.py"
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
echo "seed $seed"
RANDOM=$seed

# Three seconds of two channels and an overflow interval (OverflowBegin, MissedEvents and
# OverflowEnd tags), about 3 M tags.
cat >synthetic.toml <<'TOML'
[source]
kind = "synthetic"
seed = 7
duration_ps = 3_000_000_000_000
[[source.channel]]
channel = 1
kind = "poisson"
rate = 6e5
[[source.channel]]
channel = 2
kind = "clock"
frequency = 4e5
jitter_ps = 50
[[source.overflow]]
begin_ps = 400_000_000_000
end_ps = 400_050_000_000
TOML
"$tagflow" record synthetic.toml reference.raw >/dev/null &&
  "$tagflow" record synthetic.toml reference.tags >/dev/null &&
  "$tagflow" convert -q reference.tags reference_back.raw
if cmp -s reference.raw reference_back.raw; then
  pass "record to a tag file and to a raw file: the same stream"
else
  fail "the stream recorded to a tag file differs from the raw recording"
fi
rm -f reference_back.raw

cat >replay.toml <<'TOML'
[source]
kind = "tagfile"
path = "reference.tags"
speed = 1.0
TOML
cat replay.toml - >writer.toml <<'TOML'
[[measurement]]
kind = "FileWriter"
name = "writer"
path = "killed.tags"
channels = [1, 2]
max_file_size = 1_048_576
TOML
countrate() {
  printf '[source]\nkind = "tagfile"\npath = "%s"\n[[measurement]]\nkind = "Countrate"\nname = "rates"\nchannels = [1, 2]\n' "$1" >rates.toml
}

# random_between LOW HIGH: sets `random` to an integer in [LOW, HIGH), uniform enough for
# delays and offsets (in this shell, not a subshell, so that the seed decides them all).
random_between() {
  random=$(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1)))
}

# check FILE LABEL [run]: reads FILE back and has the checker judge it.
check() {
  local file=$1 label=$2 status run_args=()
  rm -f read.raw rates.h5
  "$tagflow" convert -q --to raw "$file" read.raw >/dev/null 2>convert_err.txt
  status=$?
  if [ "${3:-}" = run ]; then
    countrate "$file"
    "$tagflow" run -q rates.toml -o rates.h5 >/dev/null 2>run_err.txt
    run_args=($? run_err.txt rates.h5)
  fi
  local verdict
  if verdict=$("$python" "$checker" "$file" "$status" convert_err.txt read.raw reference.raw \
    "${run_args[@]}" 2>&1); then
    pass "$label: $verdict"
  else
    fail "$label: $verdict"
  fi
}

# cut_copy FILE: copies the recording (every part) to cut.EXT and cuts the last part at a
# random byte after its file header.
cut_copy() {
  local file=$1 extension=${1##*.} base=${1%.*} part=1 last=$1 header=0
  rm -f cut.*
  cp "$file" "cut.$extension"
  local last_copy="cut.$extension"
  while [ -e "$base.$part.$extension" ]; do
    last="$base.$part.$extension"
    last_copy="cut.$part.$extension"
    cp "$last" "$last_copy"
    part=$((part + 1))
  done
  [ "$extension" = tags ] && header=$("$python" -c \
    'import struct, sys; print(struct.unpack_from("<I", open(sys.argv[1], "rb").read(16), 12)[0])' "$last")
  local size
  size=$(stat -c %s "$last")
  if [ "$size" -gt "$header" ]; then
    random_between "$header" "$size"
    truncate -s "$random" "$last_copy"
  fi
}

modes=(tags raw writer)
for n in $(seq 20); do
  mode=${modes[$((n % 3))]}
  rm -f killed.* rates.h5 writer.h5
  case $mode in
    tags | raw)
      file=killed.$mode
      "$tagflow" record replay.toml "$file" >/dev/null 2>&1 &
      ;;
    writer)
      file=killed.tags
      "$tagflow" run -q writer.toml -o writer.h5 >/dev/null 2>&1 &
      ;;
  esac
  pid=$!
  for _ in $(seq 500); do [ -e "$file" ] && break; sleep 0.01; done
  random_between 50 1500
  delay_ms=$random
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if ! kill -KILL "$pid" 2>/dev/null; then
    fail "kill $n ($mode): the recording had ended before ${delay_ms} ms"
    wait "$pid" 2>/dev/null
    continue
  fi
  wait "$pid" 2>/dev/null
  run=$([ "$mode" = writer ] && echo run)
  check "$file" "kill $n ($mode, ${delay_ms} ms)" "$run"
  cut_copy "$file"
  check "cut.${file##*.}" "kill $n ($mode), cut at a random byte" "$run"
done

finish
