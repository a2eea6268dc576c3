"""tagflow.serve() from Python: the page's snapshot holds what the measurement's own getters
return once the stream has ended, "Stop run" or Ctrl-C ends serve() with the run's profile, a
bad option gets the C++ message, a measurement whose results() raises is reported on the page
without ending its updates, and a server dropped while it reads a Python measurement goes."""

import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import urllib.request

import numpy as np
import pytest
import tagflow as tf


def get_json(url, data=None):
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET",
                                     headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def websocket_snapshots(port, timeout_s=10):
    """Connects to the page's WebSocket and yields each snapshot it sends as a dict."""
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        stream = sock.makefile("rb")
        status = stream.readline()
        assert status.startswith(b"HTTP/1.1 101"), status
        while stream.readline() not in (b"\r\n", b""):
            pass
        while True:
            first, second = stream.read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", stream.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", stream.read(8))[0]
            payload = stream.read(length)
            assert first == 0x81, "a snapshot comes as one text frame"
            yield json.loads(payload)


def finished_snapshot(url):
    """The page's snapshot once it shows the run finished (within 30 s)."""
    snapshot = None
    for _ in range(600):
        snapshot = get_json(url + "api/snapshot")
        if snapshot["run"]["state"] == "finished":
            break
        threading.Event().wait(0.05)
    assert snapshot["run"]["state"] == "finished"
    return snapshot


def test_serve_shows_the_final_results_until_stop_run():
    graph = tf.Graph(tf.SyntheticSource(seed=3, duration_ps=50_000_000_000))
    counter = tf.Counter(graph, channels=[1, 2], binwidth=1_000_000_000, n_values=50)
    listening = threading.Event()
    urls, outcome = [], {}

    def on_listening(url):
        urls.append(url)
        listening.set()

    def run():
        outcome["profile"] = tf.serve(graph, port=0, on_listening=on_listening)

    thread = threading.Thread(target=run)
    thread.start()
    assert listening.wait(30)
    url = urls[0]
    snapshot = finished_snapshot(url)
    entry = next(m for m in snapshot["measurements"] if m["name"] == counter.name)
    shown = np.array(entry["arrays"]["data"]["data"]).reshape(entry["arrays"]["data"]["shape"])
    np.testing.assert_array_equal(shown, counter.getData())
    assert snapshot["profile"]["tags"] == snapshot["profile"]["nodes"][0]["tags"] > 0
    assert thread.is_alive()  # the page keeps the final results

    assert get_json(url + "api/control", json.dumps({"action": "stop_run"}).encode()) == {
        "ok": True}
    thread.join(30)
    assert not thread.is_alive()
    assert outcome["profile"]["tags"] == snapshot["profile"]["tags"]


def test_ctrl_c_after_the_stream_ended_returns_the_profile():
    script = textwrap.dedent("""
        import sys
        import tagflow as tf
        graph = tf.Graph(tf.SyntheticSource(seed=3, duration_ps=10_000_000_000))
        tf.Countrate(graph, channels=[1])
        profile = tf.serve(graph, port=0,
                           on_listening=lambda url: print(url, flush=True))
        print("tags", profile["tags"], flush=True)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        snapshot = finished_snapshot(url)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert out.split() == ["tags", str(snapshot["profile"]["tags"])]
    assert snapshot["profile"]["tags"] > 0


def test_serve_refuses_bad_options_with_the_cpp_message():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000))
    tf.Countrate(graph, channels=[1])
    with pytest.raises(ValueError, match=r"update rate 100 Hz is invalid \(valid: 1 to 60\)"):
        tf.Server(graph, port=0, update_hz=100)
    with pytest.raises(ValueError, match="address 'nowhere' is invalid"):
        tf.Server(graph, address="nowhere", port=0)


def test_a_measurement_whose_results_raise_is_reported_and_updates_go_on():
    failing = threading.Event()
    failing.set()

    class Flaky(tf.CustomMeasurement):
        def process(self, tags):
            pass

        def results(self):
            if failing.is_set():
                raise RuntimeError("not ready yet")
            return {"x": np.zeros(3)}

    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000_000))
    flaky = Flaky(graph)
    rates = tf.Countrate(graph, channels=[1])
    graph.run()
    server = tf.Server(graph, port=0, update_hz=20)
    snapshots = websocket_snapshots(server.port)
    first = next(snapshots)
    assert [m["name"] for m in first["measurements"]] == [rates.name]
    assert f"measurement '{flaky.name}': RuntimeError: not ready yet" in first["run"]["error"]
    failing.clear()
    # Later snapshots come, and hold the measurement again once it can be read.
    later = next(s for s in snapshots if len(s["measurements"]) == 2)
    assert later["run"]["error"] == "" and later["seq"] > first["seq"]
    snapshots.close()
    server.stop()


def test_a_server_dropped_while_it_reads_a_python_measurement_goes():
    # In a process of its own: before, this hung for good (the server's thread waited for the
    # GIL that the thread dropping the server held while it waited for that thread).
    script = textwrap.dedent("""
        import threading, time, urllib.request
        import numpy as np
        import tagflow as tf
        reading = threading.Event()
        class Slow(tf.CustomMeasurement):
            def process(self, tags):
                pass
            def results(self):
                reading.set()
                time.sleep(1)  # the GIL is free meanwhile, as in any numpy or I/O work
                return {"x": np.zeros(3)}
        graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000_000))
        Slow(graph)
        graph.run()
        server = tf.Server(graph, port=0)
        url = server.url
        def get():
            try:
                urllib.request.urlopen(url + "api/snapshot", timeout=30).read()
            except OSError:
                pass  # the server went first
        threading.Thread(target=get, daemon=True).start()
        assert reading.wait(30)
        del server
        print("dropped", flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0 and done.stdout.split() == ["dropped"], done.stderr
