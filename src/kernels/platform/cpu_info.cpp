// CPU model and vector width (CPUID, GCC's <cpuid.h> and __builtin_cpu_supports), OpenBLAS's
// core (its own openblas_get_corename / openblas_get_config, looked up in the library opened on
// demand: kernels/platform/blas_library.hpp).
#include "kernels/platform/cpu_info.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include <fmt/core.h>

#include "kernels/platform/blas_library.hpp"
#include "kernels/platform/vector_path.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace vl {

namespace {

std::string cpu_brand() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
    std::array<unsigned, 12> regs{};
    for (unsigned leaf = 0; leaf < 3; ++leaf)
      __get_cpuid(0x80000002u + leaf, &regs[4 * leaf], &regs[4 * leaf + 1], &regs[4 * leaf + 2], &regs[4 * leaf + 3]);
    char text[49] = {};
    std::memcpy(text, regs.data(), 48);
    std::string s(text);
    const auto first = s.find_first_not_of(' ');
    const auto last = s.find_last_not_of(' ');
    if (first != std::string::npos) return s.substr(first, last - first + 1);
  }
#endif
  return "unknown CPU";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int openblas_core_bits(std::string_view core) {
  const std::string c = lower(core);
  for (const char* name : {"skylakex", "cooperlake", "sapphirerapids"})
    if (c == name) return 512;
  for (const char* name : {"haswell", "zen", "sandybridge"})
    if (c == name) return 256;
  for (const char* name : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "opteron", "opteron_sse3", "barcelona",
                           "bobcat", "nano", "bulldozer", "piledriver", "steamroller", "excavator", "katmai", "coppermine",
                           "northwood", "banias", "athlon"})
    if (c == name) return 128;
  return 0;
}

std::optional<std::string> blas_narrower_line(const std::string& cpu_model, const std::string& cpu_vector, int cpu_bits,
                                              const std::string& core, int core_bits) {
  if (core_bits == 0 || cpu_bits == 0 || core_bits >= cpu_bits) return std::nullopt;
  return fmt::format(
      "BLAS fallback: OpenBLAS runs its {} kernels ({}-bit vectors) on this {}, whose {} units are {}-bit: BLAS "
      "products here (NumPy's, our reference kernels') run far below what the CPU can do",
      core, core_bits, cpu_model, cpu_vector, cpu_bits);
}

const MachineInfo& machine_info() {
  static const MachineInfo info = [] {
    MachineInfo m;
    m.cpu_model = cpu_brand();
    const VectorPath widest = widest_vector_path();
    m.cpu_vector = widest == VectorPath::avx512 ? "AVX-512" : widest == VectorPath::avx2 ? "AVX2+FMA" : "SSE2";
    m.cpu_vector_bits = widest == VectorPath::avx512 ? 512 : widest == VectorPath::avx2 ? 256 : 128;
#if defined(__x86_64__)
    if (widest == VectorPath::baseline && __builtin_cpu_supports("avx")) m.cpu_vector = "AVX", m.cpu_vector_bits = 256;
#endif
    m.kernel_path = vector_path_name(selected_vector_path());
    using TextFn = char* (*)();
    try {  // the library is opened here if nothing has opened it yet (blas_library.hpp)
      if (auto config = reinterpret_cast<TextFn>(blas::symbol("openblas_get_config"))) {
        m.blas_config = fmt::format("OpenBLAS {}", config());
        if (auto core = reinterpret_cast<TextFn>(blas::symbol("openblas_get_corename"))) m.blas_core = core();
        m.blas_core_bits = openblas_core_bits(m.blas_core);
      } else {
        m.blas_config = "BLAS (not OpenBLAS)";
      }
    } catch (const std::runtime_error& e) {
      m.blas_config = e.what();
    }
    m.blas_narrower = blas_narrower_line(m.cpu_model, m.cpu_vector, m.cpu_vector_bits, m.blas_core, m.blas_core_bits);
    return m;
  }();
  return info;
}

}  // namespace vl
