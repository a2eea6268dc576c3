#!/usr/bin/env bash
# A long run of the stream link (not part of CI): the demo graph (Counter, Countrate) plus a
# Correlation, a HistogramLogBins and a FileWriter, fed over UDP on the loopback interface by
# `tagflow linktest --mode send` (the demo stream, encoded once and replayed) at a fixed rate
# for a number of minutes. Passes when nothing was lost (no lost datagram or event, no socket
# or ring drop), every tag sent was received, resident memory is flat (the median of the last
# minute within 5 % of the first minute's) and the results file and the recording read back.
# Usage: scripts/soak.sh [RATE_TAGS_PER_S (1e8)] [MINUTES (10)] [WORK_DIR (a new temp dir)]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rate=${1:-1e8}
minutes=${2:-10}
work=${3:-$(mktemp -d /tmp/tagflow-soak.XXXXXX)}
tagflow="$root/build/tools/tagflow"
python=/usr/bin/python3
port=4790
seconds=$(("$minutes" * 60))
[ -x "$tagflow" ] || cmake --build "$root/build" --target tagflow
mkdir -p "$work"
cd "$work"
echo "soak: $rate tags/s for $minutes min over 127.0.0.1:$port, in $work"
grep -m1 "model name" /proc/cpuinfo | sed 's/.*: /cpu: /'
echo "cores: $(nproc)"

cat >soak.toml <<TOML
[source]
kind = "udp"
address = "127.0.0.1"
port = $port
idle_timeout_s = 10

[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, 2, 3, 4, 5, 6, 7, 8]
binwidth = 10_000_000_000
n_values = 100

[[measurement]]
kind = "Countrate"
name = "countrate"
channels = [1, 2, 3, 4, 5, 6, 7, 8]

[[measurement]]
kind = "Correlation"
name = "g2"
channel_1 = 2
channel_2 = 1
binwidth = 10
n_bins = 1000

[[measurement]]
kind = "HistogramLogBins"
name = "lifetime"
click_channel = 4
start_channel = 3
exp_start = -12
exp_stop = -6
n_bins = 1000

[[measurement]]
kind = "FileWriter"
name = "writer"
path = "soak.tags"
channels = [4]
TOML

"$tagflow" run soak.toml -o soak.h5 >run.txt 2>&1 &
run_pid=$!
trap 'kill "$run_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "waiting for datagrams" run.txt && break
  sleep 0.1
done
# Resident memory of the receiving run, every 5 s.
(
  start=$(date +%s)
  while kill -0 "$run_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$run_pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && echo "$(($(date +%s) - start)) $rss" >>rss.txt
    sleep 5
  done
) &
"$tagflow" linktest --mode send --address 127.0.0.1 --port "$port" --duration "$seconds" \
  --rate "$rate" --json sender.json >sender.txt 2>&1
status=0
wait "$run_pid" || status=$?
trap - EXIT
[ "$status" -eq 0 ] || { echo "soak: the run failed ($status):"; tail -20 run.txt; exit 1; }
"$tagflow" convert -q soak.tags soak_channel4.raw

"$python" - "$seconds" <<'PY'
import json, os, statistics, sys, h5py
seconds = int(sys.argv[1])
sender = json.load(open("sender.json"))["sender"]
rss = [tuple(map(int, line.split())) for line in open("rss.txt")]
# The first and the last minute (halves of a run shorter than two minutes).
window = min(60, seconds // 2)
first = [kb for t, kb in rss if t < window]
last = [kb for t, kb in rss if t >= max(rss[-1][0] - window, window)]
growth = statistics.median(last) / statistics.median(first) - 1
with h5py.File("soak.h5") as f:
    s = dict(f["source"].attrs)
    counts4 = int(f["countrate/counts_total"][()][3])
    groups = sorted(k for k in f.keys() if k not in ("source", "profile"))
    g2 = f["g2/data"][()]
    lifetime = f["lifetime/data"][()]
recorded = os.path.getsize("soak_channel4.raw") // 16
print(f"sent {sender['tags']} tags in {sender['seconds']:.1f} s ({sender['tags'] / sender['seconds'] / 1e6:.1f} MTags/s)")
print(f"received {s['tags']} tags; lost datagrams {s['datagrams_lost']}, events {s['events_lost']}; "
      f"socket drops {s['socket_drops']}, ring full {s['ring_full']}, malformed {s['malformed']}")
print(f"resident memory: first minute {statistics.median(first) / 1024:.1f} MiB, last minute "
      f"{statistics.median(last) / 1024:.1f} MiB ({growth * 100:+.2f} %), peak {max(kb for _, kb in rss) / 1024:.1f} MiB")
print(f"results: {', '.join(groups)}; g2 {int(g2.sum())} pairs, lifetime {int(lifetime.sum())} counts; "
      f"recording: {recorded} tags of channel 4 (Countrate: {counts4})")
ok = (s["datagrams_lost"] == 0 and s["events_lost"] == 0 and s["socket_drops"] == 0
      and s["tags"] == sender["tags"] and abs(growth) <= 0.05 and recorded == counts4
      and g2.sum() > 0 and lifetime.sum() > 0 and sender["seconds"] >= 0.95 * seconds)
print("soak: PASSED" if ok else "soak: FAILED")
sys.exit(0 if ok else 1)
PY
