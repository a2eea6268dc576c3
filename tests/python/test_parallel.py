"""Splitting by time from Python: parallel=N shards give exactly the counts of one node, keep
the kind's getters and lifecycle; runRange() over consecutive ranges of a recording, with the
partial states carried as bytes, merges into what one pass counts; bad uses get the C++
messages."""

import numpy as np
import pytest
import tagflow as tf


def demo_source(seed=3, duration_ps=20 * 10**9):
    return tf.SyntheticSource(seed=seed, duration_ps=duration_ps)


def test_parallel_shards_equal_one_node():
    graph = tf.Graph(demo_source(), threads=2)
    one = tf.Correlation(graph, 2, 1, binwidth=10, n_bins=2000, name="one")
    two = tf.Correlation(graph, 2, 1, binwidth=10, n_bins=2000, name="two", parallel=2)
    hlb_one = tf.HistogramLogBins(graph, 2, 1, exp_start=-11, exp_stop=-7, n_bins=300,
                                  name="hlb_one")
    hlb_three = tf.HistogramLogBins(graph, 2, 1, exp_start=-11, exp_stop=-7, n_bins=300,
                                    name="hlb_three", parallel=3)
    profile = graph.run()

    assert isinstance(two, tf.Correlation) and two.parallel == 2 and one.parallel == 1
    assert one.getData().sum() > 1000
    np.testing.assert_array_equal(one.getData(), two.getData())
    np.testing.assert_array_equal(one.getIndex(), two.getIndex())
    np.testing.assert_array_equal(one.getDataNormalized(), two.getDataNormalized())
    np.testing.assert_array_equal(hlb_one.getData(), hlb_three.getData())
    np.testing.assert_array_equal(hlb_one.getDataNormalizedG2(), hlb_three.getDataNormalizedG2())
    assert two.getCaptureDuration() == one.getCaptureDuration()  # the shards, summed
    np.testing.assert_array_equal(two.getResults()["data"], one.getResults()["data"])
    names = [node["name"] for node in profile["nodes"]]
    assert {"two[0]", "two[1]", "hlb_three[0]", "hlb_three[1]", "hlb_three[2]"} <= set(names)


def test_parallel_lifecycle_reaches_every_shard():
    graph = tf.Graph(demo_source(duration_ps=5 * 10**9), threads=2)
    rate = tf.Countrate(graph, [1, 2, 3], parallel=2)
    graph.run()
    assert rate.getCountsTotal().sum() > 0
    rate.clear()
    assert rate.getCountsTotal().sum() == 0
    assert rate.getCaptureDuration() == 0
    rate.stop()
    assert not rate.isRunning()
    graph.remove(rate)
    assert graph.measurements == []


def test_parallel_is_refused_where_it_cannot_hold():
    graph = tf.Graph(demo_source())
    with pytest.raises(ValueError, match="merge only in time order"):
        tf.Counter(graph, [1, 2], binwidth=10**9, n_values=10, parallel=2)
    with pytest.raises(ValueError, match="parallel 0 is invalid"):
        tf.Countrate(graph, [1], parallel=0)
    with pytest.raises(TypeError, match="parallel"):
        tf.DelayedChannel(graph, 1, 1000, parallel=2)


def test_parallel_file_writer_is_refused_before_its_file_is_made(scratch):
    graph = tf.Graph(demo_source())
    path = scratch / "shards.tags"
    with pytest.raises(ValueError, match="FileWriter cannot be split by time"):
        tf.FileWriter(graph, str(path), channels=[1], parallel=2)
    assert list(scratch.iterdir()) == []
    with pytest.raises(ValueError, match="FileWriter cannot be split by time"):
        tf._core.ShardedMeasurement("FileWriter", graph, "w", {"path": str(path),
                                                               "channels": [1]}, 2)
    assert list(scratch.iterdir()) == []


@pytest.fixture
def recording(scratch):
    path = str(scratch / "rec.tags")
    graph = tf.Graph(demo_source(seed=8, duration_ps=40 * 10**9))
    tf.FileWriter(graph, path, channels=[1, 2, 3, 4])
    graph.run()
    return path


def measure(source, make, time_range=None):
    graph = tf.Graph(source)
    measurements = make(graph)
    if time_range is None:
        graph.run()
    else:
        graph.runRange(*time_range)
    return measurements


def make_all(graph):
    return [tf.Counter(graph, [1, 2, 3], binwidth=700_000_000, n_values=100),
            tf.Correlation(graph, 2, 1, binwidth=20, n_bins=1000),
            tf.HistogramLogBins(graph, 3, 1, exp_start=-10, exp_stop=-6, n_bins=100),
            tf.FrequencyStability(graph, 3, steps=[1, 10, 100], average=10)]


def test_ranges_of_a_recording_merge_into_one_pass(recording):
    whole = measure(tf.FileReader(recording), make_all)
    begin, end = tf.FileReader(recording).timeSpan()
    assert end - begin == 40 * 10**9
    cuts = [begin, begin + 13_333_333_337, begin + 27 * 10**9, end]
    merged = None
    for first, last in zip(cuts, cuts[1:]):
        part = measure(tf.FileReader(recording), make_all, (first, last))
        states = [bytes(m.getPartialState()) for m in part]  # what another process would send
        if merged is None:
            merged = part
        else:
            for m, state in zip(merged, states):
                m.mergePartialState(state)
    counter, correlation, histogram, stability = merged
    assert whole[0].getDataTotalCounts().sum() > 0
    np.testing.assert_array_equal(whole[0].getData(), counter.getData())
    np.testing.assert_array_equal(whole[1].getData(), correlation.getData())
    np.testing.assert_array_equal(whole[2].getData(), histogram.getData())
    # Each range is a series of its own (docs/parallel.md): the deviations lose the terms
    # across the two cuts, a few of about 10^4, and the groups after a cut begin at its edge.
    assert stability.getMeanPeriod() == pytest.approx(whole[3].getMeanPeriod(), rel=1e-9)
    np.testing.assert_allclose(whole[3].getADEV(), stability.getADEV(), rtol=0.02)


def test_range_misuse_gets_clear_errors(recording):
    source = tf.FileReader(recording)
    graph = tf.Graph(source)
    counter = tf.Counter(graph, [1], binwidth=10**9, n_values=10)
    begin, end = source.timeSpan()
    graph.runRange(begin, begin + 10**10)
    with pytest.raises(ValueError, match="after its stream has begun"):
        graph.runRange(begin + 10**10, end)
    with pytest.raises(ValueError, match="encoded results"):
        counter.mergePartialState(b"not a state")
    writer_graph = tf.Graph(tf.FileReader(recording))
    tf.FileWriter(writer_graph, recording + ".copy", channels=[1])
    with pytest.raises(ValueError, match="cannot be split by time"):
        writer_graph.runRange(begin, end)
    assert tf.SyntheticSource(duration_ps=10).timeSpan() is None
