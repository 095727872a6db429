#pragma once
// Lesson linear-family: the broken backends its claims must reject. Each is one plausible bug in
// the linear_family operation of one form (every other form and operation is the base
// backend's): a kernel reached with a broken step (kernels/reference/linear_family.hpp's Step and Ut
// policies), or the base backend called with its inputs or results handled wrongly.
#include <cmath>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "backends/backend.hpp"

namespace vl::lessons::linear_family {

/// A decorator that breaks linear_family in float64 and float32 alike, through `Self::broken<T>`.
template <class Self>
class FamilyBreak : public backends::Decorator {
 public:
  using Decorator::Decorator;
  FamilyResult<double> linear_family(const FamilyInputs<double>& in, const FamilyOptions& o) const override {
    return static_cast<const Self&>(*this).template broken<double>(in, o);
  }
  FamilyResult<float> linear_family(const FamilyInputs<float>& in, const FamilyOptions& o) const override {
    return static_cast<const Self&>(*this).template broken<float>(in, o);
  }

 protected:
  template <class T>
  FamilyResult<T> base_family(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    return base().linear_family(in, o);
  }
};

// ---- Broken steps of the recurrence.

/// The decay applied after the write: S ← diag(e^g)(S + k uᵀ), so a token's own write decays.
struct DecayAfterWriteStep {
  template <class T>
  static void update(UpdateRule rule, xt::xtensor<T, 2>& S, const FamilyHead<T>& h, std::size_t t) {
    OnnxStep::update(rule == UpdateRule::gated_delta ? UpdateRule::delta : rule == UpdateRule::gated ? UpdateRule::linear : rule, S, h, t);
    if (gated(rule))
      for (std::size_t d = 0; d < S.shape(0); ++d) xt::row(S, d) *= std::exp(log_decay(h.g, t, d));
  }
};

/// The delta correction read from the state already updated by the plain write:
/// u = β (v − (S + k vᵀ)ᵀ k).
struct CorrectionFromUpdatedStateStep {
  template <class T>
  static void update(UpdateRule rule, xt::xtensor<T, 2>& S, const FamilyHead<T>& h, std::size_t t) {
    if (!delta(rule)) return OnnxStep::update(rule, S, h, t);
    const std::size_t dk = S.shape(0), dv = S.shape(1);
    if (gated(rule))
      for (std::size_t d = 0; d < dk; ++d) xt::row(S, d) *= std::exp(log_decay(h.g, t, d));
    xt::xtensor<T, 2> updated = S;
    for (std::size_t d = 0; d < dk; ++d)
      for (std::size_t m = 0; m < dv; ++m) updated(d, m) += h.k(t, d) * h.v(t, m);
    for (std::size_t m = 0; m < dv; ++m) {
      T read = 0;
      for (std::size_t d = 0; d < dk; ++d) read += updated(d, m) * h.k(t, d);
      const T u = h.beta(t) * (h.v(t, m) - read);
      for (std::size_t d = 0; d < dk; ++d) S(d, m) += h.k(t, d) * u;
    }
  }
};

/// β on the correction only: u = v − β Sᵀk instead of β (v − Sᵀk).
struct BetaOnCorrectionOnlyStep {
  template <class T>
  static void update(UpdateRule rule, xt::xtensor<T, 2>& S, const FamilyHead<T>& h, std::size_t t) {
    if (!delta(rule)) return OnnxStep::update(rule, S, h, t);
    const std::size_t dk = S.shape(0), dv = S.shape(1);
    if (gated(rule))
      for (std::size_t d = 0; d < dk; ++d) xt::row(S, d) *= std::exp(log_decay(h.g, t, d));
    xt::xtensor<T, 1> u = xt::zeros<T>({dv});
    for (std::size_t m = 0; m < dv; ++m) {
      T read = 0;
      for (std::size_t d = 0; d < dk; ++d) read += S(d, m) * h.k(t, d);
      u(m) = h.v(t, m) - h.beta(t) * read;
    }
    for (std::size_t d = 0; d < dk; ++d)
      for (std::size_t m = 0; m < dv; ++m) S(d, m) += h.k(t, d) * u(m);
  }
};

/// The UT transform with the diagonal kept: T = (I + tril(diag β K Kᵀ ⊙ D, 0))⁻¹ diag β.
struct UtDiagonalIncluded {
  template <class T, class EK, class EB>
  static xt::xtensor<T, 2> transform(const EK& k, const xt::xtensor<T, 2>& G, const EB& beta, bool per_dimension) {
    const xt::xtensor<T, 2> M = masked_products<T>(k, k, G, per_dimension, false);
    const std::size_t m = M.shape(0);
    xt::xtensor<T, 2> Tm = xt::zeros<T>({m, m});
    for (std::size_t t = 0; t < m; ++t) {
      const T pivot = 1 + beta(t) * M(t, t);
      Tm(t, t) = beta(t) / pivot;
      for (std::size_t c = 0; c < t; ++c) {
        T acc = 0;
        for (std::size_t s = c; s < t; ++s) acc += M(t, s) * Tm(s, c);
        Tm(t, c) = -beta(t) * acc / pivot;
      }
    }
    return Tm;
  }
};

/// One form computed by our kernel with a broken step (recurrent) or UT transform (chunked);
/// every other form is the base backend's.
template <FamilyForm Broken, class Step = OnnxStep, class Ut = UtTransform>
class BrokenKernel : public FamilyBreak<BrokenKernel<Broken, Step, Ut>> {
 public:
  using FamilyBreak<BrokenKernel>::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    if (o.form != Broken) return this->base_family(in, o);
    return vl::linear_family<T, Step, Ut>(in, o);
  }
};

