// lessons eval: our reference kernels on anyone's .npy inputs, for auditing an implementation.
//
//   eval attention          softmax(scale·Q Kᵀ + M) V over (…, S, D), (B, H, S, D) or packed (B, S, H·D)
//   eval mha                nn.MultiheadAttention's forward in PyTorch's parameter layout (the fused kernels,
//                           kernels/fused/multi_head_attention_fused.hpp; with --weights, the reference)
//   eval positional-encoding    sinusoidal PE (N, D)
//   eval linear-attention   causal linear attention, φ = elu + 1, in one of its three forms (the
//                           chunked one by the fast kernel, kernels/fused/linear_attention_fast.hpp); with
//                           --update-rule, ONNX LinearAttention (cmd_eval_linear.cpp)
//   eval encoder-layer, decoder-layer   torch's Transformer layers (cmd_eval_layers.cpp)
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbroadcast.hpp>
#include <xtensor/xmanipulation.hpp>

#include "backends/shape_checked.hpp"
#include "cli/backend_option.hpp"
#include "cli/commands.hpp"
#include "cli/eval_attention_cache.hpp"
#include "cli/eval_inputs.hpp"
#include "cli/eval_linear_family.hpp"
#include "cli/eval_outputs.hpp"
#include "kernels/reference/attention.hpp"
#include "kernels/reference/feature_map.hpp"
#include "kernels/fused/feature_map_fast.hpp"
#include "kernels/fused/fused_attention.hpp"
#include "kernels/fused/linear_attention_fast.hpp"
#include "kernels/fused/multi_head_attention_fused.hpp"
#include "kernels/reference/heads.hpp"
#include "kernels/reference/linear_attention.hpp"
#include "kernels/reference/multi_head_attention.hpp"
#include "kernels/reference/positional_encoding.hpp"
#include "numeric/float16.hpp"
#include "numeric/numpy_broadcast.hpp"
#include "onnx/attention_rules.hpp"

