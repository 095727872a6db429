#pragma once
// GCC's generic vectors, by element type and lane count: every operation on them is lane-wise
// (x * y, x > y ? x : y, …), so a lane gives the scalar's bits. A function compiled for a vector
// path (kernels/platform/vector_path.hpp) maps a vector onto that path's registers: 16 floats are one
// AVX-512 register, two AVX2 registers or four SSE registers (the wider types split into pieces
// on a narrower path, which can spill them: online_softmax_block.hpp picks its path's width).
#include <cstdint>

namespace vl::simd {

using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = std::int32_t __attribute__((vector_size(64)));
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));
using f64x8 = double __attribute__((vector_size(64)));
using i64x8 = std::int64_t __attribute__((vector_size(64)));
using f64x4 = double __attribute__((vector_size(32)));
using i64x4 = std::int64_t __attribute__((vector_size(32)));
using f64x2 = double __attribute__((vector_size(16)));
using i64x2 = std::int64_t __attribute__((vector_size(16)));

}  // namespace vl::simd
