"""The Python API itself: a measurement written in Python against a brute force, a Counter
polled while it runs, HistogramLogBins' snapshot, an empty table of a source, TagStream,
the lifecycle methods, the profile as plain data, lifetimes (a node used after its graph is
gone, a graph dropped while it runs, arrays kept after their measurement), Ctrl-C during a
blocking call, bad arguments with the C++ messages, MemorySource's refusal of what is not a
whole number or not one-dimensional, virtual channels of another graph, Coincidences' groups as
one list, a CustomMeasurement without process() or with results() that are not numbers, and
results written onto a full disk, node names refused before the node is made, and
mergeStreamFiles and MergedSource against numpy's merge of the same recordings."""

import gc
import os
import resource
import signal
import subprocess
import sys
import threading
import time

import h5py
import numpy as np
import pytest
import tagflow as tf


def stream_of(duration_ps, seed=1):
    graph = tf.Graph(tf.SyntheticSource(seed=seed, duration_ps=duration_ps))
    stream = tf.TagStream(graph, channels=list(range(1, 9)), max_tags=10**8)
    graph.run()
    return stream.getData()


class DelayHistogram(tf.CustomMeasurement):
    """Histogram of the time from each channel-1 tag to the next tag of channel 2, in 100 ps
    bins up to 10 ns (a start-stop histogram), vectorised over each block."""

    def __init__(self, graph):
        super().__init__(graph)
        self.counts = np.zeros(100, np.int64)
        self.waiting = np.zeros(0, np.int64)  # starts whose stop is in a later block

    def process(self, tags):
        starts = np.concatenate((self.waiting, tags["time"][tags["channel"] == 1]))
        stops = tags["time"][tags["channel"] == 2]
        after = np.searchsorted(stops, starts, side="left")
        valid = after < len(stops)
        delays = stops[after[valid]] - starts[valid]
        self.waiting = starts[~valid]
        delays = delays[delays < 10_000]
        self.counts += np.bincount(delays // 100, minlength=100)[:100]

    def clear(self):
        self.counts[:] = 0
        self.waiting = np.zeros(0, np.int64)

    def results(self):
        return {"counts": self.counts.copy()}


def brute_force_delays(tags):
    counts = np.zeros(100, np.int64)
    stop_times = tags["time"][tags["channel"] == 2]
    for start in tags["time"][tags["channel"] == 1]:
        i = np.searchsorted(stop_times, start, side="left")
        if i < len(stop_times) and stop_times[i] - start < 10_000:
            counts[(stop_times[i] - start) // 100] += 1
    return counts


def test_python_measurement_equals_brute_force():
    duration = 20_000_000_000
    tags = stream_of(duration, seed=4)
    graph = tf.Graph(tf.SyntheticSource(seed=4, duration_ps=duration, block_size=3000))
    histogram = DelayHistogram(graph)
    profile = graph.run()
    assert histogram.counts.sum() > 10_000
    assert np.array_equal(histogram.counts, brute_force_delays(tags))
    assert np.array_equal(histogram.getResults()["counts"], histogram.counts)
    row = [node for node in profile["nodes"] if node["name"] == "DelayHistogram"][0]
    assert row["kind"] == "PythonMeasurement" and row["tags"] == profile["tags"]
    assert row["busy_s"] > 0
    histogram.clear()
    assert histogram.counts.sum() == 0


def test_counter_data_polled_while_running_holds_every_bin_once():
    # 20 ms of the default stream in 100 us bins, polled with remove=True while the graph runs
    # in the background: the polls together are the numpy binning of the same stream.
    duration, binwidth = 20 * 10**9, 10**8
    tags = stream_of(duration)
    graph = tf.Graph(tf.SyntheticSource(seed=1, duration_ps=duration, block_size=1000))
    counter = tf.Counter(graph, [1, 3], binwidth=binwidth, n_values=duration // binwidth)
    graph.start()
    polls = []
    while graph.isRunning():
        polls.append(counter.getDataObject(remove=True))
    graph.wait()
    polls.append(counter.getDataObject(remove=True))
    assert all(poll.dropped_bins == 0 for poll in polls)
    numbers = np.concatenate([poll.first_bin + np.arange(poll.size) for poll in polls])
    np.testing.assert_array_equal(numbers, np.arange(duration // binwidth))
    counts = np.concatenate([poll.getData() for poll in polls], axis=1)
    times = np.concatenate([poll.getTime() for poll in polls])
    np.testing.assert_array_equal(times, numbers * binwidth)
    for row, channel in zip(counts, [1, 3]):
        on_channel = tags["time"][tags["channel"] == channel]
        np.testing.assert_array_equal(row, np.bincount(on_channel // binwidth,
                                                       minlength=duration // binwidth))
    last = polls[-1]
    assert last.getData().shape == (2, last.size) and list(last.getChannels()) == [1, 3]
    np.testing.assert_array_equal(last.getDataTotalCounts(), counts.sum(axis=1))
    assert not any(poll.overflow for poll in polls)


def test_histogram_log_bins_data_object_holds_one_consistent_snapshot():
    graph = tf.Graph(tf.SyntheticSource(seed=2, duration_ps=10**10))
    histogram = tf.HistogramLogBins(graph, 2, 1, -11, -7, 200)
    graph.run()
    data = histogram.getDataObject()
    np.testing.assert_array_equal(data.getCounts(), histogram.getData())
    np.testing.assert_array_equal(data.getBinEdges(), histogram.getBinEdges())
    np.testing.assert_array_equal(data.getG2(), histogram.getDataNormalizedG2())
    assert data.accumulation_time_start == histogram.getAccumulationTimeStart() > 0
    assert data.accumulation_time_click == histogram.getAccumulationTimeClick() > 0
    # Counted from one span (the last edge) after the capture start on.
    tags = stream_of(10**10, seed=2)
    accumulated = tags[tags["time"] >= data.getBinEdges()[-1]]
    assert data.n_start == np.count_nonzero(accumulated["channel"] == 1) > 0
    assert data.n_click == np.count_nonzero(accumulated["channel"] == 2) > 0
    widths = np.diff(data.getBinEdges()).astype(float)
    np.testing.assert_allclose(data.getG2Normalization(), data.accumulation_time_start / (
        widths * data.n_start * data.n_click), rtol=1e-14)


def test_tag_stream_hands_out_each_tag_once():
    graph = tf.Graph(tf.SyntheticSource(seed=2, duration_ps=10_000_000_000))
    stream = tf.TagStream(graph, channels=[1, 3], max_tags=10**7)
    rate = tf.Countrate(graph, channels=[1, 3])
    graph.start()
    pieces = []
    while graph.isRunning():
        pieces.append(stream.getData())
    graph.wait()
    pieces.append(stream.getData())
    tags = np.concatenate(pieces)
    assert len(stream.getData()) == 0
    assert np.all(np.diff(tags["time"]) >= 0)
    assert [np.sum(tags["channel"] == c) for c in (1, 3)] == list(rate.getCountsTotal())


def test_tag_stream_counts_what_it_drops():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000_000))
    stream = tf.TagStream(graph, channels=[1], max_tags=100)
    rate = tf.Countrate(graph, channels=[1])
    graph.run()
    assert len(stream.getData()) == 100
    assert stream.getDropped() == rate.getCountsTotal()[0] - 100


def test_lifecycle_and_profile():
    graph = tf.Graph(tf.SyntheticSource())
    counter = tf.Counter(graph, channels=[1], binwidth=1_000_000_000, n_values=5)
    counter.startFor(3_000_000_000)
    graph.start()
    assert counter.waitUntilFinished(timeout=60)
    assert counter.getCaptureDuration() == 3_000_000_000
    assert not counter.isRunning()
    graph.stop()
    profile = graph.wait()
    assert profile == graph.profile()
    assert isinstance(profile["nodes"], list) and profile["nodes"][0]["kind"] == "source"
    assert profile["wall_mtags_per_s"] > 0 and profile["threads"] >= 1
    assert counter.getData().shape == (1, 5)
    assert counter.parameters == {"channels": [1], "binwidth": 1_000_000_000, "n_values": 5}


def test_wait_until_finished_returns_false_where_nothing_can_finish():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000_000))
    unbounded = tf.Countrate(graph, [1])
    cut_short = tf.Countrate(graph, [1])
    cut_short.startFor(5_000_000_000)  # longer than the stream
    sharded = tf.Correlation(graph, 1, 2, parallel=2)
    graph.run()
    for measurement in (unbounded, cut_short, sharded):
        began = time.monotonic()
        assert not measurement.waitUntilFinished()
        assert time.monotonic() - began < 5


def test_node_used_after_its_graph_is_gone():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=2_000_000_000))
    rate = tf.Countrate(graph, channels=[1])
    graph.run()
    expected = rate.getCountsTotal()
    del graph
    gc.collect()
    assert np.array_equal(rate.getCountsTotal(), expected)
    rate.clear()
    assert rate.getCountsTotal()[0] == 0


def test_graph_dropped_while_running():
    graph = tf.Graph(tf.SyntheticSource())  # endless
    rate = tf.Countrate(graph, channels=[1])
    graph.start()
    time.sleep(0.3)
    del graph
    gc.collect()
    assert rate.getCountsTotal()[0] > 0


def test_arrays_outlive_their_measurement():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000_000))
    correlation = tf.Correlation(graph, 2, 1, binwidth=100, n_bins=100)
    graph.run()
    data = correlation.getData()
    copy = data.copy()
    graph.remove(correlation)
    del correlation, graph
    gc.collect()
    assert np.array_equal(data, copy) and data.sum() > 0


