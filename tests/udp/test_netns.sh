#!/usr/bin/env bash
# The stream link across a real (virtual) network: two network namespaces joined by a veth
# pair with MTU 9000, addresses only inside them, the sender in one and the receiver in the
# other. Checks `tagflow linktest` across the pair (no loss, every tag arrives, the MTU in
# use), and `tagflow stream send` into `tagflow run` with a udp source, whose Counter must
# equal the Counter of the same configuration run directly, with the receiver's counters in
# the results file; losses made by the kernel (nftables random drop) all accounted, with the
# receiver restricted to its sender. Exits 77 (reported as skipped) with the reason where namespaces cannot be
# made. Every wait is bounded; the namespaces are removed on exit, also on failure.
# Usage: test_netns.sh PATH/TO/tagflow
set -uo pipefail
tagflow=$1
python=/usr/bin/python3
id=$$
ns_tx=tagflow-tx-$id
ns_rx=tagflow-rx-$id
veth_tx=tft$id
veth_rx=tfr$id
subnet=10.231.$((id % 250))
addr_tx=$subnet.1
addr_rx=$subnet.2
work=$(mktemp -d)
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  ip netns del "$ns_tx" 2>/dev/null
  ip netns del "$ns_rx" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1

skip() {
  echo "SKIP: $1"
  exit 77
}
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok: $1"; }
fail() { failed=$((failed + 1)); echo "FAILED: $1"; }

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
ip netns add "$ns_tx" 2>err.txt || skip "ip netns is not permitted here: $(cat err.txt)"
ip netns add "$ns_rx" 2>err.txt || skip "ip netns is not permitted here: $(cat err.txt)"
ip link add "$veth_tx" type veth peer name "$veth_rx" 2>err.txt ||
  skip "cannot create a veth pair: $(cat err.txt)"
ip link set "$veth_tx" netns "$ns_tx" && ip link set "$veth_rx" netns "$ns_rx" ||
  skip "cannot move the veth ends into the namespaces"
for side in tx rx; do
  ns_var=ns_$side veth_var=veth_$side addr_var=addr_$side
  ns=${!ns_var} veth=${!veth_var} addr=${!addr_var}
  ip netns exec "$ns" ip link set lo up &&
    ip netns exec "$ns" ip link set "$veth" mtu 9000 up &&
    ip netns exec "$ns" ip addr add "$addr/30" dev "$veth" ||
    skip "cannot configure $veth in $ns"
done

