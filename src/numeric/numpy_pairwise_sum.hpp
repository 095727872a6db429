#pragma once
// NumPy's float summation order, so that sums, means and standard deviations come out bit for
// bit as NumPy 1.24 prints them (numpy/core/src/umath/loops_utils.h.src, pairwise_sum):
//
//   n < 8          a plain left-to-right loop
//   8 ≤ n ≤ 128    eight running sums r[j] += a[i + j], combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
//                  then the n % 8 leftovers added one by one
//   n > 128        split at n2 = n/2 rounded down to a multiple of 8, recurse on both halves
//
// A reduction over a whole contiguous array (a.sum(), a.mean(), a.std()) goes through the ufunc
// machinery's buffer of 8192 elements: each block of 8192 is summed pairwise and the block sums
// are accumulated left to right. A reduction over the last axis (a.sum(axis=-1)) sums each row
// pairwise. Checked against NumPy's own results in verify/test_lesson_attention.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>

namespace vl::numpy {

/// NumPy's pairwise_sum of a[0], a[stride], ..., a[(n−1)·stride].
template <class T>
T pairwise_sum(const T* a, std::size_t n, std::size_t stride = 1) {
  if (n < 8) {
    T res = 0;
    for (std::size_t i = 0; i < n; ++i) res += a[i * stride];
    return res;
  }
  if (n <= 128) {
    T r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = a[j * stride];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[(i + j) * stride];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i * stride];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2, stride) + pairwise_sum(a + n2 * stride, n - n2, stride);
}

/// The ufunc buffer size: a whole-array reduction is summed in blocks of this many elements.
inline constexpr std::size_t kReduceBufferSize = 8192;

/// a.sum() of a contiguous array of n elements, as NumPy computes it.
template <class T>
T array_sum(const T* a, std::size_t n) {
  T res = 0;
  for (std::size_t start = 0; start < n; start += kReduceBufferSize)
    res += pairwise_sum(a + start, std::min(kReduceBufferSize, n - start));
  return res;
}

/// a.mean() of a contiguous array: array_sum / n.
template <class T>
T array_mean(const T* a, std::size_t n) {
  return array_sum(a, n) / static_cast<T>(n);
}

/// a.std() (ddof 0) of a contiguous array: mean, squared deviations, their mean, sqrt.
template <class T>
T array_std(const T* a, std::size_t n) {
  const T mean = array_mean(a, n);
  T res = 0;
  T block[kReduceBufferSize];
  for (std::size_t start = 0; start < n; start += kReduceBufferSize) {
    const std::size_t m = std::min(kReduceBufferSize, n - start);
    for (std::size_t i = 0; i < m; ++i) {
      const T x = a[start + i] - mean;
      block[i] = x * x;
    }
    res += pairwise_sum(block, m);
  }
  return std::sqrt(res / static_cast<T>(n));
}

}  // namespace vl::numpy