def test_ctrl_c_stops_the_run_and_keeps_the_data():
    graph = tf.Graph(tf.SyntheticSource())  # endless: only Ctrl-C ends it
    rate = tf.Countrate(graph, channels=[1])
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        graph.run()
    assert not graph.isRunning()
    assert rate.getCountsTotal()[0] > 0
    assert graph.profile()["tags"] > 0


def test_lists_from_numpy_arrays_ranges_and_numpy_scalars():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000))
    # Items these make as they are asked for, which must stay alive while they are read.
    for steps in (np.array([1, 2, 100_000]), range(100_000, 100_003), (np.int64(5), 7)):
        stability = tf.FrequencyStability(graph, 3, steps=steps)
        assert stability.parameters["steps"] == [int(n) for n in steps]
    generator = tf.EventGenerator(graph, 1, np.array([0, 100]))
    assert generator.parameters["pattern"] == [0, 100]
    counter = tf.Counter(graph, np.array([1, 2]), binwidth=np.int64(1000))
    assert counter.parameters["channels"] == [1, 2]
    assert counter.parameters["binwidth"] == 1000
    graph.run()


def test_bad_arguments():
    graph = tf.Graph(tf.SyntheticSource(duration_ps=1_000_000))
    with pytest.raises(ValueError, match=r"binwidth -5 ps is invalid \(valid: >= 1\)"):
        tf.Counter(graph, [1], binwidth=-5)
    with pytest.raises(ValueError, match=r"n_bins 0 is invalid"):
        tf.Correlation(graph, 1, 2, n_bins=0)
    with pytest.raises(ValueError, match=r"unknown key 'binwidht'"):
        tf.Counter(graph, [1], binwidht=5)
    with pytest.raises(ValueError, match=r"key 'channels' is missing"):
        tf.Counter(graph)
    with pytest.raises(TypeError, match="channels"):
        tf.Counter(graph, channels=[1, object()])
    with pytest.raises(TypeError, match="at most 3 positional"):
        tf.Counter(graph, [1], 10, 10, 10)
    # A value of the wrong type is a TypeError with the C++ message; a wrong value a ValueError.
    with pytest.raises(TypeError, match=r"key 'binwidth' must be an integer, got string \"x\""):
        tf.Counter(graph, channels=[1], binwidth="x")
    with pytest.raises(TypeError, match=r"key 'channel_1' must be a channel"):
        tf.Correlation(graph, "one", 2)
    with pytest.raises(TypeError, match=r"key 'binwidth' must be an integer"):
        tf.Counter(graph, channels=[1], binwidth=1.5)
    with pytest.raises(TypeError, match=r"source must be a tagflow source .*, got int"):
        tf.Graph(42)
    tf.Countrate(graph, channels=[1005])  # a virtual channel number nobody produces
    with pytest.raises(ValueError, match="1005"):
        graph.run()
    with pytest.raises(ValueError, match=r"times\[2\] = 5 ps is earlier than times\[1\]"):
        tf.MemorySource(np.array([1, 10, 5]), np.array([1, 1, 1]))
    with pytest.raises(OSError, match="missing.raw"):
        tf.RawFileSource("/nonexistent/missing.raw")
    with pytest.raises(ValueError, match="unknown source kind 'synthetc'"):
        tf.make_source("synthetc")