namespace vl::cli {

namespace {

using Shape = std::vector<std::size_t>;

Shape shape_of(const auto& a) { return Shape(a.shape().begin(), a.shape().end()); }

// The row-major elements of `x` under another shape of the same size: one copy of the buffer
// (xt::reshape_view would walk it element by element).
template <class R, class X>
R reshaped(const X& x, const Shape& shape) {
  R r = R::from_shape(shape);
  if (r.size() != x.size()) throw std::logic_error("reshaped: sizes differ");
  std::copy_n(x.data(), x.size(), r.data());
  return r;
}

// The same without the copy: x's buffer becomes the result's (x keeps its shape and dimension,
// but no elements). For the inputs, read once and then only needed in the kernel's layout, and
// the output, only needed in the file's: a copy of each would cost the process a fresh buffer's
// page faults and a pass over it.
template <class R, class X>
R reshaped_taking(X& x, const Shape& shape) {
  typename R::inner_shape_type s{};
  typename R::inner_strides_type strides{};
  typename R::inner_backstrides_type backstrides{};
  if constexpr (requires { s.resize(0); }) {  // xarray: a rank chosen at run time
    s.resize(shape.size());
    strides.resize(shape.size());
    backstrides.resize(shape.size());
  }
  if (s.size() != shape.size()) throw std::logic_error("reshaped_taking: ranks differ");
  std::copy(shape.begin(), shape.end(), s.begin());
  if (std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<>()) != x.size())
    throw std::logic_error("reshaped_taking: sizes differ");
  xt::compute_strides(s, xt::layout_type::row_major, strides, backstrides);
  return R(std::move(x.storage()), std::move(s), std::move(strides));
}

// Broadcast a mask NumPy-style to `target`, or say why it does not broadcast; then fold it, in
// place, to the scores' shape `scores` (the same elements, the batch dimensions flattened).
template <class M>
xt::xarray<M> broadcast_mask(const xt::xarray<M>& mask, const Shape& target, const Shape& scores, const std::string& path) {
  const Shape ms = shape_of(mask);
  if (ms.size() > target.size())
    throw InputError(fmt::format("--mask {}: shape {} has more dimensions than the scores {}", path, dims_string(ms), dims_string(target)));
  if (!numpy::broadcasts_to(ms, target))
    throw InputError(fmt::format("--mask {}: shape {} does not broadcast to the scores' shape {}", path, dims_string(ms), dims_string(target)));
  xt::xarray<M> b = xt::broadcast(mask, target);
  b.reshape(scores);
  return b;
}

// ------------------------------------------------------------------------------------------
struct AttentionArgs {
  AttentionCacheArgs cache;
  std::string q, k, v, mask, out, weights;
  std::string backend;  ///< --backend NAME; empty: the kernels eval has always run (compute_attention)
  bool causal = false, bottom_right = false;
  std::optional<double> scale;
  double softcap = 0;
  std::size_t q_heads = 0, kv_heads = 0;
};

// (B, S, H·D) → (B, H, S, D)
template <class T>
xt::xtensor<T, 4> unpack_heads(const xt::xarray<T>& x, std::size_t heads, const std::string& what) {
  if (x.dimension() != 3) throw InputError(fmt::format("{}: packed layout needs 3 dimensions (B, S, H·D), got {}", what, dims_string(shape_of(x))));
  if (x.shape(2) % heads != 0)
    throw InputError(fmt::format("{}: last dimension {} is not divisible by {} heads", what, x.shape(2), heads));
  return split_heads<T>(reshaped<xt::xtensor<T, 3>>(x, {x.shape(0), x.shape(1), x.shape(2)}), heads);
}

// The results back in the input's layout, written (all or none).
template <class T>
void finish_attention(const AttentionArgs& a, bool packed, const xt::xarray<T>& q, const Shape& lead, const Shape& scores,
                      const AttentionOptions<T>& options, AttentionResult<T, 4>& r, const xt::xtensor<T, 4>& k4,
                      const xt::xtensor<T, 4>& v4, bool half) {
  // Give the output back in the input's layout. r's buffers are taken, not copied, where the
  // layout is the same (r keeps their shapes, but no elements).
  auto take = [](xt::xtensor<T, 4>& x) { return x.size() ? reshaped_taking<xt::xarray<T>>(x, shape_of(x)) : xt::xarray<T>(x); };
  xt::xarray<T> out, weights, qk;
  if (packed) {
    out = merge_heads<T>(r.output);
    weights = take(r.weights);
    qk = take(r.scores);
  } else if (q.dimension() == 4) {
    out = take(r.output);
    weights = take(r.weights);
    qk = take(r.scores);
  } else {
    Shape os = lead, ws = lead;
    os.insert(os.end(), {r.output.shape(2), r.output.shape(3)});
    out = reshaped_taking<xt::xarray<T>>(r.output, os);
    if (options.return_weights) {
      ws.insert(ws.end(), {scores[2], scores[3]});
      weights = reshaped_taking<xt::xarray<T>>(r.weights, ws);
    }
    if (options.return_scores) {
      Shape ss = lead;
      ss.insert(ss.end(), {scores[2], scores[3]});
      qk = reshaped_taking<xt::xarray<T>>(r.scores, ss);
    }
  }
  // present_key / present_value: (B, Hkv, past + S, D), ONNX's layout.
  // The key/value cache is copied only when asked for.
  auto cache = [](const std::string& path, const xt::xtensor<T, 4>& x) { return path.empty() ? xt::xarray<T>() : xt::xarray<T>(x); };
  const xt::xarray<T> present_key = cache(a.cache.present_key, k4), present_value = cache(a.cache.present_value, v4);
  save_results<T>({{a.out, "output", &out},
                   {a.weights, "weights", &weights},
                   {a.cache.qk_output.empty() ? "" : a.cache.qk_output[1], "scores", &qk, true},
                   {a.cache.present_key, "present key", &present_key},
                   {a.cache.present_value, "present value", &present_value}},
                  half);
}

// The attention itself. With --backend NAME, that backend's (shape-checked, as the audit's); an
// operation or option it lacks is refused, naming it. Without, as eval always has: the fused
// kernel (online softmax, no n × n matrix) unless the weights, a stage of the scores or
// float16's rounding are asked for, which only the plain kernel does.
template <class T>
AttentionResult<T, 4> compute_attention(const AttentionArgs& a, const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                        const xt::xtensor<T, 4>& v, const AttentionOptions<T>& o) {
  try {
    if (!a.backend.empty()) return backends::ShapeChecked(backend_named(a.backend)).attention(q, k, v, o);
    if (o.return_weights || o.return_scores || o.round) return attention<T>(q, k, v, o);
    AttentionResult<T, 4> r;
    r.output = fused_attention<T>(q, k, v, o);
    return r;
  } catch (const backends::Unsupported& e) {
    throw InputError(fmt::format("eval attention --backend {}: {}", a.backend, e.what()));
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("eval attention: {}", e.what()));
  }
}

