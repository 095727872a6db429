#include <boost/test/unit_test.hpp>

// The provenance's "narrower" logic (kernels/platform/cpu_info.hpp) on injected values: the line appears
// exactly when the BLAS core's vector width is known and below the CPU's. The real machine's
// case is ctest audit_blas_fallback_line (OPENBLAS_CORETYPE=Prescott).
#include "kernels/platform/cpu_info.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_kernels_cpu_info).
BOOST_AUTO_TEST_SUITE(test_kernels_cpu_info)

BOOST_AUTO_TEST_CASE(core_widths) {
  BOOST_TEST(vl::openblas_core_bits("Prescott") == 128);
  BOOST_TEST(vl::openblas_core_bits("PRESCOTT") == 128);
  BOOST_TEST(vl::openblas_core_bits("Haswell") == 256);
  BOOST_TEST(vl::openblas_core_bits("Zen") == 256);
  BOOST_TEST(vl::openblas_core_bits("SkylakeX") == 512);
  BOOST_TEST(vl::openblas_core_bits("SapphireRapids") == 512);
  BOOST_TEST(vl::openblas_core_bits("Excavator") == 128);
  BOOST_TEST(vl::openblas_core_bits("NoSuchCore") == 0);
  BOOST_TEST(vl::openblas_core_bits("") == 0);
}

BOOST_AUTO_TEST_CASE(narrower_line_when_and_only_when_narrower) {
  // The machine: SSE3 kernels on an AVX-512 Xeon.
  const auto xeon = vl::blas_narrower_line("Intel(R) Xeon(R)", "AVX-512", 512, "Prescott", 128);
  BOOST_REQUIRE(xeon.has_value());
  BOOST_TEST(xeon->find("Prescott kernels (128-bit vectors)") != std::string::npos);
  BOOST_TEST(xeon->find("AVX-512 units are 512-bit") != std::string::npos);
  BOOST_TEST(vl::blas_narrower_line("Xeon", "AVX-512", 512, "Haswell", 256).has_value());  // AVX2 kernels on AVX-512
  BOOST_TEST(vl::blas_narrower_line("EPYC", "AVX2+FMA", 256, "Prescott", 128).has_value());
  // Not narrower: the same width, wider, or a core we do not know.
  BOOST_TEST(!vl::blas_narrower_line("EPYC", "AVX2+FMA", 256, "Zen", 256).has_value());
  BOOST_TEST(!vl::blas_narrower_line("Xeon", "AVX-512", 512, "SkylakeX", 512).has_value());
  BOOST_TEST(!vl::blas_narrower_line("Old", "SSE2", 128, "Prescott", 128).has_value());
  BOOST_TEST(!vl::blas_narrower_line("Xeon", "AVX-512", 512, "NoSuchCore", 0).has_value());
  BOOST_TEST(!vl::blas_narrower_line("?", "?", 0, "Prescott", 128).has_value());
}

BOOST_AUTO_TEST_CASE(this_machine_is_described) {
  const auto& m = vl::machine_info();
  BOOST_TEST(!m.cpu_model.empty());
  BOOST_TEST((m.cpu_vector_bits == 128 || m.cpu_vector_bits == 256 || m.cpu_vector_bits == 512));
  BOOST_TEST(!m.kernel_path.empty());
  BOOST_TEST_MESSAGE(m.cpu_model << ", " << m.cpu_vector << "; kernels " << m.kernel_path << "; " << m.blas_config << "; core "
                                 << m.blas_core);
}

BOOST_AUTO_TEST_SUITE_END()  // test_kernels_cpu_info