def test_arguments_of_the_wrong_kind_are_named(scratch):
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    with pytest.raises(TypeError, match=r"Counter\(\): the first argument must be a tagflow "
                                        r"Graph, got NoneType"):
        tf.Counter(None, [1])
    with pytest.raises(TypeError, match=r"Counter\(\): name must be a str, got int 5"):
        tf.Counter(graph, [1], name=5)
    for parallel, shown in ((1.5, "float 1.5"), ("2", "str '2'"), (None, "NoneType None"),
                            (True, "bool")):
        with pytest.raises(TypeError, match=r"parallel must be an integer \(1 to 256\), got " +
                           shown):
            tf.Countrate(graph, [1], parallel=parallel)
    herald = tf.DelayedChannel(graph, 1, 100)
    for make, key, expected in ((lambda: tf.Counter(graph, [1], herald, 3), "binwidth",
                                 "an integer"),
                                (lambda: tf.Correlation(graph, 1, 2, n_bins=herald), "n_bins",
                                 "an integer"),
                                (lambda: tf.FrequencyStability(graph, 3, [herald]), "steps",
                                 "a list of integers")):
        with pytest.raises(TypeError, match=f"argument '{key}': a virtual channel is a channel, "
                                            f"not {expected}"):
            make()
    assert graph.measurements == []
    with pytest.raises(ValueError, match=r"threads 10000000 is invalid \(valid: 0 for all cores, "
                                         r"or 1..1024\)"):
        tf.Graph(tf.SyntheticSource(duration_ps=10**9), threads=10**7)
    for times, message in (([-2**63, 0], r"tag 0 at -9223372036854775808 ps is invalid"),
                           ([0, 2**62 + 1], r"tag 1 at 4611686018427387905 ps is invalid")):
        with pytest.raises(ValueError, match=message + r" \(valid: -2\^62..2\^62 ps"):
            tf.MemorySource(times, [1, 2])
    # Paths as path objects, wherever a path is taken.
    recording = scratch / "path.tags"
    tf.FileWriter(graph, recording, [1, 2])
    graph.run()
    tf.write_hdf5(scratch / "path.h5", graph)
    replay = tf.Graph(tf.FileReader(recording))
    counts = tf.Countrate(replay, [1, 2])
    replay.run()
    assert counts.getCountsTotal().sum() > 0 and (scratch / "path.h5").stat().st_size > 0
    # A FileWriter onto the graph's own input, or onto another writer's file, is refused
    # before it empties the file.
    size = recording.stat().st_size
    with pytest.raises(ValueError, match="is open in this process .* writing it would destroy it"):
        tf.FileWriter(replay, recording, [1])
    assert recording.stat().st_size == size
    tf.FileWriter(replay, scratch / "copy.tags", [1])
    with pytest.raises(ValueError, match="copy.tags' is open in this process"):
        tf.FileWriter(replay, str(scratch / "copy.tags"), [2])


def test_an_empty_table_is_a_table():
    # overflow=[] is no overflow at all: the stream of the source without the key.
    with_empty = tf.Graph(tf.SyntheticSource(duration_ps=10**9, overflow=[]))
    stream = tf.TagStream(with_empty, channels=[1, 2, 3])
    with_empty.run()
    tags = stream_of(10**9)
    np.testing.assert_array_equal(stream.getData(), tags[np.isin(tags["channel"], [1, 2, 3])])
    with pytest.raises(ValueError, match="channels must not be empty"):
        tf.SyntheticSource(duration_ps=10**9, channel=[])


