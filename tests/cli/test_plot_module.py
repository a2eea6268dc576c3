"""Unit tests of tools/plot/tagflow_plot.py on HDF5 files written here with h5py.

Each plotter gets a group shaped like the measurement's results (including FrequencyStability
and PhaseNoise, which it must draw whatever writes them) and the test reads back what was drawn:
the lines' data must equal the datasets (non-finite values, and non-positive ones on log axes,
left out), the axes scales and unit labels must match. Then whole files: the images written,
their names, and every refused input with its message.
Run: /usr/bin/python3 tests/cli/test_plot_module.py
"""

import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "plot" / "tagflow_plot.py"
spec = importlib.util.spec_from_file_location("tagflow_plot", SCRIPT)
tp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tp)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def dataset(group, name, values, unit):
    d = group.create_dataset(name, data=values)
    d.attrs["unit"] = unit
    d.attrs["description"] = f"{name} for the test"
    return d


def measurement(parent, name, kind, **attrs):
    group = parent.create_group(name)
    group.attrs["kind"] = kind
    for key, value in attrs.items():
        group.attrs[key] = value
    return group


def lines_by_label(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def axis_with_ylabel(fig, text):
    matches = [ax for ax in fig.axes if text in ax.get_ylabel()]
    assert len(matches) == 1, [ax.get_ylabel() for ax in fig.axes]
    return matches[0]


# White phase noise of 1 ps rms on 1000-sample averages: the analytic slopes (ADEV ~ 1/tau,
# MDEV ~ tau^-1.5, time deviations ~ tau^-0.5); the values themselves only need to be positive.
TAU = np.logspace(-4, 2, 13)
DEVIATION_VALUES = {
    "adev": (np.sqrt(3) * 1e-12 / TAU, "1"),
    "mdev": (1e-12 * TAU ** -1.5, "1"),
    "hdev": (np.sqrt(10 / 3) * 1e-12 / TAU, "1"),
    "tdev": (1e-12 / np.sqrt(TAU * 1e4), "s"),
    "stdd": (np.sqrt(2) * 1e-12 * np.ones_like(TAU), "s"),
    "adev_scaled": (1e-12 * np.ones_like(TAU), "s"),
    "hdev_scaled": (1e-12 * np.ones_like(TAU), "s"),
}


def write_frequency_stability(parent):
    group = measurement(parent, "clock_stability", "FrequencyStability", channel=3,
                        steps=np.arange(1, 14), average=1000, trace_len=100)
    dataset(group, "tau", TAU, "s")
    for name, (values, unit) in DEVIATION_VALUES.items():
        values = values.copy()
        values[-2:] = np.nan  # steps longer than the data
        if name == "stdd":
            values[0] = 0.0  # not drawable on a log axis
        dataset(group, name, values, unit)
    t = np.arange(100) * 1e-4
    dataset(group, "trace_index", t, "s")
    dataset(group, "trace_phase", 1e-12 * np.sin(2 * np.pi * t / 5e-3), "s")
    dataset(group, "trace_frequency", 1e-9 * np.cos(2 * np.pi * t / 5e-3), "1")
    dataset(group, "trace_frequency_absolute", 1e-2 * np.cos(2 * np.pi * t / 5e-3), "Hz")
    return group


OFFSETS = np.concatenate([[0.0], np.logspace(0, 6, 50)])
CARRIERS = np.array([10e6, 5e6])


def phase_noise_rows():
    rows = np.array([-100 - 10 * np.log10(np.maximum(OFFSETS, 1e-3)),
                     -120 - 20 * np.log10(np.maximum(OFFSETS, 1e-3))])
    rows[1, 10] = np.nan
    return rows


def write_phase_noise(parent, name="pn", rows=None, channels=(1, 3)):
    rows = phase_noise_rows() if rows is None else rows
    group = measurement(parent, name, "PhaseNoise", channels=np.array(channels),
                        samples_per_octave=512)
    dataset(group, "offset", OFFSETS, "Hz")
    dataset(group, "phase_noise", rows, "dBc/Hz")
    dataset(group, "frequency", CARRIERS[:len(channels)], "Hz")
    dataset(group, "averaged_sequences", np.array([40, 40][:len(channels)], dtype=np.uint64), "1")
    return group


def write_counter(parent):
    group = measurement(parent, "counter", "Counter", channels=np.array([1, 2]),
                        binwidth=np.int64(1_000_000_000), n_values=np.int64(10),
                        bins_completed=np.int64(10))
    rates = np.array([np.full(10, 2e7), np.linspace(1e6, 2e6, 10)])
    mask = np.zeros(10, dtype=np.int8)
    mask[[3, 4]] = 1
    rates[:, mask == 1] = np.nan
    dataset(group, "data", np.nan_to_num(rates * 1e-3).astype(np.int64), "counts")
    dataset(group, "index", np.arange(10, dtype=np.int64) * 1_000_000_000, "ps")
    dataset(group, "data_normalized", rates, "Hz")
    dataset(group, "overflow_mask", mask, "1")
    return group


class PlotterTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.file = h5py.File(os.path.join(self.folder.name, "groups.h5"), "w")

    def tearDown(self):
        self.file.close()
        self.folder.cleanup()

    def test_frequency_stability_deviations_on_log_log_axes_without_nans(self):
        fig = tp.plot_frequency_stability(write_frequency_stability(self.file))
        relative = axis_with_ylabel(fig, "deviation (dimensionless)")
        time_domain = axis_with_ylabel(fig, "deviation [s]")
        for ax, names in ((relative, ["adev", "mdev", "hdev"]),
                          (time_domain, ["tdev", "stdd", "adev_scaled", "hdev_scaled"])):
            self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("log", "log"))
            self.assertEqual(ax.get_xlabel(), "tau [s]")
            lines = lines_by_label(ax)
            self.assertEqual(set(lines), {n.upper().replace("_", " ") for n in names})
            for name in names:
                values = self.file["clock_stability"][name][...]
                keep = np.isfinite(values) & (values > 0)
                line = lines[name.upper().replace("_", " ")]
                np.testing.assert_array_equal(line.get_xdata(), TAU[keep])
                np.testing.assert_array_equal(line.get_ydata(), values[keep])
        self.assertEqual(len(lines_by_label(time_domain)["STDD"].get_xdata()), len(TAU) - 3)
        group = self.file["clock_stability"]
        for name, label in (("trace_phase", "phase [s]"),
                            ("trace_frequency", "frequency (dimensionless)"),
                            ("trace_frequency_absolute", "frequency absolute [Hz]")):
            (line,) = axis_with_ylabel(fig, label).get_lines()
            np.testing.assert_array_equal(line.get_xdata(), group["trace_index"][...])
            np.testing.assert_array_equal(line.get_ydata(), group[name][...])
        title = fig._suptitle.get_text()
        for part in ("clock_stability (FrequencyStability)", "channel=3", "average=1000"):
            self.assertIn(part, title)

    def test_phase_noise_one_line_per_channel_on_a_log_offset_axis(self):
        fig = tp.plot_phase_noise(write_phase_noise(self.file))
        (ax,) = fig.axes
        self.assertEqual(ax.get_xscale(), "log")
        self.assertEqual(ax.get_xlabel(), "offset frequency [Hz]")
        self.assertEqual(ax.get_ylabel(), "L(f) [dBc/Hz]")
        lines = ax.get_lines()
        self.assertEqual([line.get_label() for line in lines],
                         ["channel 1, carrier 10 MHz", "channel 3, carrier 5 MHz"])
        for line, row in zip(lines, phase_noise_rows()):
            keep = np.isfinite(row) & (OFFSETS > 0)
            np.testing.assert_array_equal(line.get_xdata(), OFFSETS[keep])
            np.testing.assert_array_equal(line.get_ydata(), row[keep])
        self.assertIn("samples_per_octave=512", fig._suptitle.get_text())

    def test_phase_noise_of_one_channel_as_a_1d_dataset(self):
        row = phase_noise_rows()[0]
        fig = tp.plot_phase_noise(write_phase_noise(self.file, "pn1", row, channels=(4,)))
        (line,) = fig.axes[0].get_lines()
        self.assertEqual(line.get_label(), "channel 4, carrier 10 MHz")
        np.testing.assert_array_equal(line.get_ydata(), row[1:])

    def test_counter_rates_in_mhz_with_overflow_bins_marked(self):
        fig = tp.plot_counter(write_counter(self.file))
        (ax,) = fig.axes
        self.assertEqual(ax.get_ylabel(), "count rate [MHz]")
        self.assertEqual(ax.get_xlabel(), "time since the first bin [ms]")
        rates = self.file["counter/data_normalized"][...]
        lines = lines_by_label(ax)
        for label, row in zip(("channel 1", "channel 2"), rates):
            np.testing.assert_allclose(lines[label].get_xdata(), np.arange(10) + 0.5)
            np.testing.assert_allclose(lines[label].get_ydata(), row / 1e6, equal_nan=True)
        spans = [patch.get_xy()[:, 0] for patch in ax.patches]  # shaded overflow bins, in ms
        self.assertEqual(sorted((x.min(), x.max()) for x in spans), [(3.0, 4.0), (4.0, 5.0)])

    def test_countrate_bars_and_correlation_and_log_histogram_data(self):
        rate = measurement(self.file, "rate", "Countrate", channels=np.array([5, 6]),
                           capture_duration_ps=np.int64(2_000_000_000))
        dataset(rate, "data", np.array([1.5e3, 2.5e3]), "Hz")
        bars = tp.plot_countrate(rate).axes[0]
        self.assertEqual([p.get_height() for p in bars.patches], [1.5, 2.5])
        self.assertEqual(bars.get_ylabel(), "average count rate [kHz]")
        self.assertEqual([t.get_text() for t in bars.get_xticklabels()], ["channel 5", "channel 6"])

        g2 = measurement(self.file, "g2", "Correlation", channel_1=1, channel_2=2,
                         binwidth=np.int64(10), n_bins=np.int64(4))
        dataset(g2, "index", np.array([-20, -10, 0, 10], dtype=np.int64), "ps")
        dataset(g2, "data", np.array([1, 2, 9, 3], dtype=np.int64), "counts")
        dataset(g2, "data_normalized", np.array([0.5, 1.0, 4.5, np.nan]), "1")
        counts_ax, g2_ax = tp.plot_correlation(g2).axes
        np.testing.assert_allclose(counts_ax.get_lines()[0].get_xdata(), [-0.02, -0.01, 0, 0.01])
        np.testing.assert_array_equal(counts_ax.get_lines()[0].get_ydata(), [1, 2, 9, 3])
        np.testing.assert_array_equal(g2_ax.get_lines()[0].get_ydata(), [0.5, 1.0, 4.5, np.nan])

        log = measurement(self.file, "log", "HistogramLogBins", click_channel=2, start_channel=1,
                          exp_start=-12.0, exp_stop=-9.0, n_bins=np.int64(3))
        dataset(log, "bin_edges", np.array([1, 10, 100, 1000], dtype=np.int64), "ps")
        dataset(log, "data", np.array([0, 5, 7], dtype=np.uint64), "counts")
        dataset(log, "g2", np.array([np.nan, 2.0, 0.25]), "1")
        counts_ax, g2_ax = tp.plot_histogram_log_bins(log).axes
        self.assertEqual(g2_ax.get_xscale(), "log")
        stairs = g2_ax.patches[0].get_data()
        np.testing.assert_allclose(stairs.edges, [1e-12, 1e-11, 1e-10, 1e-9])
        np.testing.assert_array_equal(stairs.values, [np.nan, 2.0, 0.25])

    def test_unknown_kind_gets_one_panel_per_numeric_dataset(self):
        group = measurement(self.file, "future", "Mystery")
        dataset(group, "trace", np.arange(5.0), "V")
        dataset(group, "rows", np.arange(6.0).reshape(3, 2), "counts")
        dataset(group, "image", np.zeros((40, 3)), "1")
        group.create_dataset("names", data=["a", "b"])
        fig = tp.figure_for(group)
        self.assertEqual({ax.get_ylabel() for ax in fig.axes},
                         {"trace [V]", "rows [counts]", "row", "image (dimensionless)"})
        (line,) = axis_with_ylabel(fig, "trace [V]").get_lines()
        np.testing.assert_array_equal(line.get_ydata(), np.arange(5.0))
        self.assertEqual(len(axis_with_ylabel(fig, "rows [counts]").get_lines()), 3)

    def test_known_kind_missing_a_dataset_falls_back_to_the_generic_view(self):
        group = measurement(self.file, "partial", "Counter", channels=np.array([1]))
        dataset(group, "data", np.array([[1, 2, 3]]), "counts")
        messages = io.StringIO()
        with contextlib.redirect_stderr(messages):
            fig = tp.figure_for(group)
        self.assertIn("drawing a generic view", messages.getvalue())
        self.assertEqual(fig.axes[0].get_ylabel(), "data [counts]")

    def test_group_without_numeric_datasets_is_skipped_with_a_note(self):
        group = measurement(self.file, "empty", "Mystery")
        messages = io.StringIO()
        with contextlib.redirect_stderr(messages):
            self.assertIsNone(tp.figure_for(group))
        self.assertIn("/empty: skipped", messages.getvalue())

    def test_profile_bars_are_the_node_capacities(self):
        profile = self.file.create_group("profile")
        profile["node"] = np.array(["source", "counter", "g2"], dtype=h5py.string_dtype())
        profile["kind"] = np.array(["source", "Counter", "Correlation"], dtype=h5py.string_dtype())
        dataset(profile, "capacity_mtags_per_s", np.array([21.0, 1250.5, 0.0]), "MTags/s")
        profile.attrs["wall_mtags_per_s"] = 20.0
        (ax,) = tp.plot_profile(profile).axes
        self.assertEqual([p.get_width() for p in ax.patches], [21.0, 1250.5, 0.0])
        self.assertEqual([t.get_text() for t in ax.get_yticklabels()],
                         ["source (source)", "counter (Counter)", "g2 (Correlation)"])
        self.assertEqual(ax.get_xlabel(), "capacity: tags / busy time [MTags/s]")
        (wall,) = ax.get_lines()
        self.assertEqual(list(wall.get_xdata()), [20.0, 20.0])

    def test_si_prefixes(self):
        self.assertEqual(tp.si(1e7, "Hz"), "10 MHz")
        self.assertEqual(tp.si(2.5e-9, "s"), "2.5 ns")
        self.assertEqual(tp.si(0.0, "s"), "0 s")


