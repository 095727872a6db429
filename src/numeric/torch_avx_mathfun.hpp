#pragma once
// One lane of PyTorch's AVX2 float math (aten/src/ATen/native/cpu/avx_mathfun.h, Giovanni
// Garberoglio's AVX port of Julien Pommier's sse_mathfun, itself a rewrite of Cephes logf and
// sinf/cosf). torch.randn(float32, numel >= 16) on an AVX2 build draws its normals with these
// functions (normal_fill_16_AVX2), not with libm, so reproducing its bits needs the same
// polynomials evaluated with the same float operations in the same order.
//
// Rounding: torch compiles its AVX2 kernels with -mavx2 -mfma and GCC's default
// -ffp-contract=fast, and GCC's _mm256_mul_ps/_mm256_add_ps are plain vector arithmetic, so
// each multiply whose only use is an add/sub was fused into one FMA (the first such multiply
// in statement order when an add has two). We write those fusions as std::fma and every other
// step as one IEEE float operation; verified bit for bit against torch 1.13 on 5 seeds x
// 101,050 values. Our own build must not contract further: CMakeLists.txt compiles everything
// with -ffp-contract=off (GCC contracts by default in C++, -std=c++20 or not).

namespace vl::torch_rng::avx_mathfun {

/// log256_ps for one lane: the natural log of x (x > 0; NaN for x <= 0, as the vector code).
float log(float x);

/// sincos256_ps for one lane: sine and cosine of x (accurate for |x| < 8192).
struct SinCos {
  float sin;
  float cos;
};
SinCos sincos(float x);

}  // namespace vl::torch_rng::avx_mathfun