def test_a_source_feeds_one_graph():
    source = tf.SyntheticSource(duration_ps=10**9)
    first = tf.Graph(source)
    with pytest.raises(ValueError, match="this source already feeds another graph"):
        tf.Graph(source)
    del first
    second = tf.Graph(source)
    counts = tf.Countrate(second, [1])
    second.run()
    assert counts.getCountsTotal()[0] > 0


def test_a_marker_too_long_is_refused_at_once(scratch):
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    writer = tf.FileWriter(graph, str(scratch / "m.tags"), [1])
    with pytest.raises(ValueError, match=r"FileWriter 'FileWriter': marker of 1048577 bytes is "
                                         r"too long \(valid: up to 1048576 bytes\)"):
        writer.setMarker("x" * (2**20 + 1))
    writer.setMarker("fits")
    graph.run()


def memory_stream(times, channels):
    graph = tf.Graph(tf.MemorySource(times, channels))
    stream = tf.TagStream(graph, [1, 2, -3])
    graph.run()
    tags = stream.getData()
    return tags["time"].tolist(), tags["channel"].tolist()


def test_memory_source_takes_whole_numbers_only():
    # Integers of any dtype, lists of ints, and floats that are whole numbers are taken exactly.
    big = 2**61 + 2**10  # a float64 holds it exactly
    for times, channels in ((np.array([1, 10, big], np.int64), np.array([1, 2, -3], np.int8)),
                            (np.array([1, 10, 20], np.uint16), np.array([1, 2, 1], np.uint32)),
                            ([1, 10, big], [1, 2, -3]),
                            (np.array([1.0, 10.0, big]), np.array([1.0, 2.0, -3.0], np.float32)),
                            (np.array([1, 10, 20], np.int64)[::-1][::-1], [1.0, 2, 1])):
        expected_times = [1, 10, int(times[2])]
        assert memory_stream(times, channels) == (expected_times, [int(c) for c in channels])
    assert memory_stream([], []) == ([], [])

    bad_values = (
        ([0, 1.5, 3], [1, 1, 1], r"times\[1\] = 1\.5 is not a whole number of ps"),
        (np.array([0.0, 2.0, np.nan]), [1, 1, 1], r"times\[2\] = nan is not a whole number of ps"),
        (np.array([-np.inf, 0.0]), [1, 1], r"times\[0\] = -inf is not a whole number of ps"),
        (np.array([0.0, 1e19]), [1, 1],
         r"times\[1\] = 1e\+19 is out of range \(valid: 64-bit signed integers\)"),
        (np.array([0, 2**63], np.uint64), [1, 1],
         r"times\[1\] = 9223372036854775808 is out of range \(valid: 64-bit signed integers\)"),
        ([0, 2**70], [1, 1],
         r"times\[1\] = 1180591620717411303424 is out of range \(valid: 64-bit signed integers\)"),
        ([0, 1, 2], [1, 2.5, 1], r"channels\[1\] = 2\.5 is not a whole number \(valid"),
        ([0, 1], np.array([1.0, np.nan]), r"channels\[1\] = nan is not a whole number \(valid"),
        ([0, 1], np.array([1.0, 2.0**31]),
         r"channels\[1\] = 2147483648\.0 is out of range \(valid: 32-bit signed integers\)"),
        ([0, 1], np.array([1, -2**31 - 1]),
         r"channels\[1\] = -2147483649 is out of range \(valid: 32-bit signed integers\)"),
    )
    for times, channels, message in bad_values:
        with pytest.raises(ValueError, match=message):
            tf.MemorySource(times, channels)
    for times, channels, message in (
            ([0, None], [1, 1], r"times\[1\] = None is not a number"),
            (np.array([True, False]), [1, 1], r"times must hold numbers, got dtype bool"),
            ([0, 1], ["1", "2"], r"channels must hold numbers, got dtype <U1"),
            (None, None, r"times must be a 1-d array or list, got NoneType"),
            ([0, 1], np.ones((2, 1)), r"channels must be a 1-d array or list, got 2-d array")):
        with pytest.raises(TypeError, match=message):
            tf.MemorySource(times, channels)
    with pytest.raises(ValueError, match=r"must have the same length \(got 2 and 1 elements\)"):
        tf.MemorySource([0, 1], [1])
    # The order of the tags is checked as before.
    with pytest.raises(ValueError, match=r"times\[2\] = 5 ps is earlier than times\[1\] = 10 ps"):
        tf.MemorySource(np.array([1.0, 10.0, 5.0]), [1, 1, 1])


def test_virtual_channel_of_another_graph_is_refused():
    first = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    second = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    foreign = tf.DelayedChannel(first, 1, 5)
    own = tf.DelayedChannel(second, 2, 5)
    assert foreign.getChannel() == own.getChannel()  # the same number, another channel
    refused = r"argument '{}': DelayedChannel 'DelayedChannel' \(channel {}\) belongs to another graph"
    number = foreign.getChannel()
    for make, key in ((lambda: tf.Countrate(second, [foreign]), "channels"),
                      (lambda: tf.Countrate(second, np.array([own, foreign])), "channels"),
                      (lambda: tf.Correlation(second, 1, foreign), "channel_2"),
                      (lambda: tf.Countrate(second, [foreign], parallel=2), "channels"),
                      (lambda: tf.DelayedChannel(second, foreign, 5), "input_channel")):
        with pytest.raises(ValueError, match=refused.format(key, number)):
            make()
    assert second.measurements == []
    # Its own channel objects and channel numbers stay allowed.
    by_object = tf.Countrate(second, [own])
    by_number = tf.Countrate(second, [number])
    plain = tf.Countrate(second, [2])
    second.run()
    assert by_object.getCountsTotal()[0] == by_number.getCountsTotal()[0]
    assert by_object.getCountsTotal()[0] == plain.getCountsTotal()[0] > 0