def write_results_file(path):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "tagflow-results/1"
        write_frequency_stability(f)
        write_phase_noise(f)
        write_counter(f)
        measurement(f, "a b", "Mystery")["x"] = np.arange(3.0)
        profile = f.create_group("profile")
        profile["node"] = np.array(["source", "clock_stability"], dtype=h5py.string_dtype())
        profile["kind"] = np.array(["source", "FrequencyStability"], dtype=h5py.string_dtype())
        dataset(profile, "capacity_mtags_per_s", np.array([20.0, 400.0]), "MTags/s")
        profile.attrs["wall_mtags_per_s"] = 18.5


class FileTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)

    def tearDown(self):
        self.folder.cleanup()

    def test_one_png_per_group_and_the_profile(self):
        write_results_file(self.dir / "run.h5")
        written = tp.plot_file(str(self.dir / "run.h5"))
        names = ["a_b", "clock_stability", "counter", "pn", "profile"]  # file order, profile last
        self.assertEqual(written, [str(self.dir / "run_plots" / f"{n}.png") for n in names])
        for path in written:
            with open(path, "rb") as image:
                self.assertEqual(image.read(8), PNG_MAGIC)
            self.assertGreater(os.path.getsize(path), 10_000)

    def test_main_prints_the_paths_into_the_chosen_folder(self):
        write_results_file(self.dir / "run.h5")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = tp.main([str(self.dir / "run.h5"), "-o", str(self.dir / "figs"),
                              "--format", "svg"])
        self.assertEqual(status, 0)
        self.assertEqual(len(out.getvalue().splitlines()), 5)
        self.assertTrue((self.dir / "figs" / "pn.svg").is_file())

    def check_refused(self, path, message):
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            self.assertEqual(tp.main([str(path)]), 1)
        self.assertIn(message, errors.getvalue())
        self.assertFalse(any(self.dir.glob("*_plots")), "no output folder for a refused file")

    def test_refused_inputs(self):
        self.check_refused(self.dir / "missing.h5", "No such file or directory")
        (self.dir / "notes.txt").write_text("not hdf5")
        self.check_refused(self.dir / "notes.txt", "is not an HDF5 file")
        with h5py.File(self.dir / "plain.h5", "w") as f:
            f["x"] = [1, 2]
        self.check_refused(self.dir / "plain.h5", "it has no 'format' attribute "
                           "(expected 'tagflow-results/1')")
        with h5py.File(self.dir / "future.h5", "w") as f:
            f.attrs["format"] = "tagflow-results/2"
        self.check_refused(self.dir / "future.h5", "it has format 'tagflow-results/2'")

    def test_long_names_are_cut_to_a_file_name_and_kept_apart(self):
        taken = {"profile"}
        long_name = "a" * 300
        first = tp.file_stem(long_name, taken)
        second = tp.file_stem(long_name + "b", taken)
        self.assertEqual(first, "a" * tp.MAX_STEM)
        self.assertEqual(second, "a" * tp.MAX_STEM + "-2")
        (self.dir / first).with_suffix(".png").write_bytes(b"")  # a file of that name can exist

    def test_output_that_is_a_file_is_refused(self):
        write_results_file(self.dir / "run.h5")
        (self.dir / "figs").write_text("a file")
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            status = tp.main([str(self.dir / "run.h5"), "-o", str(self.dir / "figs")])
        self.assertEqual(status, 1)
        self.assertIn("it is a file, not a folder", errors.getvalue())
        self.assertEqual((self.dir / "figs").read_text(), "a file")


if __name__ == "__main__":
    unittest.main()
