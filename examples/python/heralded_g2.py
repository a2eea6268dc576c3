"""g2 of a heralded single-photon source, with a figure.

Channel 1 heralds, channel 2 sees the heralded photon 1 ns later (half of the time), on top
of background counts: the herald is delayed by 1 ns so the pairs sit at zero delay, and the
normalised Correlation shows the bunching peak. Writes the figure to heralded_g2.png (or the
path given) and the results to heralded_g2.h5.

    python3 examples/python/heralded_g2.py [figure.png] [--seconds 0.2]
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import tagflow as tf  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("figure", nargs="?", default="heralded_g2.png")
parser.add_argument("--seconds", type=float, default=0.2)
arguments = parser.parse_args()

source = tf.SyntheticSource(
    channel=[{"channel": 1, "kind": "poisson", "rate": 2e6},
             {"channel": 2, "kind": "partner", "partner_of": 1, "delay_ps": 1000,
              "jitter_ps": 50, "probability": 0.5},
             {"channel": 3, "kind": "poisson", "rate": 5e5}],
    duration_ps=int(arguments.seconds * 1e12))
graph = tf.Graph(source)
herald = tf.DelayedChannel(graph, input_channel=1, delay=1000)
signal = tf.Combiner(graph, channels=[2, 3])  # the photons plus the background detector
g2 = tf.Correlation(graph, signal, herald, binwidth=20, n_bins=200)
profile = graph.run()

figure, axes = plt.subplots(figsize=(6, 4))
axes.plot(g2.getIndex() * 1e-3, g2.getDataNormalized())
axes.set_xlabel("delay (ns)")
axes.set_ylabel("g2")
axes.set_title("heralded photons against the delayed herald")
figure.tight_layout()
figure.savefig(arguments.figure, dpi=100)
tf.write_hdf5("heralded_g2.h5", graph)
print(f"g2 peak {g2.getDataNormalized().max():.1f} at "
      f"{g2.getIndex()[g2.getData().argmax()]} ps; {profile['tags']} tags at "
      f"{profile['wall_mtags_per_s']:.0f} MTags/s; figure in {arguments.figure}")
