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
)
if [ $# -gt 0 ]; then PACKAGES=("$@"); else PACKAGES=("${DEFAULT_PACKAGES[@]}"); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
