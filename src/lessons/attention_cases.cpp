#include "lessons/attention_cases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xview.hpp>


namespace vl::lessons {

namespace {

enum MaskKind { kNone, kBool, kFloat };
enum Causal { kNotCausal, kTopLeft, kBottomRight };

double row_norm(const backends::Tensor4<double>& t, std::size_t b, std::size_t h, std::size_t i) {
  double s = 0;
  for (std::size_t x = 0; x < t.shape(3); ++x) s += t(b, h, i, x) * t(b, h, i, x);
  return std::sqrt(s);
}

}  // namespace

std::vector<CaseTerm> attention_case_terms(bool window_always, int max_keys) {
  return {{"B", 1, 3, 1, {}},
          {"Hkv", 1, 3, 1, {}},
          {"group", 1, 3, 1, {}},
          {"Sq", 1, 9, 1, {}},
          {"Sk", 1, max_keys, 1, {}},
          {"D", 1, 19, 1, {}},
          {"Dv", 1, 9, 1, {}},
          {"mask", kNone, kFloat, kNone, {"none", "bool", "float"}},
          {"mask_rank", 0, 1, 0, {"2", "4"}},
          {"causal", kNotCausal, kBottomRight, kNotCausal, {"no", "top-left", "bottom-right"}},
          {"window", window_always ? 0 : -1, 4, window_always ? 0 : -1, {}},
          {"softcap", 0, 1, 0, {"none", "5"}},
          {"scale", 0, 1, 0, {"1/sqrt(D)", "0.3"}},
          {"kv_lengths", 0, 1, 0, {"none", "drawn"}},
          {"key", 0, 10, 0, {}}};
}

std::vector<std::vector<int>> attention_anchor_cases() {
  //        B  Hkv group Sq Sk D  Dv  mask  rank causal        window softcap scale kv_lengths key
  return {{2, 1, 2, 6, 8, 5, 3, kBool, 0, kNotCausal, -1, 0, 0, 0, 1},
          {1, 2, 2, 7, 7, 4, 4, kFloat, 1, kNotCausal, -1, 1, 0, 0, 3},
          {1, 1, 2, 8, 8, 3, 3, kNone, 0, kTopLeft, 1, 0, 1, 0, 2},
          {2, 2, 1, 4, 9, 6, 2, kNone, 0, kBottomRight, 2, 0, 0, 0, 4},
          {2, 1, 1, 5, 8, 3, 2, kNone, 0, kNotCausal, 3, 0, 0, 1, 0},
          {1, 1, 1, 6, 6, 2, 2, kNone, 0, kNotCausal, 0, 0, 0, 0, 3},
          {2, 1, 2, 7, 3, 2, 2, kBool, 1, kBottomRight, -1, 0, 0, 1, 1}};
}

AttentionCase attention_case(const Case& c) {
  const std::size_t B = c["B"], Hkv = c["Hkv"], Hq = Hkv * c["group"], Sq = c["Sq"], Sk = c["Sk"], D = c["D"], Dv = c["Dv"];
  numpy::Generator rng(c.data_seed());
  AttentionCase a;
  // Q and K at half a standard normal keep a row's scores within a few units of each other.
  a.q = 0.5 * rng.standard_normal(std::vector<std::size_t>{B, Hq, Sq, D});
  a.k = 0.5 * rng.standard_normal(std::vector<std::size_t>{B, Hkv, Sk, D});
  a.v = rng.standard_normal(std::vector<std::size_t>{B, Hkv, Sk, Dv});
  AttentionOptions<double>& o = a.options;
  o.return_weights = true;
  const int mask = c["mask"];
  const bool rank4 = c["mask_rank"] == 1;
  const std::vector<std::size_t> mask_shape = rank4 ? std::vector<std::size_t>{B, Hq, Sq, Sk} : std::vector<std::size_t>{Sq, Sk};
  // u in [0, 1): below the threshold hidden. Query i always sees key i mod Sk (u = 1) and, with
  // two keys or more, never key (i + 1) mod Sk (u = 0), in every (batch, head) of a rank-4 mask.
  xt::xarray<double> u = rng.random(mask_shape);
  const std::size_t rows = u.size() / (Sq * Sk);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < Sq; ++i) {
      u.flat(r * Sq * Sk + i * Sk + i % Sk) = 1;
      if (Sk >= 2) u.flat(r * Sq * Sk + i * Sk + (i + 1) % Sk) = 0;
    }
  double bias_spread = 0;
  if (mask == kBool) o.allowed = xt::xarray<bool>(u >= 0.25);
  if (mask == kFloat) {
    // Finite values in [−1, 1], and −∞ (a hidden key) for about one in five.
    o.bias = xt::xarray<double>(xt::where(u < 0.2, -std::numeric_limits<double>::infinity(), 2.5 * u - 1.5));
    bias_spread = 2;
  }
  o.causal = c["causal"] != kNotCausal;
  o.alignment = c["causal"] == kBottomRight ? CausalAlignment::bottom_right : CausalAlignment::top_left;
  o.left_window = c["window"];
  if (c["softcap"]) o.softcap = 5;
  if (c["scale"]) o.scale = 0.3;
  std::vector<std::size_t> lengths(B, Sk);
  if (c["kv_lengths"]) o.kv_lengths = lengths = draw_key_lengths(rng, B, Sk);

