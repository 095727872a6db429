#pragma once
// What this machine is and what ran on it, for the audit's provenance and bench/compare.py:
// the CPU's model and widest vector unit, the code path our float32 kernels take
// (kernels/platform/vector_path.hpp), and the core OpenBLAS chose (DYNAMIC_ARCH builds pick kernels by
// CPU model at start-up, and fall back to old SSE kernels for a model they do not know).
#include <optional>
#include <string>
#include <string_view>

namespace vl {

struct MachineInfo {
  std::string cpu_model;       ///< the CPUID brand string ("AMD EPYC", "Intel(R) Xeon(R) ...")
  std::string cpu_vector;      ///< its widest vector unit: "AVX-512", "AVX2+FMA", "AVX", "SSE2"
  int cpu_vector_bits = 0;     ///< 512, 256 or 128
  std::string kernel_path;     ///< the clone our kernels run here ("AVX-512", "AVX2", "baseline")
  std::string blas_config;     ///< openblas_get_config(), or "BLAS (not OpenBLAS)"
  std::string blas_core;       ///< openblas_get_corename() ("Zen", "Prescott", ...); empty if not OpenBLAS
  int blas_core_bits = 0;      ///< that core's vector width; 0 = a core we do not know
  std::optional<std::string> blas_narrower;  ///< the plain line saying the BLAS core is narrower than the CPU
};

/// This process's machine (computed once).
const MachineInfo& machine_info();

/// The vector width of the kernels of an OpenBLAS core, by its openblas_get_corename() name
/// (case-blind): 512 for SkylakeX, Cooperlake, SapphireRapids; 256 for Haswell, Zen (AVX2 +
/// FMA) and Sandybridge (AVX); 128 for the SSE cores (Prescott, Core2, Penryn, Dunnington,
/// Nehalem, Atom, Opteron, Barcelona, Bobcat, Nano) and the AMD FMA4 cores (Bulldozer,
/// Piledriver, Steamroller, Excavator, whose kernels are 128-bit); 0 for a name not listed.
int openblas_core_bits(std::string_view core);

/// The one plain line the audit and the docs print when the BLAS core is narrower than the
/// CPU (core_bits < cpu_bits); nothing when it is not, or when the core is unknown (core_bits 0).
std::optional<std::string> blas_narrower_line(const std::string& cpu_model, const std::string& cpu_vector, int cpu_bits,
                                              const std::string& core, int core_bits);

}  // namespace vl
