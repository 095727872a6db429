#pragma once
// The linear family (kernels/reference/linear_family.hpp) over batches and heads, in ONNX LinearAttention's
// 4-D layout:  q (B, Hq, n, d_k), k (B, Hkv, n, d_k), v (B, Hkv, n, d_v), log-decay
// (B, Hkv, n, d_k) per key dimension or (B, Hkv, n, 1) per head, beta (B, Hkv, n), past state
// (B, Hkv, d_k, d_v)  →  o (B, Hq, n, d_v), present state (B, Hkv, d_k, d_v).
// Grouped-query heads: Hkv divides Hq and query head j reads key/value head j / (Hq / Hkv)
// (ONNX repeats each state over its group of consecutive query heads). Scale: 1/√d_k unless given.
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "kernels/reference/linear_family.hpp"

namespace vl {

/// The one key/value head (b, h) of `in` with its query heads [h·G, (h+1)·G).
template <class T>
FamilyHead<T> family_head(const FamilyInputs<T>& in, UpdateRule rule, std::size_t b, std::size_t h, std::size_t G) {
  FamilyHead<T> head;
  head.q = xt::view(in.q, b, xt::range(h * G, (h + 1) * G), xt::all(), xt::all());
  head.k = xt::view(in.k, b, h, xt::all(), xt::all());
  head.v = xt::view(in.v, b, h, xt::all(), xt::all());
  if (gated(rule)) head.g = xt::view(in.g, b, h, xt::all(), xt::all());
  if (delta(rule)) head.beta = xt::view(in.beta, b, h, xt::all());
  if (in.past) {
    head.s0 = xt::view(*in.past, b, h, xt::all(), xt::all());
  } else {
    head.s0 = xt::zeros<T>({in.k.shape(3), in.v.shape(3)});
  }
  return head;
}

/// Throws std::invalid_argument when the shapes do not fit together.
template <class T>
void check_family_inputs(const FamilyInputs<T>& in, const FamilyOptions& o) {
  const std::size_t B = in.q.shape(0), Hq = in.q.shape(1), n = in.q.shape(2), dk = in.q.shape(3);
  const std::size_t Hkv = in.k.shape(1), dv = in.v.shape(3);
  auto bad = [](const std::string& what) { throw std::invalid_argument("linear family: " + what); };
  if (in.k.shape(0) != B || in.k.shape(2) != n || in.k.shape(3) != dk) bad("k's shape does not match q's (B, ·, n, d_k)");
  if (in.v.shape(0) != B || in.v.shape(1) != Hkv || in.v.shape(2) != n) bad("v's shape does not match k's (B, Hkv, n, ·)");
  if (Hkv == 0 || Hq % Hkv != 0) bad(fmt::format("{} query heads are not a multiple of {} key/value heads", Hq, Hkv));
  // A key of no width has nothing to carry a decay on (a decay per head is kept per key column).
  if (dk == 0) bad("d_k is 0: keys and queries need at least one entry");
  if (gated(o.rule) && (in.g.shape(0) != B || in.g.shape(1) != Hkv || in.g.shape(2) != n ||
                        (in.g.shape(3) != 1 && in.g.shape(3) != dk)))
    bad(fmt::format("the decay must be (B, Hkv, n, 1) or (B, Hkv, n, d_k) = ({}, {}, {}, 1 or {})", B, Hkv, n, dk));
  if (delta(o.rule) && (in.beta.shape(0) != B || in.beta.shape(1) != Hkv || in.beta.shape(2) != n))
    bad(fmt::format("beta must be (B, Hkv, n) = ({}, {}, {})", B, Hkv, n));
  if (in.past && (in.past->shape(0) != B || in.past->shape(1) != Hkv || in.past->shape(2) != dk || in.past->shape(3) != dv))
    bad(fmt::format("the past state must be (B, Hkv, d_k, d_v) = ({}, {}, {}, {})", B, Hkv, dk, dv));
  if (o.form == FamilyForm::chunked && o.chunk == 0) bad("the chunk size must be >= 1");
}

/// One form of the family over every batch and head. Step and Ut are the recurrent step and the
/// chunked UT transform (the lessons' negative controls instantiate broken ones).
template <class T, class Step = OnnxStep, class Ut = UtTransform>
FamilyResult<T> linear_family(const FamilyInputs<T>& in, const FamilyOptions& o) {
  check_family_inputs(in, o);
  const std::size_t B = in.q.shape(0), Hq = in.q.shape(1), n = in.q.shape(2), dk = in.q.shape(3);
  const std::size_t Hkv = in.k.shape(1), dv = in.v.shape(3), G = Hq / Hkv;
  const T scale = static_cast<T>(o.scale && *o.scale != 0 ? *o.scale : 1 / std::sqrt(static_cast<double>(dk)));
  FamilyResult<T> r{xt::zeros<T>({B, Hq, n, dv}), xt::zeros<T>({B, Hkv, dk, dv})};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hkv; ++h) {
      const FamilyHead<T> head = family_head(in, o.rule, b, h, G);
      const FamilyHeadResult<T> one = o.form == FamilyForm::recurrent ? family_recurrent<T, Step>(o.rule, head, scale)
                                      : o.form == FamilyForm::parallel ? family_parallel<T>(o.rule, head, scale)
                                                                       : family_chunked<T, Ut>(o.rule, head, scale, o.chunk);
      xt::view(r.o, b, xt::range(h * G, (h + 1) * G), xt::all(), xt::all()) = one.o;
      xt::view(r.state, b, h, xt::all(), xt::all()) = one.state;
    }
  return r;
}

// Instantiated once, for float and double with the usual steps, in linear_family_heads.cpp: a file that calls
// them compiles none of their bodies. Other steps (a negative control's broken one) instantiate
// from the definitions above where they are used.
extern template FamilyHead<float> family_head<float>(const FamilyInputs<float>&, UpdateRule, std::size_t, std::size_t, std::size_t);
extern template void check_family_inputs<float>(const FamilyInputs<float>&, const FamilyOptions&);
extern template FamilyResult<float> linear_family<float, OnnxStep, UtTransform>(const FamilyInputs<float>&, const FamilyOptions&);
extern template FamilyHead<double> family_head<double>(const FamilyInputs<double>&, UpdateRule, std::size_t, std::size_t, std::size_t);
extern template void check_family_inputs<double>(const FamilyInputs<double>&, const FamilyOptions&);
extern template FamilyResult<double> linear_family<double, OnnxStep, UtTransform>(const FamilyInputs<double>&, const FamilyOptions&);

}  // namespace vl
