// libFuzzer target: bytes -> a temporary .npy file -> vl::npy::load (the reader has no
// in-memory entry point, so the bytes go through a file in /dev/shm).
// A bad file must be refused with vl::InputError naming it; anything else is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>

#include "engine/errors.hpp"
#include "numeric/npy.hpp"

namespace {
const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/vl_fuzz_npy." + std::to_string(::getpid()) + ".npy";
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = temp_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const vl::npy::Array a = vl::npy::load(path);
    // The reader's contract: product(shape) elements.
    const std::size_t n = std::accumulate(a.shape.begin(), a.shape.end(), std::size_t{1}, std::multiplies<>());
    if (n != a.values.size()) __builtin_trap();
    if (n <= (std::size_t{1} << 16)) {
      const auto x = vl::npy::to_xarray<double>(a);
      if (x.size() != n) __builtin_trap();
    }
  } catch (const vl::InputError&) {
  }
  std::remove(path.c_str());  // leave nothing in /dev/shm (fork mode starts many processes)
  return 0;
}
