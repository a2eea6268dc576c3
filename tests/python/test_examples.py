"""Each example in examples/python runs on a short stream and writes what it says."""

import pathlib
import subprocess
import sys

import h5py

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run(script, *args, cwd):
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_heralded_g2(scratch):
    output = run("heralded_g2.py", "g2.png", "--seconds", "0.05", cwd=scratch)
    assert (scratch / "g2.png").stat().st_size > 10_000
    assert "g2 peak" in output
    with h5py.File(scratch / "heralded_g2.h5") as f:
        assert f["Correlation/data"][()].sum() > 0


def test_count_rate_monitor(scratch):
    output = run("count_rate_monitor.py", "--seconds", "0.6", cwd=scratch)
    assert output.count("MHz") >= 4 and "mean rates since start" in output


def test_custom_measurement(scratch):
    output = run("custom_measurement.py", "--seconds", "0.02", cwd=scratch)
    assert "ChannelHistogram" in output and "counts:" in output


def test_recording_to_hdf5(scratch):
    output = run("recording_to_hdf5.py", str(scratch), "--seconds", "0.02", cwd=scratch)
    assert "equals the live results" in output
    with h5py.File(scratch / "replayed.h5") as f:
        assert f["counter/data"].shape == (2, 100)