/// The recurrent form with the decay applied after the write.
using DecayAfterWrite = BrokenKernel<FamilyForm::recurrent, DecayAfterWriteStep>;
/// The recurrent form whose delta correction reads the updated state.
using CorrectionFromUpdatedState = BrokenKernel<FamilyForm::recurrent, CorrectionFromUpdatedStateStep>;
/// The chunked form with the UT transform's diagonal included.
using UtWithDiagonal = BrokenKernel<FamilyForm::chunked, OnnxStep, UtDiagonalIncluded>;

/// The chunked form whose chunks each start from the initial state: a chunk's state not carried.
class ChunkStateNotCarried : public FamilyBreak<ChunkStateNotCarried> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    if (o.form != FamilyForm::chunked) return base_family(in, o);
    const std::size_t n = in.q.shape(2);
    FamilyResult<T> out{xt::zeros<T>({in.q.shape(0), in.q.shape(1), n, in.v.shape(3)}), {}};
    for (std::size_t a = 0; a < n || a == 0; a += o.chunk) {
      const std::size_t b = std::min(n, a + o.chunk);
      auto r = xt::range(a, b);
      FamilyInputs<T> part{xt::view(in.q, xt::all(), xt::all(), r, xt::all()), xt::view(in.k, xt::all(), xt::all(), r, xt::all()),
                           xt::view(in.v, xt::all(), xt::all(), r, xt::all()), xt::view(in.g, xt::all(), xt::all(), r, xt::all()),
                           xt::view(in.beta, xt::all(), xt::all(), r), in.past};
      const FamilyResult<T> one = base_family(part, o);
      xt::view(out.o, xt::all(), xt::all(), r, xt::all()) = one.o;
      out.state = one.state;
      if (n == 0) break;
    }
    return out;
  }
};

/// Every form with query head j reading key/value head j mod Hkv (round-robin) instead of
/// j / (Hq / Hkv): the base is given the query heads permuted so that it pairs them that way.
class GqaRoundRobin : public FamilyBreak<GqaRoundRobin> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    const std::size_t Hq = in.q.shape(1), Hkv = in.k.shape(1), G = Hkv ? Hq / Hkv : 1;
    FamilyInputs<T> p = in;
    auto slot = [&](std::size_t j) { return (j % Hkv) * G + j / Hkv; };  // where the base reads kv head j mod Hkv
    for (std::size_t j = 0; j < Hq; ++j) xt::view(p.q, xt::all(), slot(j)) = xt::view(in.q, xt::all(), j);
    FamilyResult<T> r = base_family(p, o);
    FamilyResult<T> out = r;
    for (std::size_t j = 0; j < Hq; ++j) xt::view(out.o, xt::all(), j) = xt::view(r.o, xt::all(), slot(j));
    return out;
  }
};

