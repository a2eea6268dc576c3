#!/usr/bin/env bash
# `tagflow run` with virtual channels: the heralded-g2 example configuration checked with h5py
# against facts of the demo stream, and every wiring error refused with exit code 2, a message
# naming the node and the value, and no output file.
# Usage: test_channels_cli.sh PATH/TO/tagflow PATH/TO/examples/heralded_g2.toml
set -uo pipefail
tagflow=$1
example=$2
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

# --- the example graph ------------------------------------------------------------------------
if "$tagflow" run -q "$example" --output g2.h5 >stdout.txt 2>stderr.txt; then
  if "$python" - <<'PY'; then pass "heralded g2 graph"; else fail "heralded g2 graph"; fi
import h5py, numpy as np, sys
f = h5py.File("g2.h5", "r")
channels = list(f["rates"].attrs["channels"])
counts = dict(zip(channels, f["rates/counts_total"][:]))
herald, heralded = channels[2], channels[3]
ok = True
def check(what, condition):
    global ok
    if not condition:
        print("FAILED check:", what); ok = False
# The herald is a copy of channel 1 shifted by 1 ns: the same rate within the tags of 1 ns.
check("herald rate equals channel 1", abs(counts[herald] - counts[1]) <= 1e-6 * counts[1] + 50)
# Channel 2 echoes half of channel 1 1 ns later (50 ps jitter): about every signal tag is heralded.
check("heralded about channel 2", 0.97 * counts[2] <= counts[heralded] <= 1.05 * counts[2])
g2 = f["g2/data"][:]
index = f["g2/index"][:]
check("g2 peak at tau = 0", abs(index[int(np.argmax(g2))]) <= 10)
nodes = [n.decode() for n in f["profile/node"][:]]
check("virtual channels profiled", "herald" in nodes and "heralded" in nodes)
check("virtual channel numbers above physical", herald >= 1000 and heralded == herald + 1)
sys.exit(0 if ok else 1)
PY
else
  fail "heralded g2 graph: exit $? ($(cat stderr.txt))"
fi

# --- wiring errors --------------------------------------------------------------------------
# expect_refusal NAME MESSAGE CONFIG_BODY: exit code 2, the message, no output file.
expect_refusal() {
  local name=$1 message=$2
  printf '[run]\nduration_ps = 1_000_000_000\n[source]\nkind = "synthetic"\n%s\n' "$3" >bad.toml
  rm -f out.h5*
  "$tagflow" run -q bad.toml --output out.h5 >stdout.txt 2>stderr.txt
  local status=$?
  if [ "$status" -ne 2 ]; then
    fail "$name: exit code $status, expected 2 ($(cat stderr.txt))"
  elif ! grep -qF -- "$message" stderr.txt; then
    fail "$name: message '$(cat stderr.txt)' lacks '$message'"
  elif ls out.h5* >/dev/null 2>&1; then
    fail "$name: an output file was left behind"
  else
    pass "$name"
  fi
}

counting='[[measurement]]
kind = "Countrate"
channels = [1]'

expect_refusal "unknown channel name" "no virtual channel named 'nope'" "$counting
[[measurement]]
kind = \"Countrate\"
name = \"bad\"
channels = [1, \"nope\"]"

for name in "a:1" "42"; do
  expect_refusal "a channel name no reference can reach ($name)" \
    "[[channel]] name '$name' cannot be referred to (valid: not a number, no ':')" "$counting
[[channel]]
kind = \"DelayedChannel\"
name = \"$name\"
input_channel = 1
delay = 10"
done

expect_refusal "cycle of references" "is a cycle" "$counting
[[channel]]
kind = \"DelayedChannel\"
name = \"a\"
input_channel = \"b\"
delay = 10
[[channel]]
kind = \"DelayedChannel\"
name = \"b\"
input_channel = \"a\"
delay = 10"

expect_refusal "gate start equals stop" "gate_start_channel 3 equals gate_stop_channel" "$counting
[[channel]]
kind = \"GatedChannel\"
name = \"gated\"
input_channel = 1
gate_start_channel = 3
gate_stop_channel = 3"

expect_refusal "coincidence window <= 0" "coincidence_window 0 ps is invalid (valid: 1..4611686018427387904)" "$counting
[[channel]]
kind = \"Coincidence\"
name = \"pairs\"
channels = [1, 2]
coincidence_window = 0"

expect_refusal "output index out of range" "asks for output 3 of 'pairs'" "$counting
[[channel]]
kind = \"Coincidences\"
name = \"pairs\"
group_0 = [1, 2]
group_1 = [1, 3]
[[measurement]]
kind = \"Countrate\"
name = \"third\"
channels = [\"pairs:3\"]"

expect_refusal "channel nobody produces" "reads channel 1500, which nothing produces" "$counting
[[measurement]]
kind = \"Countrate\"
name = \"ghost\"
channels = [1500]"

expect_refusal "unknown virtual channel kind" "unknown virtual channel kind 'Teleporter'" "$counting
[[channel]]
kind = \"Teleporter\"
name = \"t\""

finish
