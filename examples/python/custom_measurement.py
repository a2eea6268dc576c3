"""A measurement written in numpy: a histogram of the channel numbers of every tag, run in the
graph beside a built-in Countrate (which it must agree with), with its cost in the profile.

    python3 examples/python/custom_measurement.py [--seconds 0.1]
"""

import argparse

import numpy as np
import tagflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=0.1)
arguments = parser.parse_args()


class ChannelHistogram(tf.CustomMeasurement):
    def __init__(self, graph, channels):
        super().__init__(graph)
        self.channels = np.asarray(channels)
        self.counts = np.zeros(len(channels), np.int64)

    def process(self, tags):
        # One vectorised pass per block: positions of each tag's channel in the list.
        found = np.searchsorted(self.channels, tags["channel"])
        found = found[found < len(self.channels)]
        self.counts += np.bincount(found, minlength=len(self.channels))

    def clear(self):
        self.counts[:] = 0

    def results(self):
        return {"counts": self.counts.copy()}


channels = list(range(1, 9))
graph = tf.Graph(tf.SyntheticSource(duration_ps=int(arguments.seconds * 1e12)))
histogram = ChannelHistogram(graph, channels)
rate = tf.Countrate(graph, channels)
profile = graph.run()
assert np.array_equal(histogram.counts, rate.getCountsTotal()), "the two disagree"
for node in profile["nodes"]:
    print(f"{node['name']:18} {node['kind']:18} {node['capacity_mtags_per_s']:8.1f} MTags/s")
print("counts:", histogram.counts)