def test_custom_measurement_without_process_is_refused():
    class Forgetful(tf.CustomMeasurement):
        def results(self):
            return {}

    class Counting(Forgetful):  # a subclass that defines it below one that does not
        def process(self, tags):
            self.tags = getattr(self, "tags", 0) + len(tags)

    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    message = r"Forgetful must define process\(self, tags\)"
    with pytest.raises(TypeError, match=message):
        Forgetful(graph)
    with pytest.raises(TypeError, match=r"CustomMeasurement must define process\(self, tags\)"):
        tf.CustomMeasurement(graph)
    assert graph.measurements == []
    counting = Counting(graph)
    profile = graph.run()
    assert counting.tags == profile["tags"] > 0


def coincidence_counts(make_groups):
    graph = tf.Graph(tf.SyntheticSource(seed=2, duration_ps=2 * 10**10))
    coincidences = make_groups(graph)
    rates = tf.Countrate(graph, coincidences.getChannels())
    graph.run()
    return coincidences.parameters, rates.getCountsTotal()


def test_coincidence_groups_as_one_list():
    # groups=[[...], ...] (positional too, or a numpy array) is group_0=..., group_1=...
    numbered = coincidence_counts(
        lambda g: tf.Coincidences(g, group_0=[1, 2], group_1=[1, 3], coincidence_window=5000))
    assert numbered[1].sum() > 0
    for make in (lambda g: tf.Coincidences(g, groups=[[1, 2], [1, 3]], coincidence_window=5000),
                 lambda g: tf.Coincidences(g, [[1, 2], [1, 3]], 5000),
                 lambda g: tf.Coincidences(g, np.array([[1, 2], [1, 3]]), 5000)):
        parameters, counts = coincidence_counts(make)
        assert parameters == numbered[0]
        assert np.array_equal(counts, numbered[1])
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    with pytest.raises(TypeError, match=r"argument 'groups': expected a list of channel lists"):
        tf.Coincidences(graph, [1, 2])
    with pytest.raises(TypeError, match=r"both 'groups' and numbered group_N"):
        tf.Coincidences(graph, [[1, 2]], group_1=[3, 4])
    with pytest.raises(ValueError, match=r"group_0"):
        tf.Coincidences(graph, [[1]])


@pytest.mark.parametrize("results, message", [
    (5, r"CustomMeasurement 'Bad': results\(\) returned int \(valid: a dict of numeric arrays"),
    ({"a": ["x"]}, r"results\(\)\['a'\] holds <U1 values \(valid: integers, floats or bools\)"),
    ({"a": [object()]}, r"results\(\)\['a'\] holds object values"),
])
def test_custom_results_that_are_not_numeric_arrays(results, message):
    class Bad(tf.CustomMeasurement):
        def process(self, tags):
            pass

        def results(self):
            return results

    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    bad = Bad(graph)
    graph.run()
    with pytest.raises(TypeError, match=message):
        bad.getResults()


def test_custom_results_beyond_signed_integers_are_refused():
    class Huge(tf.CustomMeasurement):
        def process(self, tags):
            pass

        def results(self):
            return {"fits": np.array([2**63 - 1], np.uint64),
                    "wraps": np.array([1, 2**64 - 1], np.uint64)}

    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    huge = Huge(graph)
    graph.run()
    with pytest.raises(ValueError, match=r"results\(\)\['wraps'\] holds 18446744073709551615 "
                                         r"\(valid: integers up to 2\^63-1\)"):
        huge.getResults()


def test_results_onto_a_full_disk_fail_cleanly(scratch):
    # A file size limit fails writes as a full disk does. The interpreter must report the error,
    # keep the earlier file, and exit normally (HDF5's clean-up at exit once crashed here).
    path = scratch / "results.h5"
    path.write_bytes(b"earlier")
    script = f"""
import tagflow as tf
graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
tf.Counter(graph, list(range(1, 9)), binwidth=1000, n_values=4000)
graph.run()
try:
    tf.write_hdf5({str(path)!r}, graph)
except OSError as error:
    print("refused:", error)
"""

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          preexec_fn=limit_file_size, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"refused: cannot write results file '{path}'" in done.stdout
    assert "File too large" in done.stdout
    assert path.read_bytes() == b"earlier"
    assert [p.name for p in scratch.iterdir()] == ["results.h5"]


def test_names_are_checked_before_the_node_is_made(scratch):
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    tf.Countrate(graph, [1], name="rates")
    # A FileWriter creates its file when it is made: a refused name must leave none.
    for name, message in (("rates", r"duplicate measurement name 'rates'"),
                          ("a/b", r"measurement name 'a/b' cannot name a group"),
                          ("profile", r"measurement name 'profile' cannot name a group")):
        with pytest.raises(ValueError, match=message):
            tf.FileWriter(graph, scratch / "w.tags", [1], name=name)
        assert not (scratch / "w.tags").exists()
    tf.DelayedChannel(graph, 1, 10, name="late")
    with pytest.raises(ValueError, match=r"duplicate virtual channel name 'late'"):
        tf.DelayedChannel(graph, 2, 10, name="late")
    # Numbered names step over one taken by hand.
    tf.Countrate(graph, [2], name="Countrate")
    tf.Countrate(graph, [2], name="Countrate_2")
    assert tf.Countrate(graph, [3]).name == "Countrate_3"


