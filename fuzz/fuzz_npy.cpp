// libFuzzer target: bytes -> a temporary .npy file -> vl::npy::load, read_info and load_exact
// (the readers have no in-memory entry point, so the bytes go through a file in /dev/shm).
// A bad file must be refused with vl::InputError naming it; anything else is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string>

#include "core/errors.hpp"
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
  // The header-only and typed readers share the layout parsing and must agree with load():
  // the same shape, and for a float file the same values.
  try {
    const vl::npy::Info info = vl::npy::read_info(path);
    if (info.dtype == "float32" || info.dtype == "float64") {
      const vl::npy::Array a = vl::npy::load(path);
      const auto check = [&](const auto& x) {
        if (x.size() != a.values.size() || x.dimension() != info.shape.size()) __builtin_trap();
        for (std::size_t i = 0; i < x.size(); ++i)
          if (double(x.flat(i)) != a.values[i] && a.values[i] == a.values[i]) __builtin_trap();
      };
      if (info.dtype == "float32") check(vl::npy::load_exact<float>(path));
      else check(vl::npy::load_exact<double>(path));
    }
  } catch (const vl::InputError&) {
  }
  std::remove(path.c_str());  // leave nothing in /dev/shm (fork mode starts many processes)
  return 0;
}