# wait_for FILE TEXT PID: up to 10 s for TEXT to appear in FILE while PID runs.
wait_for() {
  for _ in $(seq 100); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# --- linktest across the pair ---------------------------------------------------------------
timeout 60 ip netns exec "$ns_rx" "$tagflow" linktest --mode receive --address "$addr_rx" \
  --port 4750 --json rx.json >rx.txt 2>&1 &
rx_pid=$!
pids+=("$rx_pid")
if ! wait_for rx.txt "waiting for datagrams on $addr_rx:4750" "$rx_pid"; then
  fail "linktest receiver did not start: $(cat rx.txt)"
else
  timeout 60 ip netns exec "$ns_tx" "$tagflow" linktest --mode send --address "$addr_rx" \
    --port 4750 --duration 2 --rate 30e6 --json tx.json >tx.txt 2>&1 ||
    fail "linktest sender: $(cat tx.txt)"
  wait "$rx_pid" || fail "linktest receiver: $(cat rx.txt)"
  if "$python" - <<'EOF'; then pass "linktest across the veth pair: every tag, no loss, MTU 9000"; else fail "linktest figures: $(cat rx.txt tx.txt)"; fi
import json
rx, tx = json.load(open("rx.json")), json.load(open("tx.json"))
c = rx["receiver_counters"]
assert tx["sender"]["tags"] > 10_000_000, tx
assert rx["receiver"]["tags"] == tx["sender"]["tags"], (rx["receiver"], tx["sender"])
assert c["datagrams_lost"] == 0 and c["malformed"] == 0 and c["foreign"] == 0, c
assert c["largest_datagram_bytes"] == 9000 - 28, c
assert rx["interface_mtu"] == 9000, rx
assert all(v >= 0 for v in rx["system_counters"].values()), rx
EOF
fi

# --- stream send into tagflow run, against the same configuration run directly -------------
measurement='[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, -2]
binwidth = 1_000_000_000
n_values = 200'
cat >direct.toml <<EOF
[run]
duration_ps = 200_000_000_000
[source]
kind = "synthetic"
seed = 5
[[source.channel]]
channel = 1
kind = "poisson"
rate = 20e6
[[source.channel]]
channel = -2
kind = "clock"
frequency = 5e6
jitter_ps = 20
[[source.overflow]]
begin_ps = 50_000_000_000
end_ps = 60_000_000_000
$measurement
EOF
cat >udp.toml <<EOF
[source]
kind = "udp"
address = "$addr_rx"
port = 4751
idle_timeout_s = 10
$measurement
EOF

timeout 90 ip netns exec "$ns_rx" "$tagflow" run -q udp.toml -o udp.h5 >run.txt 2>&1 &
run_pid=$!
pids+=("$run_pid")
if ! wait_for run.txt "waiting for datagrams on $addr_rx:4751" "$run_pid"; then
  fail "tagflow run with a udp source did not start: $(cat run.txt)"
else
  timeout 60 ip netns exec "$ns_tx" "$tagflow" stream send direct.toml --to "$addr_rx:4751" \
    --mtu 9000 --rate 20e6 >send.txt 2>&1 || fail "tagflow stream send: $(cat send.txt)"
  wait "$run_pid" || fail "tagflow run with a udp source: $(cat run.txt)"
  timeout 60 "$tagflow" run -q direct.toml -o direct.h5 >direct.txt 2>&1 ||
    fail "the direct run: $(cat direct.txt)"
  if "$python" - <<'EOF'; then pass "stream send -> run: Counter equals the direct run's; receiver counters in /source"; else fail "stream send -> run results"; fi
import h5py, numpy as np
with h5py.File("udp.h5") as u, h5py.File("direct.h5") as d:
    for name in ("data", "data_total_counts", "overflow_mask"):
        assert np.array_equal(u["counter"][name][...], d["counter"][name][...]), name
    assert u["counter"]["overflow_mask"][...].sum() > 0
    s = u["source"].attrs
    assert s["kind"] == "udp"
    assert s["datagrams_lost"] == 0 and s["malformed"] == 0, dict(s)
    assert s["datagrams_accepted"] > 100 and s["tags"] > 1_000_000, dict(s)
    assert "source" not in d
EOF
fi

# --- losses made by the kernel: nftables drops the first data datagram and 1 % of the rest at
# random. Datagrams with words only (UDP length above 8 + 24): the start and end datagrams are
# not data. Every drop the kernel counts must come out as a lost datagram, and every tag it held
# as a lost event: the Counter misses exactly those, in the bins it flags, and its bins keep
# their edges (the start datagram says where the stream began).
if ! command -v nft >/dev/null; then
  echo "SKIP (kernel drops): nft (nftables) is not installed"
elif ! ip netns exec "$ns_rx" nft add table inet loss 2>err.txt ||
  ! ip netns exec "$ns_rx" nft add chain inet loss input \
    '{ type filter hook input priority 0; policy accept; }' 2>>err.txt ||
  ! ip netns exec "$ns_rx" nft add rule inet loss input udp dport 4752 udp length gt 32 \
    numgen inc mod 1000000000 lt 1 counter drop 2>>err.txt ||
  ! ip netns exec "$ns_rx" nft add rule inet loss input udp dport 4752 udp length gt 32 \
    numgen random mod 100 lt 1 counter drop 2>>err.txt; then
  echo "SKIP (kernel drops): nftables is not permitted here: $(cat err.txt)"
else
  sed -e 's/port = 4751/port = 4752/' \
    -e "s/^idle_timeout_s = 10/idle_timeout_s = 10\nsender = \"$addr_tx:4800\"/" udp.toml >lossy.toml
  timeout 90 ip netns exec "$ns_rx" "$tagflow" run -q lossy.toml -o lossy.h5 >lossy.txt 2>&1 &
  run_pid=$!
  pids+=("$run_pid")
  if ! wait_for lossy.txt "waiting for datagrams on $addr_rx:4752" "$run_pid"; then
    fail "the receiver behind nftables did not start: $(cat lossy.txt)"
  else
    timeout 60 ip netns exec "$ns_tx" "$tagflow" stream send direct.toml --to "$addr_rx:4752" \
      --from "$addr_tx:4800" --mtu 1500 --rate 20e6 >lossy_send.txt 2>&1 ||
      fail "tagflow stream send: $(cat lossy_send.txt)"
    wait "$run_pid" || fail "tagflow run behind nftables: $(cat lossy.txt)"
    ip netns exec "$ns_rx" nft list table inet loss >nft.txt 2>&1
    sent=$(sed -n 's/^sent \([0-9]*\) tags.*/\1/p' lossy_send.txt)
    dropped=$(sed -n 's/.*counter packets \([0-9]*\) bytes.*/\1/p' nft.txt | awk '{n += $1} END {print n}')
    if "$python" - "$sent" "$dropped" <<'EOF'; then pass "kernel drops ($dropped datagrams): each a lost datagram, every tag accounted"; else fail "kernel drops: $(cat nft.txt lossy_send.txt)"; fi
import sys, h5py, numpy as np
sent, dropped = int(sys.argv[1]), int(sys.argv[2])
with h5py.File("lossy.h5") as u, h5py.File("direct.h5") as d:
    s = u["source"].attrs
    assert dropped > 10, dropped
    assert s["datagrams_lost"] == dropped, (s["datagrams_lost"], dropped)
    assert s["events"] + s["events_lost"] == sent, (s["events"], s["events_lost"], sent)
    assert s["malformed"] == 0 and s["foreign"] == 0, dict(s)
    counted_u = u["counter/data_total_counts"][...].sum()
    counted_d = d["counter/data_total_counts"][...].sum()
    assert counted_d - counted_u == s["events_lost"], (counted_d, counted_u, s["events_lost"])
    mask = u["counter/overflow_mask"][...]
    clean = mask == 0
    lossy, direct = u["counter/data"][...], d["counter/data"][...]
    differing = np.nonzero((lossy != direct).any(axis=0) & clean)[0]
    assert len(differing) == 0, ("unflagged bins differ", differing.tolist(),
                                 "flagged", np.nonzero(mask)[0].tolist(),
                                 lossy[:, differing].tolist(), direct[:, differing].tolist())
    assert mask.sum() >= 1
EOF
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
