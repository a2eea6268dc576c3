#!/usr/bin/env bash
# Installs the Debian packages tagflow builds and tests with. Idempotent; needs root
# (or sudo). Skips apt entirely when everything is already installed. Also installs the npm
# packages of the browser test (tests/serve/browser) when their lock file changed.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libtbb-dev libhdf5-dev hdf5-tools libtomlplusplus-dev libcli11-dev libfmt-dev
  nlohmann-json3-dev
  # Boost.Beast (header-only): HTTP and WebSocket of the live view, `tagflow serve`.
  libboost-dev
  # Open MPI: `mpirun -n N tagflow run` over the time ranges of a recording (the build finds
  # it when present and works without it).
  libopenmpi-dev openmpi-bin
  # The live view's browser test: headless Chromium driven by puppeteer-core from npm.
  chromium nodejs
  catch2 libbenchmark-dev
  libeigen3-dev libfftw3-dev libzstd-dev liblz4-dev
  clang libclang-rt-14-dev iproute2
  # nftables: the network-namespace test drops datagrams in the kernel with it.
  nftables
  python3 python3-dev python3-numpy python3-h5py python3-matplotlib python3-pytest pybind11-dev
  # `pip install .` into a virtual environment, tested offline.
  python3-pip python3-venv
  # HDF5 filter plugins, so that compressed Photon-HDF5 files import: lz4 and bzip2, blosc.
  hdf5-filter-plugin hdf5-filter-plugin-blosc-serial
  # PyTables, for validating Photon-HDF5 exports by hand with the format's reference library.
  python3-tables
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
apt_install() {
  echo "Installing: $*"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
fi
# npm comes with Debian's npm package, or with a nodejs that bundles it.
command -v npm >/dev/null || apt_install npm
# puppeteer-core, pinned by tests/serve/browser/package-lock.json, for the browser test.
browser_test="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/serve/browser"
if ! cmp -s "$browser_test/package-lock.json" "$browser_test/node_modules/.package-lock.json.installed"; then
  (cd "$browser_test" && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.package-lock.json.installed)
fi
