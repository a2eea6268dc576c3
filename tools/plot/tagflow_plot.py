#!/usr/bin/python3
"""Figures for a tagflow results file: one image per measurement group and one for /profile.

Usage: tagflow_plot.py RESULTS.h5 [-o OUTDIR] [--format png|svg|pdf]

Each measurement group is drawn by the plotter registered for its `kind` attribute; a kind
without a plotter (or a group lacking a dataset its plotter needs) gets a generic figure of
its numeric 1-D and 2-D datasets. Axis labels come from the datasets' `unit` attributes and
titles carry the group's name, kind and key parameters. The paths written are printed on
stdout, notes on stderr. Exit status: 0 on success, 1 when the file cannot be read or is not
a tagflow results file or a figure cannot be written, 2 for bad arguments.
"""

import argparse
import math
import os
import re
import sys

import h5py
import numpy as np
from matplotlib.figure import Figure

RESULTS_FORMAT = "tagflow-results/1"
FIGURE_SIZE = (10, 6)  # inches; at the default 100 dpi a 1000 x 600 pixel image
SI_PREFIXES = "pnµm kMGT"  # 10^-12 .. 10^12 in steps of 10^3
MAX_GENERIC_PANELS = 8  # more stacked panels than this would be unreadable
MAX_GENERIC_LINES = 16  # 2-D datasets with more rows are drawn as an image


class PlotError(Exception):
    """A results file that cannot be plotted, or a figure that cannot be written."""


def note(message):
    print(f"tagflow plot: note: {message}", file=sys.stderr)


# --- reading attributes and units ---------------------------------------------------------------


def text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def unit_of(dataset):
    return text(dataset.attrs.get("unit", ""))


def axis_label(quantity, unit):
    if unit == "1":
        return f"{quantity} (dimensionless)"
    return f"{quantity} [{unit}]" if unit else quantity


def prefix_for(value):
    """The SI scale (a power of 1000) and its prefix that show `value` as 1 .. 999."""
    if not np.isfinite(value) or value == 0:
        return 1.0, ""
    exponent = min(max(math.floor(math.log10(abs(value)) / 3), -4), 4)
    return 10.0 ** (3 * exponent), SI_PREFIXES[exponent + 4].strip()


def si(value, unit):
    scale, prefix = prefix_for(value)
    return f"{value / scale:.4g} {prefix}{unit}"


