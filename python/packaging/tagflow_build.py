"""The build backend behind `pip install .` (PEP 517): CMake builds the compiled module for the
interpreter that runs pip and the `tagflow` command-line program, and the backend packs them
with python/tagflow/ into a wheel: the package goes to site-packages, the program to the
environment's bin/ and the plotter it runs to share/tagflow/ beside it (where an installed
`tagflow plot` looks for it).

It needs nothing from the package index (no build requirements), so it works offline and in
any virtual environment; the C++ libraries it links (oneTBB, HDF5, FFTW, ...) are the system's,
as for every other build of tagflow (scripts/setup.sh installs them on Debian). The wheel is
therefore for this machine, not for redistribution.

`pip install -e .` (PEP 660) installs a finder instead of the package: `import tagflow` then
reads python/tagflow/ from the source, where an edit takes effect at the next import, and the
compiled module from the build folder, which `cmake --build` brings up to date after a C++
change (as pip install -e . again would); the environment's bin/tagflow runs the build
folder's program, which finds the plotter in the source.

Config settings (pip install --config-settings KEY=VALUE, or -C from pip 23.1 on):
  build-dir  a build folder to use. One that CMake has already configured is only built (its
             options are left alone; its Python must be the one that runs pip); a new or empty
             one is configured for the module and the program alone. Default: build-pip/ in
             the source, configured on every build.
"""

import base64
import hashlib
import io
import os
import pathlib
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

SOURCE = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = SOURCE / "python" / "tagflow"


def _version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    match = re.search(r"project\(tagflow VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no 'project(tagflow VERSION x.y.z' line")
    return match.group(1)


def _metadata():
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: tagflow",
        f"Version: {_version()}",
        "Summary: Time-tag streams into physics results, fast: the tagflow engine from Python",
        "Requires-Python: >=3.9",
        "Requires-Dist: numpy",
        "",
    ])


def _tag():
    interpreter = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def _run(command):
    print("+", " ".join(map(str, command)), file=sys.stderr, flush=True)
    try:
        subprocess.run(command, check=True, stdout=sys.stderr)
    except FileNotFoundError:
        raise RuntimeError(f"'{command[0]}' was not found: building tagflow needs CMake and a "
                           "C++20 compiler (on Debian, scripts/setup.sh installs them)") from None


def _build(config_settings):
    """Builds the compiled module and the program; returns their paths."""
    given = (config_settings or {}).get("build-dir")
    build = pathlib.Path(given or SOURCE / "build-pip").resolve()
    # build-pip/ is configured every time (seconds once it exists): for this interpreter, and
    # again after a configure that failed.
    if not given or not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", SOURCE, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
              f"-DPython_EXECUTABLE={sys.executable}", "-DTAGFLOW_BUILD_TESTS=OFF",
              "-DTAGFLOW_BUILD_BENCH=OFF", "-DTAGFLOW_BUILD_EXAMPLES=OFF"])
    _run(["cmake", "--build", build, "--target", "_tagflow", "tagflow", "--parallel",
          str(os.cpu_count() or 1)])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build / "python" / "tagflow" / f"_tagflow{suffix}"
    if not module.exists():
        built = sorted(p.name for p in (build / "python" / "tagflow").glob("_tagflow*"))
        raise RuntimeError(f"{build} holds {built or 'no module'}, not _tagflow{suffix}: it "
                           f"was configured for another Python than {sys.executable}")
    return module, build / "tools" / "tagflow"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _dist_info(metadata_directory):
    dist_info = pathlib.Path(metadata_directory) / f"tagflow-{_version()}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata())
    return dist_info.name


def _write_wheel(wheel_directory, files, executable):
    """Packs `files` (path in the wheel: bytes) with the dist-info; returns the wheel's name."""
    dist_info = f"tagflow-{_version()}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = "\n".join([
        "Wheel-Version: 1.0", "Generator: tagflow_build", "Root-Is-Purelib: false",
        f"Tag: {_tag()}", ""]).encode()
    record = [_record_line(path, content) for path, content in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    name = f"tagflow-{_version()}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for path, content in files.items():
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            # A regular file's type bits too: installers look for them before the mode.
            mode = 0o755 if path in executable else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, content)
    return name


def _data_dir():
    return f"tagflow-{_version()}.data"


# The editable install's finder: the package's __init__.py from the source, its compiled module
# from the build folder (both folders are the package's __path__). It comes after the
# interpreter's own finders, so a tagflow on PYTHONPATH still wins, as it would over an
# installed one.
_EDITABLE_FINDER = """\
import importlib.abc
import importlib.util
import sys

_SOURCE = {source!r}
_BUILD = {build!r}


class _TagflowFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "tagflow":
            return None
        return importlib.util.spec_from_file_location(
            name, _SOURCE + "/__init__.py", submodule_search_locations=[_SOURCE, _BUILD])


sys.meta_path.append(_TagflowFinder())
"""


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _dist_info(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module, program = _build(config_settings)
    files = {f"tagflow/{path.name}": path.read_bytes()
             for path in sorted(PACKAGE.glob("*.py"))}
    files[f"tagflow/{module.name}"] = module.read_bytes()
    files[f"{_data_dir()}/scripts/tagflow"] = program.read_bytes()
    plotter = SOURCE / "tools" / "plot" / "tagflow_plot.py"
    files[f"{_data_dir()}/data/share/tagflow/{plotter.name}"] = plotter.read_bytes()
    return _write_wheel(wheel_directory, files,
                        {f"tagflow/{module.name}", f"{_data_dir()}/scripts/tagflow"})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    module, program = _build(config_settings)
    finder = _EDITABLE_FINDER.format(source=str(PACKAGE), build=str(module.parent))
    launcher = f'#!/bin/sh\nexec {shlex.quote(str(program))} "$@"\n'
    files = {
        "_tagflow_editable.py": finder.encode(),
        # A .pth line that starts with "import" is run when the interpreter starts.
        "_tagflow_editable.pth": b"import _tagflow_editable\n",
        f"{_data_dir()}/scripts/tagflow": launcher.encode(),
    }
    return _write_wheel(wheel_directory, files, {f"{_data_dir()}/scripts/tagflow"})


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _dist_info(metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, as tagflow-VERSION.tar.gz."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=SOURCE, check=True,
                                capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise RuntimeError(f"a source archive is made from a git checkout ({error})") from None
    base = f"tagflow-{_version()}"
    name = f"{base}.tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz") as archive:
        for path in filter(None, listed.decode().split("\0")):
            if (SOURCE / path).is_file():
                archive.add(SOURCE / path, arcname=f"{base}/{path}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return name