template <class T>
void eval_attention(const AttentionArgs& a, Precision p) {
  const bool packed = a.q_heads > 0 || a.kv_heads > 0;
  if (packed && (a.q_heads == 0 || a.kv_heads == 0)) throw InputError("--q-heads and --kv-heads go together");
  xt::xarray<T> q = checked_input<T>(a.q, "--q", p, 2);
  xt::xarray<T> k = checked_input<T>(a.k, "--k", p, 2);
  xt::xarray<T> v = checked_input<T>(a.v, "--v", p, 2);
  // Bring everything to (B, H, S, D); remember how to give the output back.
  Shape lead;  // leading batch shape for the (…, S, D) layout
  xt::xtensor<T, 4> q4, k4, v4;
  if (packed) {
    q4 = unpack_heads<T>(q, a.q_heads, "--q " + a.q);
    k4 = unpack_heads<T>(k, a.kv_heads, "--k " + a.k);
    v4 = unpack_heads<T>(v, a.kv_heads, "--v " + a.v);
  } else if (q.dimension() == 4 && k.dimension() == 4 && v.dimension() == 4) {
    q4 = reshaped_taking<xt::xtensor<T, 4>>(q, shape_of(q));
    k4 = reshaped_taking<xt::xtensor<T, 4>>(k, shape_of(k));
    v4 = reshaped_taking<xt::xtensor<T, 4>>(v, shape_of(v));
  } else {
    lead = Shape(q.shape().begin(), q.shape().end() - 2);
    for (const auto& [x, name] : {std::pair{&k, "--k"}, std::pair{&v, "--v"}})
      if (Shape(x->shape().begin(), x->shape().end() - 2) != lead)
        throw InputError(fmt::format("{}: leading (batch) shape {} differs from --q's {}", name, dims_string(shape_of(*x)), dims_string(shape_of(q))));
    const std::size_t b = std::accumulate(lead.begin(), lead.end(), std::size_t(1), std::multiplies<>());
    auto to4 = [b](xt::xarray<T>& x) {
      return reshaped_taking<xt::xtensor<T, 4>>(x, {b, 1, x.shape(x.dimension() - 2), x.shape(x.dimension() - 1)});
    };
    q4 = to4(q);
    k4 = to4(k);
    v4 = to4(v);
  }
  AttentionOptions<T> options;
  if (a.scale) options.scale = T(*a.scale);
  options.causal = a.causal || a.bottom_right;
  options.alignment = a.bottom_right ? CausalAlignment::bottom_right : CausalAlignment::top_left;
  options.softcap = T(a.softcap);
  options.return_weights = !a.weights.empty();
  apply_cache<T>(a.cache, p, k4, v4, options);  // past keys/values, key lengths, window, score stage
  // After the cache, whose past keys are scored too: scores beyond the computed type's range
  // (float16's 65504 for float16 inputs) become ±inf: a row of −inf reads as fully masked (a
  // zero output, silently), +inf gives NaN. |s_ij| ≤ |scale|·D·max|q|·max|k|: refuse when that
  // may overflow.
  {
    const double largest = p == Precision::float16 ? 65504.0 : double(std::numeric_limits<T>::max());
    const char* type = p == Precision::float16 ? "float16" : sizeof(T) == 4 ? "float32" : "float64";
    const double scale = a.scale ? std::abs(*a.scale) : 1 / std::sqrt(double(q4.shape(3)));
    const double mq = xt::amax(xt::abs(q4))(), mk = xt::amax(xt::abs(k4))();
    if (scale > 0 && mq > 0 && mk > 0 &&
        std::log(scale) + std::log(double(q4.shape(3))) + std::log(mq) + std::log(mk) >
            std::log(largest) - 1)
      throw InputError(fmt::format("--q {} / --k {}: the scores may overflow {} (|scale|·D·max|q|·max|k| = {:.3g}·{}·{:.3g}·{:.3g}); "
                                   "scale the inputs down{}", a.q, a.k, type, scale, q4.shape(3), mq, mk,
                                   p == Precision::float64 ? "" : " or use float64"));
  }
  const Shape scores = {q4.shape(0), q4.shape(1), q4.shape(2), k4.shape(2)};
  if (!a.mask.empty()) {
    const npy::Array m = load_npy(a.mask, "--mask");
    // In the (…, S, D) layout the mask broadcasts against (…, Sq, Sk), then folds like the inputs.
    Shape target = scores;
    if (!lead.empty() || (!packed && q.dimension() == 2)) {
      target = lead;
      target.push_back(scores[2]);
      target.push_back(scores[3]);
    }
    if (m.dtype == "bool") {
      options.allowed = broadcast_mask(npy::to_xarray<bool>(m), target, scores, a.mask);
    } else if (m.dtype.rfind("float", 0) == 0) {
      for (double x : m.values) {
        if (std::isnan(x)) throw InputError(fmt::format("--mask {}: holds NaN", a.mask));
        if (x == HUGE_VAL) throw InputError(fmt::format("--mask {}: holds +inf (only -inf hides a key)", a.mask));
      }
      options.bias = broadcast_mask(npy::to_xarray<T>(m), target, scores, a.mask);
      if (p == Precision::float16)  // stored in float16 with the inputs
        for (auto& x : *options.bias) x = T(round_to_half(double(x)));
    } else {
      throw InputError(fmt::format("--mask {}: dtype {} (a mask is bool, True = may attend, or float, added)", a.mask, m.dtype));
    }
  }
  const bool half = p == Precision::float16;
  if (half) {
    // float16 as ONNX's reference (NumPy) computes it: Q and K each times √scale, stored in
    // float16; every later stored value rounded to float16 through the softmax (through the
    // softcapped scores with --nonpad-kv-seqlen, whose float64 mask the reference adds);
    // the outputs rounded once. See onnx/attention_node.hpp.
    xt::xtensor<T, 4> k_scaled = k4;
    if constexpr (std::is_same_v<T, double>)
      onnx::apply_float16_plan(q4, k_scaled, a.scale, onnx::float16_rounded_through(options.kv_lengths.has_value(), std::nullopt),
                               options);
    AttentionResult<T, 4> rh = compute_attention<T>(a, q4, k_scaled, v4, options);
    return finish_attention<T>(a, packed, q, lead, scores, options, rh, k4, v4, true);
  }
  AttentionResult<T, 4> r = compute_attention<T>(a, q4, k4, v4, options);
  finish_attention<T>(a, packed, q, lead, scores, options, r, k4, v4, false);
}