def test_merge_stream_files_shifts_and_orders_both_recordings(scratch):
    rng = np.random.default_rng(5)
    recorded = []
    for name, channels in (("a.tags", [1, 2]), ("b.tags", [1, -1])):
        times = np.sort(rng.integers(0, 10**9, 20000))
        channel = rng.choice(channels, len(times))
        graph = tf.Graph(tf.MemorySource(times, channel, begin_time=0, end_time=10**9))
        tf.FileWriter(graph, scratch / name, channels)
        graph.run()
        recorded.append((times, channel))
    summary = tf.mergeStreamFiles(scratch / "m.tags", [scratch / "a.tags", scratch / "b.tags"],
                                  channel_offsets=[0, 2], time_offsets=[0, 300_000_000])
    assert summary == {"tags": 40000, "bytes": (scratch / "m.tags").stat().st_size,
                       "begin": 0, "end": 1_300_000_000}
    (times_a, channels_a), (times_b, channels_b) = recorded
    times = np.concatenate([times_a, times_b + 300_000_000])
    channels = np.concatenate([channels_a, channels_b + 2 * np.sign(channels_b)])
    order = np.lexsort((channels, times))
    replay = tf.Graph(tf.FileReader(scratch / "m.tags"))
    stream = tf.TagStream(replay, channels=[1, 2, 3, -3], max_tags=10**6)
    replay.run()
    merged = stream.getData()
    np.testing.assert_array_equal(merged["time"], times[order])
    np.testing.assert_array_equal(merged["channel"], channels[order])
    with pytest.raises(ValueError, match="1 time offsets for 2 inputs"):
        tf.mergeStreamFiles(scratch / "n.tags", [scratch / "a.tags"] * 2, time_offsets=[5])
    # The same merge as a source: the stream a graph sees is the merged file's.
    source = tf.MergedSource([{"kind": "tagfile", "path": scratch / "a.tags"},
                              {"kind": "tagfile", "path": scratch / "b.tags",
                               "channel_offset": 2, "time_offset_ps": 300_000_000}])
    live = tf.Graph(source)
    live_stream = tf.TagStream(live, channels=[1, 2, 3, -3], max_tags=10**6)
    live.run()
    np.testing.assert_array_equal(live_stream.getData(), merged)


def test_file_writer_split_to_a_new_file_keeps_every_tag(scratch):
    rng = np.random.default_rng(3)
    times = np.sort(rng.integers(0, 10**8, 20000))
    channels = rng.choice([1, 2], len(times))
    graph = tf.Graph(tf.MemorySource(times, channels, begin_time=0, end_time=10**8))
    writer = tf.FileWriter(graph, scratch / "first.tags", [1, 2])
    graph.run(3 * 10**7 + 17)
    writer.split(new_filename=str(scratch / "second.tags"))
    assert writer.getPath() == str(scratch / "second.tags")
    graph.run()
    writer.close()
    replay = tf.Graph(tf.FileReader([scratch / "first.tags", scratch / "second.tags"]))
    stream = tf.TagStream(replay, channels=[1, 2], max_tags=10**6)
    replay.run()
    got = stream.getData()
    np.testing.assert_array_equal(got["time"], times)
    np.testing.assert_array_equal(got["channel"], channels)
    with pytest.raises(ValueError, match="that is the set being written"):
        writer.split(str(scratch / "second.tags"))


def test_input_delays_move_a_channel_in_any_source(scratch):
    rng = np.random.default_rng(9)
    times = np.sort(rng.integers(0, 10**8, 30000))
    channels = rng.choice([1, 2, -2], len(times))
    graph = tf.Graph(tf.MemorySource(times, channels, begin_time=0, end_time=10**8))
    tf.FileWriter(graph, scratch / "d.tags", [1, 2, -2])
    graph.run()
    delays = {2: -2500, -2: 40_000}
    shifted = times + np.where(channels == 2, -2500, np.where(channels == -2, 40_000, 0))
    order = np.lexsort((channels, shifted))
    for source in (tf.FileReader(scratch / "d.tags", input_delays=delays),
                   tf.FileReader([scratch / "d.tags"], input_delays=delays)):
        assert "with input delays 2: -2500 ps, -2: 40000 ps" in source.describe()
        replay = tf.Graph(source)
        stream = tf.TagStream(replay, channels=[1, 2, -2], max_tags=10**6)
        replay.run()
        delayed = stream.getData()
        np.testing.assert_array_equal(delayed["time"], shifted[order])
        np.testing.assert_array_equal(delayed["channel"], channels[order])
    with pytest.raises(ValueError, match=r"input delay of channel 9 is invalid: the source has "
                       r"no such channel \(valid: 1, 2, 3, 4, 5, 6, 7, 8\)"):
        tf.SyntheticSource(input_delays={5: 1, 9: 2})
    with pytest.raises(ValueError, match=r"input_delays \[2\] is invalid \(valid: a dict"):
        tf.SyntheticSource(input_delays=[2])


def test_a_clear_that_chains_to_its_base_clears_both():
    class Base(tf.CustomMeasurement):
        def process(self, tags):
            self.n = getattr(self, "n", 0) + len(tags)

        def clear(self):
            self.n = 0

    class Child(Base):
        def process(self, tags):
            super().process(tags)
            self.m = getattr(self, "m", 0) + 1

        def clear(self):
            super().clear()
            self.m = 0

    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**9))
    child = Child(graph)
    graph.run()
    assert child.n > 0 and child.m > 0
    finished = threading.Event()
    threading.Thread(target=lambda: (child.clear(), finished.set()), daemon=True).start()
    assert finished.wait(20), "clear() chaining to its base's hung"
    assert child.n == 0 and child.m == 0