def describe(value):
    """An attribute's value as title text: lists comma-separated, numbers compact."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return ", ".join(describe(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return text(value)


def parameters(group, keys, durations=()):
    """'key=value' for each of `keys` the group has. Times are shown in seconds with a prefix:
    the keys in `durations` and those ending in _ps hold picoseconds, those ending in _s seconds."""
    parts = []
    for key in keys:
        if key not in group.attrs:
            continue
        value = group.attrs[key]
        if key in durations or key.endswith("_ps"):
            parts.append(f"{key.removesuffix('_ps')}={si(float(value) * 1e-12, 's')}")
        elif key.endswith("_s"):
            parts.append(f"{key.removesuffix('_s')}={si(float(value), 's')}")
        else:
            parts.append(f"{key}={describe(value)}")
    return parts


def scaled(values, unit):
    """Values and unit rescaled by an SI prefix (Hz -> MHz) when the unit takes one."""
    largest = np.nanmax(np.abs(values), initial=0.0)
    if unit not in ("Hz", "s") or not np.isfinite(largest):
        return values, unit
    scale, prefix = prefix_for(largest)
    return values / scale, prefix + unit


def set_title(fig, group, details):
    name = group.name.lstrip("/")
    kind = text(group.attrs.get("kind", "unknown kind"))
    fig.suptitle(f"{name} ({kind})\n" + ", ".join(details), fontsize=11)


def channel_labels(group, count):
    """Per-row labels from the `channels` (or single `channel`) attribute."""
    channels = np.atleast_1d(group.attrs.get("channels", group.attrs.get("channel", [])))
    if len(channels) == count:
        return [f"channel {describe(c)}" for c in channels]
    return [f"row {i}" for i in range(count)]


def finite(x, y, positive=False):
    """x and y where y (and, for log axes, x and y > 0) is usable."""
    keep = np.isfinite(x) & np.isfinite(y)
    if positive:
        keep &= (x > 0) & (y > 0)
    return x[keep], y[keep]


def mark_empty(ax, drawn):
    if not drawn:
        ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", va="center")


# --- one plotter per measurement kind -----------------------------------------------------------


def plot_counter(group):
    rates = group["data_normalized"]
    index_ps = group["index"][...].astype(float)
    binwidth_ps = float(group.attrs["binwidth"])
    scale, prefix = prefix_for((index_ps.max(initial=0) + binwidth_ps) * 1e-12)
    starts = index_ps * 1e-12 / scale
    width = binwidth_ps * 1e-12 / scale
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    ax = fig.subplots()
    values, unit = scaled(np.atleast_2d(rates[...]).astype(float), unit_of(rates))
    for label, row in zip(channel_labels(group, len(values)), values):
        ax.plot(starts + width / 2, row, marker=".", label=label)
    overflow_bins = np.nonzero(group["overflow_mask"][...])[0] if "overflow_mask" in group else []
    for n, i in enumerate(overflow_bins):
        ax.axvspan(starts[i], starts[i] + width, color="0.85", zorder=0,
                   label="touched by an overflow" if n == 0 else None)
    mark_empty(ax, np.isfinite(values).any())
    ax.set_xlabel(axis_label("time since the first bin", f"{prefix}s"))
    ax.set_ylabel(axis_label("count rate", unit))
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))  # clear of the data
    ax.grid(alpha=0.3)
    set_title(fig, group, parameters(group, ["channels", "binwidth", "n_values", "bins_completed"],
                                     durations=["binwidth"]))
    return fig


def plot_countrate(group):
    rates = group["data"]
    values, unit = scaled(np.atleast_1d(rates[...]).astype(float), unit_of(rates))
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    ax = fig.subplots()
    bars = ax.bar(np.arange(len(values)), np.nan_to_num(values), color="tab:blue")
    ax.bar_label(bars, labels=[f"{v:.4g}" for v in values], fontsize="small")
    ax.set_xticks(np.arange(len(values)), channel_labels(group, len(values)))
    ax.set_ylabel(axis_label("average count rate", unit))
    ax.grid(axis="y", alpha=0.3)
    set_title(fig, group, parameters(group, ["channels", "capture_duration_ps"]))
    return fig


def plot_correlation(group):
    tau_ns = group["index"][...] * 1e-3  # ps -> ns
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    counts_ax, g2_ax = fig.subplots(2, 1, sharex=True)
    for ax, name, quantity in ((counts_ax, "data", "pairs per bin"),
                               (g2_ax, "data_normalized", "g2")):
        values = group[name][...].astype(float)
        ax.plot(tau_ns, values, drawstyle="steps-mid")
        mark_empty(ax, np.isfinite(values).any())
        ax.set_ylabel(axis_label(quantity, unit_of(group[name])))
        ax.grid(alpha=0.3)
    g2_ax.axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    g2_ax.set_xlabel("tau = t(channel_1) - t(channel_2) [ns]")
    set_title(fig, group,
              parameters(group, ["channel_1", "channel_2", "binwidth", "n_bins", "events_1",
                                 "events_2", "valid_duration_ps"],
                         durations=["binwidth"]))
    return fig


def plot_histogram_log_bins(group):
    edges_s = group["bin_edges"][...] * 1e-12
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    counts_ax, g2_ax = fig.subplots(2, 1, sharex=True)
    for ax, name, quantity in ((counts_ax, "data", "start-click pairs per bin"),
                               (g2_ax, "g2", "g2")):
        values = group[name][...].astype(float)
        ax.stairs(values, edges_s)
        mark_empty(ax, np.isfinite(values).any())
        ax.set_ylabel(axis_label(quantity, unit_of(group[name])))
        ax.grid(alpha=0.3, which="both")
    g2_ax.axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    g2_ax.set_xscale("log")
    g2_ax.set_xlabel("tau = t(click) - t(start) [s]")
    set_title(fig, group,
              parameters(group, ["click_channel", "start_channel", "exp_start", "exp_stop",
                                 "n_bins", "click_gate", "start_gate", "n_start", "n_click"]))
    return fig


DEVIATIONS = ("adev", "mdev", "hdev", "tdev", "stdd", "adev_scaled", "hdev_scaled")
STABILITY_TRACES = ("trace_phase", "trace_frequency", "trace_frequency_absolute")


def plot_frequency_stability(group):
    tau = group["tau"][...].astype(float)
    # Deviations share a panel when they share a unit: the relative ones (1) and the
    # time-domain ones (s) have different scales.
    by_unit = {}
    for name in DEVIATIONS:
        if name in group:
            by_unit.setdefault(unit_of(group[name]), []).append(name)
    traces = [name for name in STABILITY_TRACES if name in group]
    columns = math.lcm(max(len(by_unit), 1), max(len(traces), 1))
    fig = Figure(figsize=(12, 8), layout="constrained")
    grid = fig.add_gridspec(2 if traces else 1, columns)
    for i, (unit, names) in enumerate(by_unit.items()):
        width = columns // len(by_unit)
        ax = fig.add_subplot(grid[0, i * width:(i + 1) * width])
        drawn = False
        for name in names:
            x, y = finite(tau, group[name][...].astype(float), positive=True)
            ax.loglog(x, y, marker="o", markersize=3, label=name.upper().replace("_", " "))
            drawn |= len(x) > 0
        mark_empty(ax, drawn)
        ax.set_xlabel(axis_label("tau", unit_of(group["tau"])))
        ax.set_ylabel(axis_label("deviation", unit))
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3, which="both")
    trace_time = group["trace_index"] if "trace_index" in group else None
    for i, name in enumerate(traces):
        width = columns // len(traces)
        ax = fig.add_subplot(grid[1, i * width:(i + 1) * width])
        values = group[name][...].astype(float)
        x = trace_time[...].astype(float) if trace_time is not None else np.arange(len(values))
        ax.plot(x, values, linewidth=0.8)
        mark_empty(ax, np.isfinite(values).any())
        ax.set_xlabel(axis_label("time", unit_of(trace_time)) if trace_time is not None
                      else "sample")
        ax.set_ylabel(axis_label(name.removeprefix("trace_").replace("_", " "),
                                 unit_of(group[name])))
        ax.grid(alpha=0.3)
    set_title(fig, group, parameters(group, ["channel", "average", "trace_len"]))
    return fig


def plot_phase_noise(group):
    noise = group["phase_noise"]
    rows = np.atleast_2d(noise[...]).astype(float)
    offsets = np.atleast_2d(group["offset"][...]).astype(float)
    if len(offsets) == 1:  # one offset axis shared by every channel
        offsets = np.repeat(offsets, len(rows), axis=0)
    carriers = np.atleast_1d(group["frequency"][...]) if "frequency" in group else []
    fig = Figure(figsize=FIGURE_SIZE, layout="constrained")
    ax = fig.subplots()
    drawn = False
    for i, (label, offset, row) in enumerate(zip(channel_labels(group, len(rows)), offsets, rows)):
        if len(carriers) == len(rows):
            label += f", carrier {si(float(carriers[i]), 'Hz')}"
        x, y = finite(offset, row)
        ax.semilogx(x[x > 0], y[x > 0], linewidth=0.8, label=label)
        drawn |= (x > 0).any()
    mark_empty(ax, drawn)
    ax.set_xlabel(axis_label("offset frequency", unit_of(group["offset"])))
    ax.set_ylabel(axis_label("L(f)", unit_of(noise)))
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3, which="both")
    details = parameters(group, ["channels", "channel", "samples_per_octave"])
    if "averaged_sequences" in group:
        details.append(f"averaged_sequences={describe(group['averaged_sequences'][...])}")
    set_title(fig, group, details)
    return fig


def plottable(dataset):
    return (isinstance(dataset, h5py.Dataset) and dataset.ndim in (1, 2) and dataset.size > 0
            and np.issubdtype(dataset.dtype, np.number))


def plot_generic(group):
    """Every numeric 1-D or 2-D dataset, one panel each; None when there is none."""
    names = [name for name, item in group.items() if plottable(item)]
    if not names:
        return None
    if len(names) > MAX_GENERIC_PANELS:
        note(f"{group.name}: drawing the first {MAX_GENERIC_PANELS} of {len(names)} datasets")
        names = names[:MAX_GENERIC_PANELS]
    fig = Figure(figsize=(FIGURE_SIZE[0], 2.5 * len(names) + 1), layout="constrained")
    for ax, name in zip(np.atleast_1d(fig.subplots(len(names), 1)), names):
        values = group[name][...].astype(float)
        label = axis_label(name, unit_of(group[name]))
        if values.ndim == 2 and len(values) > MAX_GENERIC_LINES:
            image = ax.imshow(values, aspect="auto", interpolation="nearest", origin="lower")
            fig.colorbar(image, ax=ax, label=label)
            ax.set_xlabel("column")
            ax.set_ylabel("row")
        else:
            for i, row in enumerate(np.atleast_2d(values)):
                ax.plot(row, linewidth=0.8, label=f"row {i}" if values.ndim == 2 else None)
            mark_empty(ax, np.isfinite(values).any())
            ax.set_xlabel("index")
            ax.set_ylabel(label)
            if values.ndim == 2:
                ax.legend(fontsize="small", ncol=2)
        ax.grid(alpha=0.3)
    set_title(fig, group, [f"{len(names)} dataset(s), generic view"])
    return fig


def plot_profile(group):
    nodes = list(group["node"].asstr()[...])
    kinds = list(group["kind"].asstr()[...])
    capacity = group["capacity_mtags_per_s"]
    values = np.nan_to_num(capacity[...].astype(float), posinf=0.0)
    fig = Figure(figsize=(FIGURE_SIZE[0], max(3.0, 0.5 * len(nodes) + 2)), layout="constrained")
    ax = fig.subplots()
    positions = np.arange(len(nodes))
    bars = ax.barh(positions, values, color=["tab:gray"] + ["tab:blue"] * (len(nodes) - 1))
    ax.bar_label(bars, labels=[f"{v:.1f}" for v in values], fontsize="small", padding=2)
    ax.set_yticks(positions, [f"{n} ({k})" for n, k in zip(nodes, kinds)])
    ax.invert_yaxis()  # the source on top, then the measurements in the order they were added
    if "wall_mtags_per_s" in group.attrs:
        wall = float(group.attrs["wall_mtags_per_s"])
        ax.axvline(wall, color="tab:red", linestyle="--", label=f"graph wall rate {wall:.1f}")
        ax.legend(fontsize="small", loc="lower right")
    ax.set_xlabel(axis_label("capacity: tags / busy time", unit_of(capacity)))
    ax.grid(axis="x", alpha=0.3)
    details = parameters(group, ["tags", "blocks", "threads", "wall_s", "stream_duration_ps"])
    fig.suptitle("profile: node capacity on one core\n" + ", ".join(details), fontsize=11)
    return fig


PLOTTERS = {
    "Counter": plot_counter,
    "Countrate": plot_countrate,
    "Correlation": plot_correlation,
    "HistogramLogBins": plot_histogram_log_bins,
    "FrequencyStability": plot_frequency_stability,
    "PhaseNoise": plot_phase_noise,
}


def figure_for(group):
    """The group's figure by its kind, the generic one as a fallback, or None to skip it."""
    kind = text(group.attrs["kind"])
    plotter = PLOTTERS.get(kind)
    if plotter is not None:
        try:
            return plotter(group)
        except KeyError as missing:
            note(f"{group.name}: {kind} plot needs {missing}; drawing a generic view")
    figure = plot_generic(group)
    if figure is None:
        note(f"{group.name}: skipped, kind '{kind}' has no numeric 1-D or 2-D dataset")
    return figure