// ------------------------------------------------------------------------------------------
struct MhaArgs {
  std::string x, w_in, b_in, w_out, b_out, out, weights;
  std::size_t heads = 0;
  bool causal = false;
};

template <class T>
void eval_mha(const MhaArgs& a, Precision p) {
  xt::xarray<T> x = checked_input<T>(a.x, "--x", p, 2);
  if (x.dimension() == 2) x = xt::expand_dims(x, 0);
  if (x.dimension() != 3) throw InputError(fmt::format("--x {}: shape {}, expected (B, S, d) or (S, d)", a.x, dims_string(shape_of(x))));
  const std::size_t d = x.shape(2);
  auto param = [&](const std::string& path, const char* option, const Shape& want) {
    xt::xarray<T> w = checked_input<T>(path, option, p, 1);
    if (shape_of(w) != want)
      throw InputError(fmt::format("{} {}: shape {}, expected {} for d_model {}", option, path, dims_string(shape_of(w)), dims_string(want), d));
    return w;
  };
  MhaParameters<T> params;
  params.in_proj_weight = param(a.w_in, "--in-proj-weight", {3 * d, d});
  params.in_proj_bias = param(a.b_in, "--in-proj-bias", {3 * d});
  params.out_proj_weight = param(a.w_out, "--out-proj-weight", {d, d});
  params.out_proj_bias = param(a.b_out, "--out-proj-bias", {d});
  if (a.heads == 0 || d % a.heads != 0)
    throw InputError(fmt::format("--heads {}: d_model {} is not divisible by the number of heads", a.heads, d));
  MhaOptions<T> options;
  options.need_weights = !a.weights.empty();
  options.causal = a.causal;  // torch's attn_mask = triu(ones, 1), the kernel's top-left causal mask
  MhaResult<T, 3> r;
  try {
    const xt::xtensor<T, 3> x3 = x;
    // The weights are formed by the reference kernel alone; without them, the fused one (block
    // products, no Sq × Sk matrix, no BLAS to open).
    if (options.need_weights) r = multi_head_self_attention<T, 3>(x3, params, a.heads, options);
    else r.output = multi_head_attention_fused<T>(x3, x3, x3, params, a.heads, options);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("eval mha: {}", e.what()));
  }
  const xt::xarray<T> out = r.output, weights = r.weights;
  save_results<T>({{a.out, "output", &out}, {a.weights, "weights", &weights}});
}