  // The truth, from the definition (ops/attention.hpp): query i sits at position p = i + offset
  // (offset L_b − Sq bottom-right, else 0) and sees key j iff j < L_b, not j > p under the causal
  // mask, not j < p − w in a window, and the boolean mask allows it and the additive one is not −∞.
  a.visible = xt::zeros<bool>({B, Hq, Sq, Sk});
  const double scale = o.scale ? *o.scale : 1 / std::sqrt(double(D));
  double max_q = 0, max_k = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hq; ++h) {
      for (std::size_t i = 0; i < Sq; ++i) max_q = std::max(max_q, row_norm(a.q, b, h, i));
      for (std::size_t i = 0; i < Sq; ++i)
        for (std::size_t j = 0; j < Sk; ++j) {
          const auto L = std::ptrdiff_t(lengths[b]);
          const std::ptrdiff_t p = std::ptrdiff_t(i) + (o.alignment == CausalAlignment::bottom_right ? L - std::ptrdiff_t(Sq) : 0);
          const auto jj = std::ptrdiff_t(j);
          bool sees = jj < L && !(o.causal && jj > p) && !(o.left_window >= 0 && jj < p - o.left_window);
          const std::size_t mb = rank4 ? b : 0, mh = rank4 ? h : 0;
          if (o.allowed) sees = sees && (rank4 ? (*o.allowed)(mb, mh, i, j) : (*o.allowed)(i, j));
          if (o.bias) sees = sees && std::isfinite(rank4 ? (*o.bias)(mb, mh, i, j) : (*o.bias)(i, j));
          a.visible(b, h, i, j) = sees;
        }
    }
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hkv; ++h)
      for (std::size_t j = 0; j < Sk; ++j) max_k = std::max(max_k, row_norm(a.k, b, h, j));
  const double products = 2 * scale * max_q * max_k;
  a.score_spread = (o.softcap > 0 ? std::min(products, 2 * o.softcap) : products) + bias_spread;
  return a;
}

std::vector<CaseTerm> causal_case_terms(int min_s) {
  return {{"B", 1, 3, 1, {}},
          {"Hkv", 1, 3, 1, {}},
          {"group", 1, 3, 1, {}},
          {"S", min_s, 8, min_s, {}},
          {"extra_keys", 0, 3, 0, {}},
          {"D", 1, 19, 1, {}},
          {"Dv", 1, 9, 1, {}},
          {"mask", kNone, kFloat, kNone, {"none", "bool", "float"}},
          {"mask_rank", 0, 1, 0, {"2", "4"}},
          {"window", -1, 4, -1, {}},
          {"softcap", 0, 1, 0, {"none", "5"}},
          {"scale", 0, 1, 0, {"1/sqrt(D)", "0.3"}},
          {"p", 1, 7, 1, {}}};
}

std::vector<std::vector<int>> causal_anchor_cases() {
  //        B  Hkv group S extra D  Dv  mask  rank window softcap scale p
  return {{1, 1, 1, 3, 0, 4, 3, kNone, 0, -1, 0, 0, 1},
          {2, 1, 2, 6, 2, 5, 3, kBool, 0, -1, 0, 0, 3},
          {1, 2, 2, 7, 1, 4, 4, kFloat, 1, -1, 1, 0, 4},
          {1, 1, 2, 8, 0, 3, 3, kNone, 0, 1, 0, 1, 5}};
}

std::vector<std::size_t> draw_key_lengths(numpy::Generator& rng, std::size_t B, std::size_t Sk) {
  const xt::xarray<double> u = rng.random({B});
  std::vector<std::size_t> lengths(B);
  for (std::size_t b = 0; b < B; ++b)
    lengths[b] = b == 0 && Sk >= 2 ? 1 + std::size_t(u(b) * double(Sk - 1)) : std::min(Sk, std::size_t(u(b) * double(Sk + 1)));
  return lengths;
}

backends::Tensor4<double> normal_like(numpy::Generator& rng, const backends::Tensor4<double>& like, double sd) {
  return sd * rng.standard_normal(std::vector<std::size_t>(like.shape().begin(), like.shape().end()));
}

AttentionCase causal_case(const Case& c) {
  static const std::vector<CaseTerm> terms = attention_case_terms(false);
  std::vector<int> values;
  for (const CaseTerm& t : terms) {
    if (t.name == "Sq") values.push_back(c["S"]);
    else if (t.name == "Sk") values.push_back(c["S"] + c["extra_keys"]);
    else if (t.name == "causal") values.push_back(kTopLeft);
    else if (t.name == "kv_lengths" || t.name == "key") values.push_back(0);
    else values.push_back(c[t.name]);
  }
  return attention_case(Case(&terms, std::move(values), c.data_seed()));
}

}  // namespace vl::lessons
