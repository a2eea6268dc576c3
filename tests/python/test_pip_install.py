"""`pip install .` into a virtual environment: the package imports from there, not from the
build tree, and runs a graph; the program in its bin/ runs and plots with the plotter in its
share/tagflow/. `pip install -e .`: the package imports from the source and the build tree. The wheel is made from the build tree the tests run against
(build-dir), so that nothing is compiled a second time; a fresh build-pip/ folder is the same
backend with a CMake configure before it."""

import os
import pathlib
import subprocess
import sys
import tarfile
import zipfile

SOURCE = pathlib.Path(__file__).resolve().parents[2]


def build_tree():
    # PYTHONPATH points at <build>/python (set by ctest).
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and (pathlib.Path(entry).parent / "CMakeCache.txt").exists():
            return pathlib.Path(entry).parent
    raise AssertionError("PYTHONPATH names no <build>/python folder; ctest sets it")


def clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600,
                            env=clean_env(), **kwargs)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_pip_install_into_a_virtual_environment(scratch):
    venv = scratch / "venv"
    # The system's numpy serves the package's one dependency offline.
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = venv / "bin" / "python"
    wheels = scratch / "wheels"
    run([str(python), "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels),
         "--config-settings", f"build-dir={build_tree()}", str(SOURCE)], cwd=scratch)
    (wheel,) = wheels.glob("tagflow-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert archive.testzip() is None
    assert "tagflow/__init__.py" in names
    assert any(name.startswith("tagflow/_tagflow") and name.endswith(".so") for name in names)

    run([str(python), "-m", "pip", "install", str(wheel)], cwd=scratch)
    output = run([str(python), "-c", (
        "import tagflow as tf\n"
        "graph = tf.Graph(tf.SyntheticSource(duration_ps=10**10))\n"
        "rates = tf.Countrate(graph, [1, 2])\n"
        "graph.run()\n"
        "tf.write_hdf5('results.h5', graph)\n"
        "print(tf.__file__)\n"
        "print(*rates.getData())\n")], cwd=scratch)
    location, counts = output.splitlines()
    assert pathlib.Path(location).is_relative_to(venv)
    # 10 ms of the default stream: channel 1 is Poisson at 20 MHz, channel 2 echoes each of its
    # events with probability 1/2; five standard deviations of the counts.
    seconds = 0.01
    rate_1, rate_2 = map(float, counts.split())
    assert abs(rate_1 - 20e6) < 5 * (20e6 * seconds) ** 0.5 / seconds
    assert abs(rate_2 - rate_1 / 2) < 5 * (rate_1 * seconds / 4) ** 0.5 / seconds

    # The program beside the interpreter, and the plotter it runs in the environment's
    # share/tagflow/ (named here: the program finds the source tree's copy first while it lasts).
    program = venv / "bin" / "tagflow"
    package_version = run([str(python), "-c", "import tagflow; print(tagflow.__version__)"])
    assert run([str(program), "--version"]).strip() == package_version.strip()
    plotter = venv / "share" / "tagflow" / "tagflow_plot.py"
    subprocess.run([str(program), "plot", "results.h5"], cwd=scratch, check=True,
                   capture_output=True, timeout=300,
                   env={**clean_env(), "TAGFLOW_PLOT_SCRIPT": str(plotter)})
    assert (scratch / "results_plots" / "Countrate.png").stat().st_size > 1000  # default name

    run([str(python), "-m", "pip", "uninstall", "--yes", "tagflow"], cwd=scratch)
    assert not pathlib.Path(location).exists()
    assert not program.exists()


def test_editable_install_reads_the_package_from_the_source(scratch):
    venv = scratch / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = venv / "bin" / "python"
    build = build_tree()
    run([str(python), "-m", "pip", "install", "--no-deps", "--editable", str(SOURCE),
         "--config-settings", f"build-dir={build}"], cwd=scratch)
    output = run([str(python), "-c", (
        "import tagflow as tf\n"
        "print(tf.__file__)\n"
        "print(tf._core.__file__)\n"
        "graph = tf.Graph(tf.SyntheticSource(duration_ps=10**10))\n"
        "counts = tf.Counter(graph, [1], binwidth=10**9, n_values=10)\n"
        "graph.run()\n"
        "print(int(counts.getData().sum()))\n")], cwd=scratch)
    package, module, total = output.splitlines()
    # The source's __init__.py, so that an edit shows at the next import, and the build
    # folder's compiled module.
    assert pathlib.Path(package) == SOURCE / "python" / "tagflow" / "__init__.py"
    assert pathlib.Path(module).parent == build / "python" / "tagflow"
    # The last 10 ms of channel 1 (Poisson, 20 MHz): five standard deviations of 200 000.
    assert abs(int(total) - 200_000) < 5 * 200_000 ** 0.5

    program = venv / "bin" / "tagflow"
    package_version = run([str(python), "-c", "import tagflow; print(tagflow.__version__)"])
    assert run([str(program), "--version"]).strip() == package_version.strip()

    run([str(python), "-m", "pip", "uninstall", "--yes", "tagflow"], cwd=scratch)
    assert not program.exists()
    result = subprocess.run([str(python), "-c", "import tagflow"], capture_output=True,
                            text=True, env=clean_env())
    assert result.returncode != 0 and "No module named 'tagflow'" in result.stderr


def test_source_archive_holds_what_a_wheel_build_needs(scratch):
    run([sys.executable, "-c", (
        "import sys\n"
        f"sys.path.insert(0, {str(SOURCE / 'python' / 'packaging')!r})\n"
        "import tagflow_build\n"
        f"print(tagflow_build.build_sdist({str(scratch)!r}))\n")])
    (archive,) = scratch.glob("tagflow-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        base = archive.name.removesuffix(".tar.gz")
        for path in ("pyproject.toml", "CMakeLists.txt", "python/packaging/tagflow_build.py",
                     "python/tagflow/__init__.py", "core/src/measurement_graph.cpp"):
            assert f"{base}/{path}" in names
        info = tar.extractfile(f"{base}/PKG-INFO").read().decode()
    assert "Name: tagflow" in info and f"Version: {base.split('-')[1]}" in info
