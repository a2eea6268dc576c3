"""A live count-rate monitor: the graph runs in the background while the rates of the last
10 ms bins are printed a few times per second, as one watches them while aligning.

    python3 examples/python/count_rate_monitor.py [--seconds 2]
"""

import argparse
import time

import tagflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=2.0, help="wall-clock seconds to watch")
arguments = parser.parse_args()

channels = [1, 2, 3, 4]
graph = tf.Graph(tf.SyntheticSource(block_size=4096))  # endless: stopped below
counter = tf.Counter(graph, channels, binwidth=10_000_000_000, n_values=10)
rate = tf.Countrate(graph, channels)
graph.start()
end = time.monotonic() + arguments.seconds
try:
    while time.monotonic() < end:
        time.sleep(0.25)
        recent = counter.getData()[:, -1] / 0.01  # counts in the last 10 ms bin, per second
        print("  ".join(f"ch{c}: {r / 1e6:6.2f} MHz" for c, r in zip(channels, recent)))
finally:
    graph.stop()
    profile = graph.wait()
print("mean rates since start:",
      "  ".join(f"ch{c}: {r / 1e6:.2f} MHz" for c, r in zip(channels, rate.getData())))
print(f"{profile['tags']} tags, stream time {profile['stream_duration_ps'] / 1e12:.3f} s")