def test_results_written_while_a_custom_measurement_runs(scratch):
    class Slow(tf.CustomMeasurement):
        def process(self, tags):
            time.sleep(0.001)

        def results(self):
            return {"x": np.zeros(3)}

    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**13))
    Slow(graph)
    tf.Countrate(graph, channels=[1, 2])
    graph.start()
    try:
        written = threading.Event()
        threading.Thread(target=lambda: (tf.write_hdf5(scratch / "running.h5", graph),
                                         written.set()), daemon=True).start()
        assert written.wait(30), "write_hdf5 during a run hung"
    finally:
        graph.stop()
        graph.wait()
    assert (scratch / "running.h5").stat().st_size > 0


def test_waits_without_limit_and_from_two_threads():
    # Two threads waiting for one run (of 0.2 s, so that both wait while it runs) both get
    # its profile.
    one_channel = [{"channel": 1, "kind": "poisson", "rate": 1e5}]
    for _ in range(5):
        graph = tf.Graph(tf.SyntheticSource(duration_ps=2 * 10**10, speed=0.1, channel=one_channel))
        tf.Countrate(graph, [1])
        graph.start()
        profiles = {}
        other = threading.Thread(target=lambda: profiles.update(other=graph.wait(60)))
        other.start()
        profiles["main"] = graph.wait(60)
        other.join()
        assert isinstance(profiles["main"], dict) and profiles["other"] == profiles["main"]
    # An infinite timeout waits for the end; NaN is refused.
    graph = tf.Graph(tf.SyntheticSource(duration_ps=10**13, speed=10.0, channel=one_channel))
    rate = tf.Countrate(graph, [1])
    graph.start()
    with pytest.raises(ValueError, match="wait timeout nan is invalid"):
        graph.wait(float("nan"))
    rate.startFor(10**11)
    assert rate.waitUntilFinished(float("inf")) is True
    assert isinstance(graph.wait(float("inf")), dict)
    # A bad duration is refused by start() itself, leaving the graph ready to run.
    with pytest.raises(ValueError, match=r"run duration -5 ps is invalid"):
        graph.start(-5)
    assert not graph.isRunning()
    assert isinstance(graph.run(10**8), dict)


def test_integers_beyond_64_bits_and_numpy_scalars_are_named():
    source = tf.SyntheticSource(duration_ps=10**9)
    graph = tf.Graph(source)
    rate = tf.Countrate(graph, [1])
    for make, message in (
            (lambda: tf.Graph(tf.SyntheticSource(duration_ps=10**9), threads=2**40),
             r"threads 1099511627776 is invalid \(valid: 0 for all cores, or 1..1024\)"),
            (lambda: tf.Graph(tf.SyntheticSource(duration_ps=10**9), max_blocks_in_flight=2**70),
             r"max_blocks_in_flight 1180591620717411303424 is invalid \(valid: 1..4096\)"),
            (lambda: tf.Countrate(graph, [1], parallel=2**31),
             r"parallel 2147483648 is invalid \(valid: 1 to 256\)"),
            (lambda: graph.start(2**70), r"run duration 1180591620717411303424 is invalid"),
            (lambda: rate.startFor(2**70), r"startFor duration 1180591620717411303424 is invalid")):
        with pytest.raises(ValueError, match=message):
            make()
    # numpy's floats are numbers; its bools are no channels.
    counter = tf.Counter(graph, [1], binwidth=np.int64(1000), n_values=np.int32(10))
    assert counter.parameters["n_values"] == 10
    tf.HistogramLogBins(graph, 1, 2, exp_start=np.float32(-12.0), exp_stop=-6, n_bins=10)
    with pytest.raises(TypeError, match="a list may hold only numbers and channels"):
        tf.Countrate(graph, [np.bool_(True)])


def test_the_interpreter_exits_cleanly_with_a_python_measurement_running():
    # The run's thread would take the GIL of an interpreter going away; the exit stops it.
    script = """
import time
import tagflow as tf

class Slow(tf.CustomMeasurement):
    def process(self, tags):
        time.sleep(0.001)

graph = tf.Graph(tf.SyntheticSource(duration_ps=10**13))
Slow(graph)
graph.start()
time.sleep(0.2)
print("leaving", flush=True)
"""
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0 and done.stdout == "leaving\n", done.stderr


def test_a_list_of_files_is_read_as_one_stream(scratch):
    # Two recordings of one stream, split at 0.6 ms: the list replays the whole stream.
    times = np.sort(np.random.default_rng(9).integers(0, 10**9, 30000))
    channels = np.where(times % 3 == 0, 1, 2)
    cut = np.searchsorted(times, 600_000_000)
    for name, part, begin, end in (("first.tags", slice(None, cut), 0, 600_000_000),
                                   ("second.tags", slice(cut, None), 600_000_000, 10**9)):
        graph = tf.Graph(tf.MemorySource(times[part], channels[part], begin_time=begin,
                                         end_time=end))
        tf.FileWriter(graph, scratch / name, [1, 2])
        graph.run()
    replay = tf.Graph(tf.FileReader([scratch / "first.tags", scratch / "second.tags"],
                                    block_size=1000))
    stream = tf.TagStream(replay, [1, 2], max_tags=10**6)
    profile = replay.run()
    tags = stream.getData()
    np.testing.assert_array_equal(tags["time"], times)
    np.testing.assert_array_equal(tags["channel"], channels)
    assert profile["stream_duration_ps"] == 10**9


