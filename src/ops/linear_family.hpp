#pragma once
// Operation `linear_family`: ONNX LinearAttention's family of recurrences (linear, gated, delta,
// gated_delta) in one of its three forms, over batches and grouped-query heads
// (kernels/reference/linear_family_heads.hpp computes it; linear_family.hpp has the equations).
//
//   in   q (B, Hq, n, d_k), k (B, Hkv, n, d_k), v (B, Hkv, n, d_v), g (B, Hkv, n, d_k | 1) [gated],
//        beta (B, Hkv, n) [delta], past state (B, Hkv, d_k, d_v) [optional]; FamilyOptions
//   out  o (B, Hq, n, d_v), the present state (B, Hkv, d_k, d_v)
//   vl-candidate/1  request "linear_family": q k v [log_decay] [beta] [past_state], attrs update_rule, form,
//                   chunk, scale → o, state (docs/candidates.md)
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>

#include "ops/result_shape.hpp"

namespace vl {

enum class UpdateRule { linear, gated, delta, gated_delta };

enum class FamilyForm { recurrent, parallel, chunked };

template <class T>
struct FamilyInputs {
  xt::xtensor<T, 4> q, k, v;
  xt::xtensor<T, 4> g;     // gated rules only
  xt::xtensor<T, 3> beta;  // delta rules only
  std::optional<xt::xtensor<T, 4>> past;
};

struct FamilyOptions {
  UpdateRule rule = UpdateRule::linear;
  FamilyForm form = FamilyForm::recurrent;
  std::size_t chunk = 64;       // the chunked form's chunk size (ONNX's chunk_size hint)
  std::optional<double> scale;  // absent or 0: 1/√d_k
};

template <class T>
struct FamilyResult {
  xt::xtensor<T, 4> o;
  xt::xtensor<T, 4> state;
};

/// ONNX's names of the rules: "linear", "gated", "delta", "gated_delta".
inline const char* to_string(UpdateRule r) {
  switch (r) {
    case UpdateRule::linear: return "linear";
    case UpdateRule::gated: return "gated";
    case UpdateRule::delta: return "delta";
    case UpdateRule::gated_delta: return "gated_delta";
  }
  return "?";
}
inline std::optional<UpdateRule> parse_update_rule(const std::string& name) {
  for (UpdateRule r : {UpdateRule::linear, UpdateRule::gated, UpdateRule::delta, UpdateRule::gated_delta})
    if (name == to_string(r)) return r;
  return std::nullopt;
}
inline const char* to_string(FamilyForm f) {
  return f == FamilyForm::recurrent ? "recurrent" : f == FamilyForm::parallel ? "parallel" : "chunked";
}

}  // namespace vl

namespace vl::ops {

struct LinearFamily {
  static constexpr const char* name = "linear-family";
  static constexpr const char* request = "linear_family";

  template <class T>
  static std::vector<ResultShape> result_shapes(const FamilyResult<T>& r, const FamilyInputs<T>& in, const FamilyOptions&) {
    return {{"o", "a linear-family output", shape_of(r.o), {in.q.shape(0), in.q.shape(1), in.q.shape(2), in.v.shape(3)}},
            {"state", "a linear-family state", shape_of(r.state), {in.k.shape(0), in.k.shape(1), in.k.shape(3), in.v.shape(3)}}};
  }

  /// The log-decay travels for the gated rules, β for the delta rules, the past state when there is one.
  template <class Request, class T>
  static void encode(Request& r, const FamilyInputs<T>& in, const FamilyOptions& o) {
    r.input("q", xt::xarray<T>(in.q));
    r.input("k", xt::xarray<T>(in.k));
    r.input("v", xt::xarray<T>(in.v));
    if (o.rule == UpdateRule::gated || o.rule == UpdateRule::gated_delta) r.input("log_decay", xt::xarray<T>(in.g));
    if (o.rule == UpdateRule::delta || o.rule == UpdateRule::gated_delta) r.input("beta", xt::xarray<T>(in.beta));
    if (in.past) r.input("past_state", xt::xarray<T>(*in.past));
    r.attrs["update_rule"] = to_string(o.rule);
    r.attrs["form"] = to_string(o.form);
    r.attrs["chunk"] = o.chunk;
    if (o.scale && *o.scale != 0) r.attrs["scale"] = *o.scale;
    else r.attrs["scale"] = nullptr;
    r.output("o");
    r.output("state");
  }
  template <class Request, class T>
  static FamilyResult<T> decode(Request& r, const FamilyInputs<T>&, const FamilyOptions&) {
    return {r.template result<T, 4>("o"), r.template result<T, 4>("state")};
  }
};

}  // namespace vl::ops