// ------------------------------------------------------------------------------------------
struct LinearArgs {
  std::string q, k, v, form, out;
  std::size_t chunk = 0;
};

template <class T>
void eval_linear(const LinearArgs& a, Precision p) {
  auto as2d = [&](const std::string& path, const char* option) {
    xt::xarray<T> x = checked_input<T>(path, option, p, 2);
    if (x.dimension() != 2) throw InputError(fmt::format("{} {}: shape {}, expected (n, d)", option, path, dims_string(shape_of(x))));
    return reshaped_taking<xt::xtensor<T, 2>>(x, shape_of(x));
  };
  auto q = as2d(a.q, "--q"), k = as2d(a.k, "--k");
  const auto v = as2d(a.v, "--v");
  if (k.shape() != q.shape()) throw InputError(fmt::format("--k {}: shape {} differs from --q's {}", a.k, dims_string(shape_of(k)), dims_string(shape_of(q))));
  if (v.shape(0) != q.shape(0)) throw InputError(fmt::format("--v {}: {} rows, --q has {}", a.v, v.shape(0), q.shape(0)));
  xt::xtensor<T, 2> o;
  if (a.form == "parallel") o = linear_attention_parallel<T>(elu_plus_one<T, 2>(q), elu_plus_one<T, 2>(k), v);
  else if (a.form == "recurrent") o = linear_attention_recurrent<T>(elu_plus_one<T, 2>(q), elu_plus_one<T, 2>(k), v);
  else if (a.chunk == 0) throw InputError("--chunk: the chunked form needs a chunk size >= 1");
  else {  // the chunked form's fast kernel and feature map (in place: q and k are not read again), as attention's is the fused kernel
    elu_plus_one_fast_in_place(q);
    elu_plus_one_fast_in_place(k);
    o = linear_attention_chunked_fast<T>(q, k, v, a.chunk);
  }
  const xt::xarray<T> out = reshaped_taking<xt::xarray<T>>(o, shape_of(o));  // no copy (4 MB at n = 16384, d = 64)
  save_results<T>({{a.out, "output", &out}});
}

// ------------------------------------------------------------------------------------------
struct PositionalArgs {
  std::size_t length = 0, dim = 0;
  std::string dtype = "float64", out;
};