/// Every form with past_state ignored: each call starts from zeros.
class PastStateIgnored : public FamilyBreak<PastStateIgnored> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    FamilyInputs<T> p = in;
    p.past.reset();
    return base_family(p, o);
  }
};

/// Every form reading the log-decay as the factor itself: S ← g S instead of e^g S.
class DecayReadAsFactor : public FamilyBreak<DecayReadAsFactor> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    FamilyInputs<T> p = in;
    p.g = xt::log(in.g);  // e^{log g} = g (NaN for g < 0, −∞ → a factor 0 for g = 0)
    return base_family(p, o);
  }
};

/// The recurrent form with β on the correction only: u = v − β Sᵀk (β = 0 then writes v).
using BetaOnCorrectionOnly = BrokenKernel<FamilyForm::recurrent, BetaOnCorrectionOnlyStep>;

/// The chunked form that runs whole chunks only: the short last chunk's rows are left at zero
/// and its tokens never reach the state.
class ShortLastChunkSkipped : public FamilyBreak<ShortLastChunkSkipped> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    const std::size_t n = in.q.shape(2), whole = o.chunk ? n / o.chunk * o.chunk : n;
    if (o.form != FamilyForm::chunked || whole == n) return base_family(in, o);
    FamilyResult<T> out{xt::zeros<T>({in.q.shape(0), in.q.shape(1), n, in.v.shape(3)}), {}};
    if (whole == 0) {
      out.state = in.past ? *in.past : xt::xtensor<T, 4>(xt::zeros<T>({in.k.shape(0), in.k.shape(1), in.k.shape(3), in.v.shape(3)}));
      return out;
    }
    auto r = xt::range(0, whole);
    const FamilyResult<T> head = base_family(
        FamilyInputs<T>{xt::view(in.q, xt::all(), xt::all(), r, xt::all()), xt::view(in.k, xt::all(), xt::all(), r, xt::all()),
                        xt::view(in.v, xt::all(), xt::all(), r, xt::all()), xt::view(in.g, xt::all(), xt::all(), r, xt::all()),
                        xt::view(in.beta, xt::all(), xt::all(), r), in.past},
        o);
    xt::view(out.o, xt::all(), xt::all(), r, xt::all()) = head.o;
    out.state = head.state;
    return out;
  }
};

/// Every form with a token reading the state before its own write: o_t = s·S_{t−1}ᵀ q_t. The
/// base is given the queries one token early, and the first token reads the past state alone
/// (the base on that token with nothing written and nothing decayed).
class ReadBeforeWrite : public FamilyBreak<ReadBeforeWrite> {
 public:
  using FamilyBreak::FamilyBreak;
  template <class T>
  FamilyResult<T> broken(const FamilyInputs<T>& in, const FamilyOptions& o) const {
    const std::size_t n = in.q.shape(2);
    if (n == 0) return base_family(in, o);
    FamilyInputs<T> early = in;
    xt::view(early.q, xt::all(), xt::all(), xt::range(0, n - 1)) = xt::view(in.q, xt::all(), xt::all(), xt::range(1, n));
    FamilyResult<T> r = base_family(early, o);
    FamilyResult<T> out = r;
    xt::view(out.o, xt::all(), xt::all(), xt::range(1, n)) = xt::view(r.o, xt::all(), xt::all(), xt::range(0, n - 1));
    auto first = xt::range(0, 1);
    FamilyInputs<T> nothing{xt::view(in.q, xt::all(), xt::all(), first), xt::zeros<T>({in.k.shape(0), in.k.shape(1), std::size_t(1), in.k.shape(3)}),
                            xt::zeros<T>({in.v.shape(0), in.v.shape(1), std::size_t(1), in.v.shape(3)}), {}, {}, in.past};
    FamilyOptions linear = o;
    linear.rule = UpdateRule::linear;
    xt::view(out.o, xt::all(), xt::all(), first) = base_family(nothing, linear).o;
    return out;
  }
};

}  // namespace vl::lessons::linear_family
