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
#include "fuzz_input_file.hpp"
#include "numeric/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = write_fuzz_input(data, size, "npy", ".npy");
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
