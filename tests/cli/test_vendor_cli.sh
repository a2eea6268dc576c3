#!/usr/bin/env bash
# Vendor files from the command line: `tagflow info` as a table and as JSON, `tagflow convert`
# from PTU to a tag file and raw (exactly the same tags either way), a run on `kind = "file"`
# whose results file carries the header values the tags depend on, and refused inputs (a file
# of no known format, a truncated record, a file cut between records, a header entry of an
# unknown type).
# Usage: test_vendor_cli.sh PATH/TO/tagflow VENDOR_DATA_FOLDER
set -uo pipefail
tagflow=$1
data=$2
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"

ptu="$data/picoquant/v20_t3.ptu"

if "$tagflow" info "$ptu" >info.txt 2>&1 && grep -q "PTU HydraHarp V2 T3" info.txt &&
  grep -q "MeasDesc_GlobalResolution *float *2.000016000128001e-07" info.txt; then
  pass "info table"
else
  fail "info table: $(head -5 info.txt)"
fi

if "$tagflow" info "$ptu" --json >info.json 2>&1 && "$python" - <<'PY'; then
import json
info = json.load(open("info.json"))
assert info["format"] == "PTU HydraHarp V2 T3", info["format"]
assert info["records"] == 106349, info["records"]
names = {field["name"]: field for field in info["header"]}
assert names["TTResult_NumberOfRecords"]["value"] == "106349"
assert names["TTResult_SyncRate"]["type"] == "int"
assert info["provenance"]["TTResultFormat_TTTRRecType"] == "0x01010304"
PY
  pass "info json"
else
  fail "info json"
fi

if "$tagflow" convert -q "$ptu" direct.raw && "$tagflow" convert -q "$ptu" via.tags &&
  "$tagflow" convert -q via.tags via.raw && cmp -s direct.raw via.raw; then
  pass "convert PTU -> tags -> raw equals PTU -> raw"
else
  fail "convert round trip"
fi

cat >run.toml <<TOML
[run]
output = "run.h5"
[source]
kind = "file"
path = "$ptu"
[[measurement]]
kind = "Countrate"
name = "rates"
channels = [1, 2, 100]
TOML
if "$tagflow" run -q run.toml && "$python" - <<'PY'; then
import h5py, numpy as np
f = h5py.File("run.h5")
source = f["source"].attrs
assert source["format"] == "PTU HydraHarp V2 T3"
assert source["TTResultFormat_TTTRRecType"] == "0x01010304"
assert abs(source["MeasDesc_GlobalResolution"] - 2.000016000128001e-07) < 1e-20
raw = np.fromfile("direct.raw", dtype=[("type", "u1"), ("reserved", "u1"), ("missed", "<u2"),
                                         ("channel", "<i4"), ("time", "<i8")])
counts = f["rates/counts_total"][()]
expected = [int(np.sum(raw["channel"] == c)) for c in (1, 2, 100)]
assert list(counts) == expected, (counts, expected)
PY
  pass "run on kind = file"
else
  fail "run on kind = file"
fi

# Every real file is recognised from its content (the .spc by its extension).
for pair in "picoquant/v30_t2.ptu:PTU PicoHarp 300 T2" "picoquant/beads.ptu:PTU HydraHarp V2 T3" \
  "legacy/PQ_HT3_SF-compression.ht3:HydraHarp T3 (.ht3, format 1.0)" \
  "bh/test_noise.spc:B&H FIFO" "bh/bh_spc132_m000.spc:B&H FIFO"; do
  file=${pair%%:*}
  format=${pair#*:}
  if "$tagflow" info "$data/$file" >info.txt 2>&1 && grep -qF "format  $format" info.txt; then
    pass "info recognises $file"
  else
    fail "info $file: $(head -3 info.txt)"
  fi
done

cat >spc.toml <<TOML
[run]
output = "spc.h5"
[source]
kind = "spc"
path = "$data/bh/test_noise.spc"
[[measurement]]
kind = "Countrate"
name = "rates"
channels = [1, 2, 3, 4]
TOML
if "$tagflow" run -q spc.toml && "$python" - <<'PY'; then
import h5py
f = h5py.File("spc.h5")
assert f["source"].attrs["format"].startswith("B&H FIFO")
assert int(f["rates/counts_total"][()].sum()) == 6114, f["rates/counts_total"][()]
PY
  pass "run on kind = spc"
else
  fail "run on kind = spc"
fi

"$tagflow" info "$data/bh/test_noise.spc" --format pt3 >out.txt 2>err.txt
if [ $? -ne 0 ] && grep -q "pt3" err.txt; then
  pass "a named format that does not fit is refused"
else
  fail "wrong named format: $(cat err.txt)"
fi

# SPC files carry no signature, so a file that carries another's is not decoded as SPC.
"$tagflow" info "$data/picoquant/v30_t2.ptu" --format spc >out.txt 2>err.txt
if [ $? -eq 2 ] && grep -q "carries the signature of a ptu file, not spc" err.txt; then
  pass "a PTU file named as spc is refused"
else
  fail "a PTU file named as spc: $(cat err.txt)"
fi

head -c 4000 /dev/urandom >noise.bin
"$tagflow" info noise.bin >out.txt 2>err.txt
if [ $? -eq 2 ] && grep -q "is not recognised" err.txt; then
  pass "unknown format refused"
else
  fail "unknown format: $(cat err.txt)"
fi

: >empty.tags
expect_command_failure "an empty .tags file" 2 "valid: a tagflow tag file, which begins with" \
  "$tagflow" info empty.tags

cp "$ptu" cut.ptu
truncate -s -2 cut.ptu
"$tagflow" convert cut.ptu cut.raw >out.txt 2>err.txt
if [ $? -eq 3 ] && grep -q "damaged tail: .*truncated" err.txt && grep -q "byte offset 431192" err.txt &&
  [ -s cut.raw ]; then
  pass "truncated record named with its byte offset, the records before it converted"
else
  fail "truncated record: $(cat err.txt)"
fi

# Cut between two records: the header counts more records than the file holds.
head -c 200000 "$ptu" >short.ptu
"$tagflow" convert short.ptu short.raw >out.txt 2>err.txt
if [ $? -eq 3 ] && grep -q "damaged tail: .*truncated at byte offset 200000" err.txt &&
  grep -q "holds 48550 records, the header counts 106349" err.txt && [ -s short.raw ]; then
  pass "file cut between records: the records it holds converted, then the damaged tail"
else
  fail "file cut between records: $(cat err.txt)"
fi

finish
