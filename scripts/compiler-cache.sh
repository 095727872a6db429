# Sourced by the build scripts (build.sh, sanitize.sh, fuzz-smoke.sh, mutate-sample.sh): use
# ccache (Debian's package, installed by install-deps.sh) as the compiler launcher when it is
# there. The build is ~110 template-heavy translation units (xtensor), about 16 CPU-minutes
# per tree; a cached one that did not change costs a second. CCACHE_BASEDIR makes the cache's
# keys relative to the checkout, so a fresh clone elsewhere hits what another built. Results
# are unaffected: ccache reuses an object only for the same preprocessed source, compiler and
# flags. VL_NO_CCACHE=1 builds without it (e.g. to time a cold build).
#   source scripts/compiler-cache.sh SOURCE_DIR   → sets VL_CACHE_ARGS for cmake's configure
# It also picks Ninja (Debian's ninja-build) as the generator of a new build folder, through
# CMake's CMAKE_GENERATOR variable: Ninja starts a target's compiles while the libraries it links
# are still being built, where Make finishes each library first; with a few large unity
# translation units per library (CMakeLists.txt, VL_UNITY) that keeps both cores busy. A folder
# configured earlier keeps its generator (CMake reads it from the folder's cache).
VL_CACHE_ARGS=()
if [ "${VL_NO_CCACHE:-0}" != 1 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$(cd "$1" && pwd)"
  VL_CACHE_ARGS=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
else
  VL_CACHE_ARGS=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_C_COMPILER_LAUNCHER=)
fi
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null; then
  export CMAKE_GENERATOR=Ninja
fi
