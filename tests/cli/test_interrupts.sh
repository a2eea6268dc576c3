#!/usr/bin/env bash
# Runs that end early keep what they measured: SIGINT during `tagflow run` exits 130 with the
# results written and marked interrupted; SIGTERM exits 143 the same way; a second SIGINT
# aborts at once and leaves no file, not even a temporary one; with [run] checkpoint_s a run
# killed with SIGKILL leaves its last checkpoint; `tagflow record` and `tagflow stream send`
# stop the same way, and accept a configuration with a [source] only; `tagflow linktest` stops
# the same way with its summary. `tagflow record` of a UDP stream stops while it waits for the
# sender, keeps what it wrote when the disk fills, and a second SIGINT ends a recording as a
# kill would: what it wrote stays, the earlier files it replaces are gone.
# Usage: test_interrupts.sh PATH/TO/tagflow
set -uo pipefail
tagflow=$1
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# await_handlers PID: waits (up to 30 s) until the process catches SIGINT and SIGTERM, so that
# a signal is not sent while the default or inherited disposition still holds (a background job
# of a script starts with SIGINT ignored, and setting up a large graph takes seconds on a
# loaded machine).
await_handlers() {
  local mask
  for _ in $(seq 1500); do
    mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return
    [ -n "$mask" ] && (((16#$mask & 0x4002) == 0x4002)) && return
    sleep 0.02
  done
}

cat >endless.toml <<'TOML'
[source]
kind = "synthetic"
block_size = 4096
[[measurement]]
kind = "Countrate"
name = "rates"
channels = [1, 2, 3]
[[measurement]]
kind = "Counter"
name = "counter"
channels = [1]
binwidth = 1_000_000_000
n_values = 10
TOML

# interrupt SIGNAL EXPECTED_EXIT NAME: a run stopped by SIGNAL after a second.
interrupt() {
  local signal=$1 expected=$2 name=$3
  "$tagflow" run -q endless.toml -o "$name.h5" 2>err.txt &
  local pid=$!
  await_handlers "$pid"
  sleep 1.5
  kill "-$signal" "$pid"
  wait "$pid"
  local status=$?
  if [ "$status" -eq "$expected" ] && "$python" - "$name.h5" <<'PY'; then
import sys, h5py
f = h5py.File(sys.argv[1])
assert f.attrs["interrupted"] == 1
duration = f["rates"].attrs["capture_duration_ps"]
assert duration > 0, duration
# The rates are the counts over the stream time captured, the counts all there.
counts = f["rates/counts_total"][()]
assert abs(counts[0] / (duration * 1e-12) - f["rates/data"][()][0]) < 1e-6 * counts[0]
PY
    pass "$signal: exit $expected, results written and marked interrupted"
  else
    fail "$signal: exit $status (expected $expected): $(cat err.txt)"
  fi
}
interrupt INT 130 int
interrupt TERM 143 term

# A Counter of 2^25 bins per channel makes writing the results take a while: the second
# SIGINT comes while they are being written.
cat >slow_to_write.toml <<'TOML'
[source]
kind = "synthetic"
block_size = 4096
[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, 2]
binwidth = 1_000_000
n_values = 33_554_432
TOML
"$tagflow" run -q slow_to_write.toml -o twice.h5 2>err.txt &
pid=$!
await_handlers "$pid"
sleep 3
kill -INT "$pid"
# Up to 10 s for the results file to be begun (a loaded machine is slow to get there).
for _ in $(seq 500); do ls twice.h5.tmp.* >/dev/null 2>&1 && break; sleep 0.02; done
kill -INT "$pid"
wait "$pid"
status=$?
if [ "$status" -eq 130 ] && [ ! -e twice.h5 ] && ! ls twice.h5.tmp.* >/dev/null 2>&1; then
  pass "a second SIGINT aborts at once and leaves no file"
else
  fail "second SIGINT: exit $status, files: $(ls twice.h5* 2>/dev/null)"
fi

sed 's/^\[source\]/[run]\ncheckpoint_s = 0.5\n[source]/' endless.toml >checkpoint.toml
"$tagflow" run -q checkpoint.toml -o checkpoint.h5 2>err.txt &
pid=$!
# Killed once a checkpoint is there and half a second more has passed (the next one is being
# written or due): up to 20 s for the first, on a loaded machine.
for _ in $(seq 1000); do [ -e checkpoint.h5 ] && break; sleep 0.02; done
sleep 0.7
kill -KILL "$pid"
wait "$pid" 2>/dev/null
if "$python" - <<'PY'; then
import h5py
f = h5py.File("checkpoint.h5")
assert f.attrs["checkpoint"] == 1 and f.attrs["interrupted"] == 0
assert f["rates"].attrs["capture_duration_ps"] > 0
assert f["counter/data"].shape == (1, 10)
PY
  pass "SIGKILL keeps the last checkpoint"
else
  fail "checkpoint after SIGKILL: $(ls checkpoint.h5* 2>&1)"
fi

# In real time (speed 1), so that the command is still running when the signal comes, however
# fast the generator.
cat >source_only.toml <<'TOML'
[source]
kind = "synthetic"
duration_ps = 100_000_000_000_000
speed = 1.0
[[source.channel]]
channel = 1
kind = "poisson"
rate = 1e6
TOML
"$tagflow" record source_only.toml recorded.raw >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
sleep 1
kill -INT "$pid"
wait "$pid"
status=$?
size=$(stat -c %s recorded.raw 2>/dev/null || echo 0)
if [ "$status" -eq 130 ] && [ "$size" -gt 0 ] && [ $((size % 16)) -eq 0 ] &&
  grep -q "(interrupted)" out.txt && "$tagflow" convert -q recorded.raw recorded.tags; then
  pass "record: a [source]-only configuration, SIGINT ends it with a complete raw file"
else
  fail "record: exit $status, size $size: $(cat err.txt)"
fi

"$tagflow" stream send source_only.toml --to 127.0.0.1:4799 >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
sleep 1
kill -INT "$pid"
wait "$pid"
status=$?
if [ "$status" -eq 130 ] && grep -q "sent .* tags" out.txt && grep -q "(interrupted)" out.txt; then
  pass "stream send: a [source]-only configuration, SIGINT ends it with its summary"
else
  fail "stream send: exit $status: $(cat out.txt err.txt)"
fi

# A UDP recording waiting for its sender stops at SIGINT, with an empty recording.
cat >udp_record.toml <<'TOML'
[source]
kind = "udp"
address = "127.0.0.1"
port = 4796
TOML
"$tagflow" record udp_record.toml waiting.tags >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
kill -INT "$pid"
for _ in $(seq 500); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid"
  fail "record of a UDP stream: SIGINT while waiting for the sender did not end it in 10 s"
else
  wait "$pid"
  status=$?
  [ "$status" -eq 130 ] && grep -q "recorded 0 tags" out.txt &&
    pass "record of a UDP stream: SIGINT ends the wait for the sender" ||
    fail "record of a UDP stream, SIGINT while waiting: exit $status: $(cat out.txt err.txt)"
fi

# A disk that fills (a file size limit) under a live recording: exit 1, and what was written
# before stays, readable, as the message says.
(
  trap '' XFSZ
  ulimit -f 300
  exec "$tagflow" record udp_record.toml live.tags
) >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
"$tagflow" stream send source_only.toml --to 127.0.0.1:4796 >/dev/null 2>&1 &
sender=$!
wait "$pid"
status=$?
kill -INT "$sender"
wait "$sender" 2>/dev/null
if [ "$status" -eq 1 ] && grep -q "remain readable" err.txt &&
  "$tagflow" convert -q live.tags live.raw && [ -s live.raw ]; then
  pass "record of a UDP stream onto a full disk keeps what it wrote, readable"
else
  fail "record onto a full disk: exit $status, $(ls live* 2>&1): $(cat err.txt)"
fi

# SIGINT and SIGTERM back to back (two of one kind could merge while pending) reach the command
# before it can finish (it looks every 20 ms): the abort. The recording stays as a killed one would; the earlier set it replaces is gone, none
# of it left under another name.
echo "earlier file" >old.tags
echo "earlier part" >old.1.tags
"$tagflow" record source_only.toml old.tags >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
sleep 0.5
kill -INT "$pid"
kill -TERM "$pid"
wait "$pid"
status=$?
"$tagflow" convert -q old.tags old.raw 2>/dev/null
converted=$?
if { [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; } && ! grep -q "recorded" out.txt &&
  [ "$(ls old* | sort | tr '\n' ' ')" = "old.raw old.tags " ] &&
  { [ "$converted" -eq 0 ] || [ "$converted" -eq 3 ]; }; then
  pass "record: a second signal keeps the recording and replaces the earlier set"
else
  fail "record, second signal: exit $status, convert $converted, files: $(ls old*)"
fi

# linktest (both sides here) stops the same way and still prints its table and loss line.
# A modest rate: the check is about the interrupt, not about what a loaded machine can carry.
"$tagflow" linktest --duration 60 --rate 5e6 --port 4798 >out.txt 2>err.txt &
pid=$!
await_handlers "$pid"
sleep 2
kill -INT "$pid"
wait "$pid"
status=$?
if [ "$status" -eq 130 ] && grep -q "^sender " out.txt && grep -q "^receiver " out.txt &&
  grep -q "^loss: 0 datagrams" out.txt; then
  pass "linktest: SIGINT ends both sides with the summary, nothing lost"
else
  fail "linktest: exit $status: $(cat out.txt err.txt)"
fi

# Its --json path is checked before the test runs, not after it.
mkdir -p json_folder
SECONDS=0
"$tagflow" linktest --duration 30 --rate 5e6 --port 4799 --json json_folder >out.txt 2>err.txt
status=$?
if [ "$status" -eq 1 ] && [ "$SECONDS" -lt 10 ] &&
  grep -q "cannot write the figures to 'json_folder'" err.txt; then
  pass "linktest: an unusable --json path is refused before the test"
else
  fail "linktest --json onto a folder: exit $status after ${SECONDS} s: $(cat err.txt)"
fi

finish
