"""Every measurement driven from Python gives exactly the result `tagflow run` gives for the
same graph on the same stream (the C++ engine, compared dataset by dataset through its HDF5
file); an in-memory source from numpy arrays gives the results of the raw file of the same
tags."""

import h5py
import numpy as np
import tagflow as tf

DURATION = 50_000_000_000  # 50 ms of the 8-channel demo stream

CONFIG = f"""
[run]
duration_ps = {DURATION}
[source]
kind = "synthetic"
seed = 3
block_size = 7000
[[channel]]
kind = "DelayedChannel"
name = "herald"
input_channel = 1
delay = 1000
[[channel]]
kind = "Coincidence"
name = "pairs"
channels = ["herald", 2]
coincidence_window = 300
[[measurement]]
kind = "Counter"
name = "counter"
channels = [1, 2, 3, "pairs"]
binwidth = 1_000_000_000
n_values = 20
[[measurement]]
kind = "Countrate"
name = "countrate"
channels = [1, 2, 3, 4, 5, 6, 7, 8]
[[measurement]]
kind = "Correlation"
name = "correlation"
channel_1 = 2
channel_2 = "herald"
binwidth = 10
n_bins = 300
[[measurement]]
kind = "HistogramLogBins"
name = "log_bins"
click_channel = 2
start_channel = 1
exp_start = -11
exp_stop = -6
n_bins = 100
[[measurement]]
kind = "FrequencyStability"
name = "stability"
channel = 3
steps = [1, 2, 4, 8]
average = 10
[[measurement]]
kind = "PhaseNoise"
name = "phase_noise"
channels = [3]
samples_per_octave = 64
"""


def python_graph(source):
    graph = tf.Graph(source)
    herald = tf.DelayedChannel(graph, input_channel=1, delay=1000)
    pairs = tf.Coincidence(graph, channels=[herald, 2], coincidence_window=300)
    tf.Counter(graph, [1, 2, 3, pairs], 1_000_000_000, 20, name="counter")
    tf.Countrate(graph, channels=list(range(1, 9)), name="countrate")
    tf.Correlation(graph, channel_1=2, channel_2=herald, binwidth=10, n_bins=300,
                   name="correlation")
    tf.HistogramLogBins(graph, 2, 1, -11, -6, 100, name="log_bins")
    tf.FrequencyStability(graph, channel=3, steps=[1, 2, 4, 8], average=10, name="stability")
    tf.PhaseNoise(graph, channels=[3], samples_per_octave=64, name="phase_noise")
    return graph


def assert_same_datasets(left, right):
    compared = 0
    for name in ["counter", "countrate", "correlation", "log_bins", "stability", "phase_noise"]:
        for dataset in left[name]:
            a, b = left[name][dataset][()], right[name][dataset][()]
            assert a.shape == b.shape, (name, dataset)
            assert np.array_equal(a, b, equal_nan=True), (name, dataset)
            compared += 1
    assert compared > 20


def test_python_results_equal_tagflow_run(cli, scratch):
    (scratch / "graph.toml").write_text(CONFIG)
    cli("run", "-q", scratch / "graph.toml", "-o", scratch / "cpp.h5")
    graph = python_graph(tf.SyntheticSource(seed=3, block_size=7000))
    graph.run(DURATION)
    tf.write_hdf5(str(scratch / "python.h5"), graph)
    with h5py.File(scratch / "cpp.h5") as cpp, h5py.File(scratch / "python.h5") as python:
        assert_same_datasets(cpp, python)
    # The getters return what the file holds, shaped like it.
    counter = graph.measurements[0]
    with h5py.File(scratch / "cpp.h5") as cpp:
        assert np.array_equal(counter.getData(), cpp["counter/data"][()])


def test_numpy_source_equals_raw_file(scratch):
    source = tf.SyntheticSource(seed=5, duration_ps=DURATION)
    graph = tf.Graph(source)
    stream = tf.TagStream(graph, channels=list(range(1, 9)), max_tags=10**7)
    graph.run()
    tags = stream.getData()
    assert stream.getDropped() == 0 and len(tags) > 100_000
    tags.tofile(scratch / "stream.raw")

    from_memory = python_graph(tf.MemorySource(tags["time"], tags["channel"], block_size=5000))
    from_memory.run()
    from_file = python_graph(tf.RawFileSource(str(scratch / "stream.raw")))
    from_file.run()
    tf.write_hdf5(str(scratch / "memory.h5"), from_memory)
    tf.write_hdf5(str(scratch / "file.h5"), from_file)
    with h5py.File(scratch / "memory.h5") as memory, h5py.File(scratch / "file.h5") as file:
        assert_same_datasets(memory, file)


def test_file_sources_give_the_stream_back(cli, scratch):
    """Raw file, tag file, Photon-HDF5 and PTU (written by `tagflow convert`) read from Python
    give the same tags."""
    graph = tf.Graph(tf.SyntheticSource(seed=9, duration_ps=5_000_000_000))
    stream = tf.TagStream(graph, channels=list(range(1, 9)), max_tags=10**7)
    graph.run()
    tags = stream.getData()
    tags.tofile(scratch / "stream.raw")
    for name in ["stream.tags", "stream.h5", "stream.ptu"]:
        cli("convert", "-q", scratch / "stream.raw", scratch / name)
    sources = {
        "raw": tf.RawFileSource(str(scratch / "stream.raw")),
        "tags": tf.FileReader(str(scratch / "stream.tags")),
        "photon_hdf5": tf.PhotonHdf5Source(str(scratch / "stream.h5")),
        "ptu": tf.VendorFile(str(scratch / "stream.ptu")),
    }
    for kind, source in sources.items():
        replay = tf.Graph(source)
        copy = tf.TagStream(replay, channels=list(range(1, 9)), max_tags=10**7)
        replay.run()
        got = copy.getData()
        assert np.array_equal(got["time"], tags["time"]), kind
        assert np.array_equal(got["channel"], tags["channel"]), kind
