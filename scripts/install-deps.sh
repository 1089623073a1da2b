#!/usr/bin/env bash
# Installs the Debian 12 packages tinygrad-cpp needs, only when some are missing.
# Uses sudo when not root. Prints nothing and exits 0 when everything is present.
#   scripts/install-deps.sh           what `make`, `make demo` and `make test` need
#   scripts/install-deps.sh --bench   also what only `make bench` needs (PyTorch, the training step's CPU yardstick)
set -euo pipefail
PACKAGES=(
  cmake ninja-build pkg-config g++ make ccache git time
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3 zlib1g-dev libjemalloc-dev
  qt6-base-dev qt6-base-dev-tools libgl-dev fonts-dejavu-core libgraphviz-dev graphviz xvfb xauth
  llvm-16-dev dataset-fashion-mnist
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
  nlohmann-json3-dev
)
# node runs the Trace Event consumer that tests tinyviz-cli's export (any node >= 18 on PATH will do: Debian's, or one
# installed from elsewhere, which also brings npm)
command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
# make bench runs beautiful_mnist's training step in PyTorch beside ours (tests/bench/torch_mnist.py, Debian's
# /usr/bin/python3); make test never needs it
if [ "${1:-}" = "--bench" ]; then PACKAGES+=(python3-torch python3-numpy); fi
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# the export test's consumer (tracerbench's trace model), pinned by its package-lock.json, into the source tree
CONSUMER="$(cd "$(dirname "$0")/.." && pwd)/tests/viz/chrome_consumer"
if [ ! -d "$CONSUMER/node_modules/@tracerbench/trace-model" ]; then
  echo "install-deps: npm ci in tests/viz/chrome_consumer (the Trace Event consumer of the export test)"
  (cd "$CONSUMER" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