def test_delay_and_coincidence_window_changed_between_runs(scratch):
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.integers(1, 400, 20_000))
    channels = rng.integers(1, 3, times.size)
    end, cut = int(times[-1]) + 1, int(times[times.size // 2])
    graph = tf.Graph(tf.MemorySource(times, channels, block_size=64, begin_time=0, end_time=end))
    delayed = tf.DelayedChannel(graph, 1, 1000)
    pairs = tf.Coincidence(graph, [1, 2], coincidence_window=50)
    copies = tf.TagStream(graph, [delayed], max_tags=10**6)
    coincidences = tf.TagStream(graph, [pairs], max_tags=10**6)
    graph.run(cut)
    first_copies, first_coincidences = copies.getData()["time"], coincidences.getData()["time"]
    delayed.setDelay(200)
    pairs.setCoincidenceWindow(300)
    assert (delayed.getDelay(), pairs.getCoincidenceWindow()) == (200, 300)
    graph.run()
    # Each run starts afresh: copies owed at the cut are not carried over.
    early = times[(channels == 1) & (times < cut)] + 1000
    late = times[(channels == 1) & (times >= cut)] + 200
    np.testing.assert_array_equal(first_copies, early[early < cut])
    np.testing.assert_array_equal(copies.getData()["time"], late[late < end])

    def brute_force_pairs(lo, hi, window):
        found, last = [], {1: None, 2: None}
        for time, channel in zip(times.tolist(), channels.tolist()):
            if lo <= time < hi:
                other = last[3 - channel]
                if other is not None and time - other <= window:
                    found.append(time)
                last[channel] = time
        return np.array(found, dtype=np.int64)

    assert min(first_copies.size, first_coincidences.size) > 500
    np.testing.assert_array_equal(first_coincidences, brute_force_pairs(0, cut, 50))
    np.testing.assert_array_equal(coincidences.getData()["time"], brute_force_pairs(cut, end, 300))
    # The changes are logged from the first block that used them, and written with the results.
    assert delayed.setting_changes() == [("delay", 200, cut)]
    assert pairs.setting_changes() == [("coincidence_window", 300, cut)]
    tf.write_hdf5(scratch / "changed.h5", graph)
    with h5py.File(scratch / "changed.h5", "r") as results:
        group = results[f"virtual_channels/{delayed.name}"]
        assert group.attrs["kind"] == "DelayedChannel" and group.attrs["delay"] == 1000
        assert list(group.attrs["output_channels"]) == [delayed.getChannel()]
        assert list(group["delay_changes"]) == [200] and list(group["delay_changed_from"]) == [cut]
        windows = results[f"virtual_channels/{pairs.name}/coincidence_window_changes"]
        assert list(windows) == [300] and windows.attrs["unit"] == "ps"
    for call, message in ((lambda: delayed.setDelay(-5), r"delay -5 ps is invalid \(valid: 0\.\."),
                          (lambda: pairs.setCoincidenceWindow(0),
                           r"coincidence_window 0 ps is invalid "
                           r"\(valid: 1\.\.4611686018427387904\)")):
        with pytest.raises(ValueError, match=message):
            call()


def test_first_virtual_channel_keeps_source_channels_apart():
    # A memory source lists no channels: its channel 1000 is where virtual channels begin.
    times = np.arange(0, 40_000, 100, dtype=np.int64)
    channels = np.where(np.arange(times.size) % 2 == 0, 1, 1000)
    graph = tf.Graph(tf.MemorySource(times, channels))
    delayed = tf.DelayedChannel(graph, 1, 10)
    assert delayed.getChannel() == 1000
    tf.Countrate(graph, [1, delayed])
    with pytest.raises(ValueError, match=r"channel 1000 .*first_virtual_channel"):
        graph.run()
    graph = tf.Graph(tf.MemorySource(times, channels), first_virtual_channel=2000)
    delayed = tf.DelayedChannel(graph, 1, 10)
    assert delayed.getChannel() == 2000
    rates = tf.Countrate(graph, [1, 1000, delayed])
    graph.run()
    assert list(rates.getCountsTotal()) == [200, 200, 200]
    with pytest.raises(ValueError, match=r"first_virtual_channel .*-1"):
        tf.Graph(tf.MemorySource(times, channels), first_virtual_channel=-1)


def test_nul_characters_and_bytes_are_refused(scratch):
    # A NUL would end a path for the system, which would then write or read another file.
    times = np.arange(0, 10_000, 100, dtype=np.int64)
    graph = tf.Graph(tf.MemorySource(times, np.ones(times.size, np.int32)))
    with pytest.raises(ValueError,
                       match=r"FileWriter .*path holds a NUL character at position [0-9]+"):
        tf.FileWriter(graph, str(scratch / "w") + "\x00x.tags", [1])
    with pytest.raises(ValueError, match=r"NUL character"):
        tf.FileReader(str(scratch / "w") + "\x00x.tags")
    tf.Countrate(graph, [1])
    graph.run()
    with pytest.raises(ValueError, match=r"the path for the results holds a NUL character"):
        tf.write_hdf5(str(scratch / "a") + "\x00b.h5", graph)
    assert not any(scratch.iterdir())
    with pytest.raises(ValueError, match=r"address .* is invalid"):
        tf.Server(graph, port=0, address="127.0.0.1\x00junk")
    # Bytes are a sequence of small integers, never meant as channel numbers.
    for value in (b"1", bytearray(b"12")):
        with pytest.raises(TypeError, match=r"argument 'channels': .*got (bytes|bytearray)"):
            tf.Countrate(graph, value)