void eval_positional(const PositionalArgs& a) {
  if (a.length == 0) throw InputError("--length: must be at least 1");
  if (a.dim == 0) throw InputError("--dim: must be at least 1");
  if (a.length > (std::size_t{1} << 31) / a.dim)
    throw InputError(fmt::format("--length {} --dim {}: more than 2^31 values", a.length, a.dim));
  if (a.dtype == "float32") npy::save(a.out, xt::xarray<float>(positional_encoding<float>(a.length, a.dim)));
  else npy::save(a.out, xt::xarray<double>(positional_encoding<double>(a.length, a.dim)));
}

// Dispatch on the precision of the first input (its header says it).
template <class Args, class F32, class F64>
void in_precision(const Args& args, const std::string& path, const char* option, F32 f32, F64 f64) {
  if (precision_of(read_npy_info(path, option), option, path) == Precision::float32) f32(args, Precision::float32);
  else f64(args, Precision::float64);
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto* eval = app.add_subcommand("eval", "Run our kernels on your .npy inputs (attention: the fused one; linear attention's chunked form: the fast one)");
  eval->require_subcommand(1);

  auto at = std::make_shared<AttentionArgs>();
  auto* att = eval->add_subcommand("attention", "softmax(scale·Q Kᵀ + mask) V; inputs (…, S, D), (B, H, S, D) or packed (B, S, H·D)");
  att->add_option("--q", at->q, "queries .npy")->required();
  att->add_option("--k", at->k, "keys .npy")->required();
  att->add_option("--v", at->v, "values .npy")->required();
  att->add_option("--mask", at->mask, "bool (True = may attend) or float (added) mask, broadcast to the scores");
  att->add_flag("--causal", at->causal, "causal mask, top-left aligned (query i sees keys j <= i)");
  att->add_flag("--causal-bottom-right", at->bottom_right, "causal mask, bottom-right aligned (j <= i + Sk - Sq)");
  att->add_option("--scale", at->scale, "scale of Q Kᵀ (default 1/sqrt(D))");
  att->add_option("--softcap", at->softcap, "softcap·tanh(scores/softcap) before the mask (0 = off)")->check(CLI::NonNegativeNumber);
  att->add_option("--q-heads", at->q_heads, "packed layout: query heads H")->check(CLI::NonNegativeNumber);
  att->add_option("--kv-heads", at->kv_heads, "packed layout: key/value heads G (H a multiple of G)")
      ->check(CLI::NonNegativeNumber);
  att->add_option("--out", at->out, "output .npy")->required();
  att->add_option("--backend", at->backend,
                  "compute with this backend (plain, fused: see lessons backends); default: the fused kernel, the plain one "
                  "when the weights, a score stage or float16 are asked for");
  att->add_option("--weights", at->weights, "also write the attention weights .npy");
  att->add_option("--past-key", at->cache.past_key, "KV cache: past keys (B, Hkv, P, D); query i sits at position P + i");
  att->add_option("--past-value", at->cache.past_value, "KV cache: past values (B, Hkv, P, Dv)");
  att->add_option("--present-key", at->cache.present_key, "write concat(past, K) (B, Hkv, P + Sk, D) .npy");
  att->add_option("--present-value", at->cache.present_value, "write concat(past, V) (B, Hkv, P + Sk, Dv) .npy");
  att->add_option("--nonpad-kv-seqlen", at->cache.nonpad,
                  "external cache: integer .npy (B,), valid keys per batch; query i sits at L_b - Sq + i");
  att->add_option("--left-window", at->cache.left, "sliding window: keys at most this far back (-1 = unbounded)");
  att->add_option("--right-window", at->cache.right, "sliding window: keys at most this far ahead (-1 = unbounded)");
  att->add_option("--qk-output", at->cache.qk_output,
                  "MODE FILE: write the scores at ONNX's qk_matmul_output_mode MODE (0 scaled, 1 softcapped, 2 masked, 3 softmax)")
      ->expected(2);
  att->callback([at] {
    check_cache_args(at->cache, at->bottom_right);
    if (!at->backend.empty()) backend_named(at->backend);  // an unknown name: refused before anything is read
    if (at->scale && !std::isfinite(*at->scale)) throw InputError(fmt::format("--scale {}: not a finite number", *at->scale));
    if (!std::isfinite(at->softcap)) throw InputError(fmt::format("--softcap {}: not a finite number", at->softcap));
    check_output_path(at->out, "--out");
    check_output_path(at->weights, "--weights");
    if (precision_of(read_npy_info(at->q, "--q"), "--q", at->q, true) == Precision::float16) eval_attention<double>(*at, Precision::float16);
    else in_precision(*at, at->q, "--q", eval_attention<float>, eval_attention<double>);
  });

  auto mh = std::make_shared<MhaArgs>();
  auto* mha = eval->add_subcommand("mha", "nn.MultiheadAttention forward (batch_first), PyTorch's parameter layout (the fused kernels; with --weights, the reference)");
  mha->add_option("--x", mh->x, "inputs (B, S, d) or (S, d)")->required();
  mha->add_option("--in-proj-weight", mh->w_in, "(3d, d): W_Q, W_K, W_V stacked")->required();
  mha->add_option("--in-proj-bias", mh->b_in, "(3d)")->required();
  mha->add_option("--out-proj-weight", mh->w_out, "(d, d)")->required();
  mha->add_option("--out-proj-bias", mh->b_out, "(d)")->required();
  mha->add_option("--heads", mh->heads, "number of heads")->required()->check(CLI::NonNegativeNumber);
  mha->add_flag("--causal", mh->causal, "causal self-attention");
  mha->add_option("--out", mh->out, "output .npy (B, S, d)")->required();
  mha->add_option("--weights", mh->weights, "per-head weights .npy (B, H, S, S)");
  mha->callback([mh] {
    check_output_path(mh->out, "--out");
    check_output_path(mh->weights, "--weights");
    in_precision(*mh, mh->x, "--x", eval_mha<float>, eval_mha<double>);
  });

  auto la = std::make_shared<LinearArgs>();
  auto* lin = eval->add_subcommand("linear-attention", "causal linear attention with φ = elu + 1 applied to Q and K");
  lin->add_option("--q", la->q, "queries (n, d_k)")->required();
  lin->add_option("--k", la->k, "keys (n, d_k)")->required();
  lin->add_option("--v", la->v, "values (n, d_v)")->required();
  lin->add_option("--form", la->form, "parallel | recurrent | chunked")->required()->check(CLI::IsMember({"parallel", "recurrent", "chunked"}));
  lin->add_option("--chunk", la->chunk, "chunk size B >= 1 (chunked form)")->check(CLI::NonNegativeNumber);
  lin->add_option("--out", la->out, "output .npy (n, d_v)")->required();
  auto lf = std::make_shared<LinearFamilyArgs>();
  add_linear_family_options(*lin, *lf);  // ONNX LinearAttention's layout (cmd_eval_linear.cpp)
  lin->callback([la, lf] {
    if (linear_family_requested(*lf)) return eval_linear_family(*lf, {la->q, la->k, la->v, la->form, la->out, la->chunk});
    check_output_path(la->out, "--out");
    in_precision(*la, la->q, "--q", eval_linear<float>, eval_linear<double>);
  });

  auto pa = std::make_shared<PositionalArgs>();
  auto* pe = eval->add_subcommand("positional-encoding", "sinusoidal PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(...)");
  pe->add_option("--length", pa->length, "positions N (rows 0 ... N-1)")->required()->check(CLI::NonNegativeNumber);
  pe->add_option("--dim", pa->dim, "model dimension D (odd D: the last column is the sine of one more pair)")->required()->check(CLI::NonNegativeNumber);
  pe->add_option("--dtype", pa->dtype, "float64 (default) or float32: the precision computed in")->check(CLI::IsMember({"float32", "float64"}));
  pe->add_option("--out", pa->out, "output .npy (N, D)")->required();
  pe->callback([pa] {
    check_output_path(pa->out, "--out");
    eval_positional(*pa);
  });
  add_eval_layers(*eval);
}

}  // namespace vl::cli
