"""The Python package's figures, measured side by side in one process (docs/benchmarks.md,
"Python"):

1. the same graph (Counter, Countrate, Correlation on the 8-channel demo stream) driven from
   Python and from C++ (`tagflow run` on the same raw file, taking turns), wall MTags/s;
2. a measurement written in Python doing a vectorised numpy histogram of every block: its
   capacity (tags over its busy time, from the profile) and the graph's wall rate;
3. TagStream delivering every tag of the 8-channel stream to Python while the graph runs:
   tags received over wall time.

    PYTHONPATH=build/python python3 bench/python/bench_python.py build/tools/tagflow \
        [--tags 50000000] [--runs 5]
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import tagflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("tagflow", help="the tagflow program, for the C++ side")
parser.add_argument("--tags", type=int, default=50_000_000)
parser.add_argument("--runs", type=int, default=5)
arguments = parser.parse_args()


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def demo_tags(count):
    graph = tf.Graph(tf.SyntheticSource(block_size=65536))
    stream = tf.TagStream(graph, channels=list(range(1, 9)), max_tags=count)
    rate = tf.Countrate(graph, channels=[1])
    graph.start()
    while rate.getCountsTotal()[0] * 8.875 < count * 1.05 and graph.isRunning():
        time.sleep(0.05)
    graph.stop()
    graph.wait()
    return stream.getData()


def python_graph(source):
    graph = tf.Graph(source)
    tf.Counter(graph, list(range(1, 9)), binwidth=10_000_000_000, n_values=100)
    tf.Countrate(graph, list(range(1, 9)))
    tf.Correlation(graph, 2, 1, binwidth=10, n_bins=1000)
    return graph


CONFIG = """
[source]
kind = "raw"
path = "{path}"
[[measurement]]
kind = "Counter"
channels = [1, 2, 3, 4, 5, 6, 7, 8]
binwidth = 10_000_000_000
n_values = 100
[[measurement]]
kind = "Countrate"
channels = [1, 2, 3, 4, 5, 6, 7, 8]
[[measurement]]
kind = "Correlation"
channel_1 = 2
channel_2 = 1
binwidth = 10
n_bins = 1000
"""


class NumpyHistogram(tf.CustomMeasurement):
    def __init__(self, graph):
        super().__init__(graph)
        self.counts = np.zeros(16, np.int64)

    def process(self, tags):
        self.counts += np.bincount(tags["channel"] & 15, minlength=16)


def main():
    print(f"CPU: {cpu_model()}; {arguments.tags} tags, medians of {arguments.runs}")
    tags = demo_tags(arguments.tags)[: arguments.tags]
    folder = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    raw = os.path.join(folder, "stream.raw")
    tags.tofile(raw)
    config = os.path.join(folder, "graph.toml")
    with open(config, "w") as f:
        f.write(CONFIG.format(path=raw))

    python_rates, cpp_rates = [], []
    for _ in range(arguments.runs):
        graph = python_graph(tf.RawFileSource(raw))
        python_rates.append(graph.run()["wall_mtags_per_s"])
        output = subprocess.run([arguments.tagflow, "run", config, "-o",
                                 os.path.join(folder, "cpp.h5")],
                                capture_output=True, text=True, check=True).stdout
        cpp_rates.append(float(re.search(r"wall = ([0-9.]+) MTags/s", output).group(1)))
    p, c = statistics.median(python_rates), statistics.median(cpp_rates)
    print(f"same graph, wall: Python {p:.1f} MTags/s, C++ {c:.1f} MTags/s, "
          f"Python/C++ {p / c:.3f}  (runs: Python {[round(x) for x in python_rates]}, "
          f"C++ {[round(x) for x in cpp_rates]})")

    capacities, walls = [], []
    for _ in range(arguments.runs):
        graph = tf.Graph(tf.MemorySource(tags["time"], tags["channel"], block_size=16384))
        NumpyHistogram(graph)
        profile = graph.run()
        row = [n for n in profile["nodes"] if n["kind"] == "PythonMeasurement"][0]
        capacities.append(row["capacity_mtags_per_s"])
        walls.append(profile["wall_mtags_per_s"])
    print(f"Python numpy histogram: capacity {statistics.median(capacities):.1f} MTags/s, "
          f"graph wall {statistics.median(walls):.1f} MTags/s")

    stream_rates = []
    for _ in range(arguments.runs):
        graph = tf.Graph(tf.MemorySource(tags["time"], tags["channel"], block_size=16384))
        stream = tf.TagStream(graph, channels=list(range(1, 9)), max_tags=1 << 22)
        received = 0
        began = time.perf_counter()
        graph.start()
        while graph.isRunning():
            received += len(stream.getData())
        graph.wait()
        received += len(stream.getData())
        elapsed = time.perf_counter() - began
        assert received == len(tags) and stream.getDropped() == 0, (received, len(tags))
        stream_rates.append(received / elapsed * 1e-6)
    print(f"TagStream to Python: {statistics.median(stream_rates):.1f} MTags/s "
          f"(runs {[round(x) for x in stream_rates]})")


main()