# --- the file -----------------------------------------------------------------------------------


def open_results(path):
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise PlotError(f"cannot open results file '{path}': {error.strerror}") from error
    if not h5py.is_hdf5(path):
        raise PlotError(f"'{path}' is not an HDF5 file (expected a tagflow results file)")
    try:
        results = h5py.File(path, "r")
    except OSError as error:
        raise PlotError(f"cannot read HDF5 file '{path}': {error}") from error
    found = results.attrs.get("format")
    if found is None or text(found) != RESULTS_FORMAT:
        results.close()
        shown = "no 'format' attribute" if found is None else f"format '{text(found)}'"
        raise PlotError(f"'{path}' is not a tagflow results file: it has {shown} "
                        f"(expected '{RESULTS_FORMAT}')")
    return results


# File names stop at 255 bytes; a measurement's name does not (a stem this long leaves room for
# a clash's number and the extension).
MAX_STEM = 120


def file_stem(name, taken):
    """A file name from a group name: unsafe characters replaced, cut to MAX_STEM characters,
    clashes numbered."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:MAX_STEM] or "_"
    candidate, n = stem, 2
    while candidate in taken:
        candidate, n = f"{stem}-{n}", n + 1
    taken.add(candidate)
    return candidate


def default_output_folder(path):
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, os.path.splitext(name)[0] + "_plots")


# The results file's own groups: the profile is drawn on its own, the others hold no results.
FILE_GROUPS = ("profile", "source", "virtual_channels")


def plot_file(path, output_folder=None, image_format="png"):
    """Writes the figures of one results file; returns the paths written, in file order."""
    output_folder = output_folder or default_output_folder(path)
    with open_results(path) as results:
        if os.path.exists(output_folder) and not os.path.isdir(output_folder):
            raise PlotError(f"cannot write the figures into '{output_folder}': it is a file, "
                            "not a folder")
        try:
            os.makedirs(output_folder, exist_ok=True)
        except OSError as error:
            raise PlotError(f"cannot create output folder '{output_folder}': "
                            f"{error.strerror}") from error
        written = []
        taken = {"profile"}
        for name, item in results.items():
            if name in FILE_GROUPS:
                continue
            if not isinstance(item, h5py.Group) or "kind" not in item.attrs:
                note(f"/{name}: skipped, not a measurement group (no 'kind' attribute)")
                continue
            figure = figure_for(item)
            if figure is not None:
                written.append(save(figure, output_folder, file_stem(name, taken), image_format))
        if isinstance(results.get("profile"), h5py.Group):
            try:
                figure = plot_profile(results["profile"])
                written.append(save(figure, output_folder, "profile", image_format))
            except KeyError as missing:
                note(f"/profile: skipped, it lacks {missing}")
    return written


def save(figure, folder, stem, image_format):
    target = os.path.join(folder, f"{stem}.{image_format}")
    try:
        figure.savefig(target, format=image_format)
    except OSError as error:
        raise PlotError(f"cannot write figure '{target}': {error.strerror}") from error
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tagflow plot", description="Write one figure per measurement of a results file.")
    parser.add_argument("results", help="HDF5 results file written by `tagflow run`")
    parser.add_argument("-o", "--output", help="folder for the figures "
                        "(default: <results stem>_plots next to the file)")
    parser.add_argument("--format", default="png", choices=["png", "svg", "pdf"],
                        help="image format (default: png)")
    options = parser.parse_args(argv)
    try:
        written = plot_file(options.results, options.output, options.format)
    except PlotError as error:
        print(f"tagflow plot: error: {error}", file=sys.stderr)
        return 1
    for target in written:
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
