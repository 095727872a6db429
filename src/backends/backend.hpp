#pragma once
// A backend: one implementation of the operations the lessons' claims exercise. The claims'
// checks call these and nothing else, so the same check judges our plain kernels, our fused
// kernels, a deliberately broken variant (a negative control) or anyone else's implementation.
//
// The operations are listed once, in ops/all.hpp; each one's header (ops/<operation>.hpp) says
// what it computes, its shapes and its options.
//
// A backend may lack an operation, or an option of one (the fused kernel never forms the
// weights): it then throws Unsupported, and a claim that needed it is reported not applicable,
// never passed.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "numeric/precision.hpp"
#include "ops/all.hpp"

/// In a class derived from Backend: one operation's `override` declaration.
#define VL_DECLARE_OVERRIDE(OP, R, NAME, PARAMETERS, ARGUMENTS) R NAME PARAMETERS const override;

namespace vl::backends {

using ops::kAllOps;
using ops::Need;
using ops::Op;
using ops::Option;
using ops::to_string;
using ops::Matrix;
using ops::Tensor3;
using ops::Tensor4;

/// A backend lacks an operation or an option of one: what it needed says why the claim does not apply.
class Unsupported : public std::runtime_error {
 public:
  Unsupported(Need lacking, const std::string& what) : std::runtime_error(what), need(lacking) {}
  Need need;
};

/// A backend has the operation but lacks a setting of it that is not one of its options (a softcap,
/// a sliding window; a candidate's "unsupported: ..."): the claim is not applicable, even though
/// supports(op) is true.
class UnsupportedOption : public Unsupported {
 public:
  using Unsupported::Unsupported;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// One line for `lessons backends`.
  virtual std::string summary() const = 0;
  /// One of ours: claims about our own code (spec: `subject: our-code`) run only for these.
  virtual bool ours() const { return false; }
  /// Has the operation, or the option of it (an Op converts to the need of the operation itself).
  virtual bool supports(Need need) const = 0;
  /// The precisions it computes in (backends/in_precision.hpp judges it in each): float64 unless it says more.
  virtual std::vector<Precision> precisions() const { return {Precision::float64}; }
  /// In bfloat16 or float16 (p, one of precisions()): the backend whose float32 operations take
  /// inputs stored in p and return outputs stored in p; `self` is this backend, shared. By default
  /// a StoredIn over it (backends/in_precision.hpp: float32 arithmetic, outputs rounded to p).
  virtual std::shared_ptr<const Backend> stored_in(Precision p, std::shared_ptr<const Backend> self) const;

  // Every operation (ops/all.hpp), virtual; the defaults throw Unsupported.
#define VL_DECLARE_VIRTUAL(OP, R, NAME, PARAMETERS, ARGUMENTS) virtual R NAME PARAMETERS const;
  VL_OPERATIONS(VL_NO_OP, VL_DECLARE_VIRTUAL)
#undef VL_DECLARE_VIRTUAL

  /// Throws Unsupported with lacking(need, why).
  [[noreturn]] void lacks(Need need, const std::string& why = "") const;

 protected:
  /// What lacks() says: "backend 'NAME' has no NEED[ (WHY)]"; a backend whose gaps have
  /// another cause (a protocol without the operation) says so instead.
  virtual std::string lacking(Need need, const std::string& why) const;
};

/// A backend that forwards every operation to another: a negative control overrides the one
/// operation it breaks.
class Decorator : public Backend {
 public:
  Decorator(std::shared_ptr<const Backend> base, std::string name);
  std::string name() const override { return name_; }
  std::string summary() const override { return name_ + " (over " + base_->name() + ")"; }
  bool ours() const override { return base_->ours(); }
  bool supports(Need need) const override { return base_->supports(need); }
  std::vector<Precision> precisions() const override { return base_->precisions(); }

  VL_OPERATIONS(VL_NO_OP, VL_DECLARE_OVERRIDE)

 protected:
  const Backend& base() const { return *base_; }
  const std::shared_ptr<const Backend>& base_shared() const { return base_; }

 private:
  std::shared_ptr<const Backend> base_;
  std::string name_;
};

/// A pointer to a backend someone else holds (the audited one, a check's ctx.backend), for a
/// decorator over it: it owns nothing, so `b` must outlive it (the aliasing constructor).
inline std::shared_ptr<const Backend> unowned(const Backend& b) { return {std::shared_ptr<const Backend>(), &b}; }

// Shorthands the checks use: one head as (Sq, D) matrices, one unbatched MHA call.

/// attention on (Sq, D), (Sk, D), (Sk, Dv), seen as (1, 1, S, ·); masks broadcast to (Sq, Sk).
template <class T>
AttentionResult<T, 2> attention_2d(const Backend& b, const xt::xtensor<T, 2>& q, const xt::xtensor<T, 2>& k,
                                   const xt::xtensor<T, 2>& v, const AttentionOptions<T>& o = {}) {
  auto as4 = [](const xt::xtensor<T, 2>& x) -> Tensor4<T> {
    return xt::reshape_view(x, std::array<std::size_t, 4>{1, 1, x.shape(0), x.shape(1)});
  };
  const AttentionResult<T, 4> r = b.attention(as4(q), as4(k), as4(v), o);
  AttentionResult<T, 2> out;
  out.output = xt::view(r.output, 0, 0);
  if (o.return_weights) out.weights = xt::view(r.weights, 0, 0);
  return out;
}

/// multi_head_attention on unbatched (Sq, d), (Sk, d) inputs → output (Sq, d), weights (H, Sq, Sk).
MhaResult<double, 2> multi_head_attention_2d(const Backend& b, const Matrix& query, const Matrix& key, const Matrix& value,
                                             const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o = {});

/// The positional-encoding table for positions 0 … n − 1.
Matrix positional_encoding_table(const Backend& b, std::size_t n, std::size_t d);

}  // namespace vl::backends
