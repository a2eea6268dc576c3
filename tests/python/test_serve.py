"""tagflow.serve() from Python: the page's snapshot holds what the measurement's own getters
return once the stream has ended, "Stop run" or Ctrl-C ends serve() with the run's profile, and
a bad option gets the C++ message."""

import json
import signal
import subprocess
import sys
import textwrap
import threading
import urllib.request

import numpy as np
import pytest
import tagflow as tf


def get_json(url, data=None):
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


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
