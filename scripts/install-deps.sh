#!/usr/bin/env bash
# Installs the Debian 12 packages tinygrad-cpp needs, only when some are missing.
# Uses sudo when not root. Prints nothing and exits 0 when everything is present.
set -euo pipefail
PACKAGES=(
  cmake ninja-build pkg-config g++ make ccache git time
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3 zlib1g-dev libjemalloc-dev
  qt6-base-dev qt6-base-dev-tools libgl-dev fonts-dejavu-core libgraphviz-dev graphviz xvfb xauth
  llvm-16-dev dataset-fashion-mnist
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
)
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
