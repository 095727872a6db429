#!/usr/bin/env bash
# Install what the build, the tests and the docs need, from Debian's packages; or, given
# package names as arguments, just those (scripts/fuzz-smoke.sh asks for clang this way).
# Idempotent: quiet and quick when everything is present. Needs root (or sudo) to install.
set -euo pipefail

DEFAULT_PACKAGES=(
  g++ make cmake ninja-build git           # toolchain
  libxtensor-dev libxtensor-blas-dev       # arrays (xtensor) and BLAS products (xtensor-blas)
  libopenblas-dev                          # BLAS + LAPACK
  libboost-test-dev                        # Boost.Test: the verification programs
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libssl-dev                               # libcrypto's SHA-256 (EVP) for the goldens' manifest
  python3 python3-numpy python3-torch      # the independent references (goldens, CLI tests)
  python3-matplotlib doxygen libjs-mathjax # the literate docs
  chromium chromium-driver python3-selenium # the docs tests: headless Chromium driven by Selenium
  valgrind                                 # memcheck of the CLI in CI (scripts/valgrind.sh)
  ccache                                   # compiler cache for the build scripts (scripts/compiler-cache.sh)
  nodejs                                   # Node: the ONNX Runtime adapter (below; npm too)
)
if [ $# -gt 0 ]; then PACKAGES=("$@"); else PACKAGES=("${DEFAULT_PACKAGES[@]}"); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# ONNX Runtime for its adapter (adapters/onnxruntime/): the npm packages its lockfile pins.
# --ignore-scripts: onnxruntime-node ships its CPU library in the package; its install script
# only fetches GPU add-ons (and fails without them). Done again only when the lockfile changes.
if [ $# -eq 0 ]; then
  ort="$(cd "$(dirname "$0")/.." && pwd)/adapters/onnxruntime"
  if ! cmp -s "$ort/package-lock.json" "$ort/node_modules/.vl-installed-lock" 2>/dev/null; then
    # Debian's nodejs has no npm (its own package); NodeSource's bundles it, and conflicts with Debian's.
    if ! command -v npm >/dev/null; then
      SUDO=""
      [ "$(id -u)" -ne 0 ] && SUDO="sudo"
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
    fi
    echo "install-deps: npm ci in adapters/onnxruntime (onnxruntime-node, onnx-proto, as its lockfile pins)"
    (cd "$ort" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$ort/package-lock.json" "$ort/node_modules/.vl-installed-lock"
  fi
fi
