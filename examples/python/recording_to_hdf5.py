"""Record a stream with FileWriter, replay the recording with FileReader through a Counter and
a Correlation, and write the results to HDF5 in the layout of `tagflow run`; the replayed
results equal those measured live.

    python3 examples/python/recording_to_hdf5.py [folder] [--seconds 0.05]
"""

import argparse
import pathlib

import numpy as np
import tagflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("folder", nargs="?", default=".")
parser.add_argument("--seconds", type=float, default=0.05)
arguments = parser.parse_args()
folder = pathlib.Path(arguments.folder)
recording = folder / "recording.tags"


def measure(graph):
    return (tf.Counter(graph, [1, 2], binwidth=1_000_000_000, n_values=100, name="counter"),
            tf.Correlation(graph, 2, 1, binwidth=50, n_bins=200, name="g2"))


live = tf.Graph(tf.SyntheticSource(duration_ps=int(arguments.seconds * 1e12)))
live_counter, live_g2 = measure(live)
writer = tf.FileWriter(live, path=str(recording), channels=[1, 2])
live.run()
writer.close()

replay = tf.Graph(tf.FileReader(str(recording)))
counter, g2 = measure(replay)
replay.run()
tf.write_hdf5(str(folder / "replayed.h5"), replay)
assert np.array_equal(counter.getData(), live_counter.getData())
assert np.array_equal(g2.getData(), live_g2.getData())
print(f"recorded {writer.getTotalEvents()} tags in {writer.getTotalSize()} bytes; the replay "
      f"equals the live results; written to {folder / 'replayed.h5'}")
