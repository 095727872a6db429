// Lesson masking: the checks of its claims, each with the broken backends it must reject
// (masking_broken_backends.hpp), every one a decorator over our plain backend.
#include <memory>
#include <vector>

#include "backends/registry.hpp"
#include "lessons/masking/masking.hpp"
#include "lessons/masking/masking_broken_backends.hpp"
#include "lessons/outputs_only.hpp"

namespace vl::lessons::masking {

Lesson lesson() {
  Lesson l;
  l.id = "masking";
  l.spec_file = "specs/masking.md";
  l.listings.push_back({"masking.main", "vl::lessons::masking::listing_main", listing_main, {backends::Op::multi_head_attention}});

  const auto plain = backends::plain();
  const auto diagonal = std::make_shared<CausalMaskBuiltWrong>(plain, "causal-diagonal-blocked", diagonal_blocked);
  const auto future = std::make_shared<CausalMaskBuiltWrong>(plain, "causal-one-future-key", one_future_key);
  const auto top_left = std::make_shared<CausalMaskBuiltWrong>(plain, "causal-always-top-left", always_top_left);
  const auto bottom_right = std::make_shared<CausalMaskBuiltWrong>(plain, "causal-always-bottom-right", always_bottom_right);
  const auto after = std::make_shared<MaskAfterSoftmax>(plain, "mask-after-softmax");
  const auto finite = std::make_shared<FiniteFill>(plain, "fill-minus-1e4");
  const auto unguarded = std::make_shared<UnguardedSoftmax>(plain, "softmax-unguarded");
  const auto padding_dropped = std::make_shared<BooleanMaskDropped>(plain, "boolean-mask-dropped");
  using WindowBug = WindowBuiltWrong::Bug;
  const auto window_wide = std::make_shared<WindowBuiltWrong>(plain, "window-one-key-wider", WindowBug::wider);
  const auto window_narrow = std::make_shared<WindowBuiltWrong>(plain, "window-one-key-narrower", WindowBug::narrower);
  const auto window_dropped = std::make_shared<WindowBuiltWrong>(plain, "window-dropped", WindowBug::dropped);
  const auto lengths_dropped = std::make_shared<CacheBuiltWrong>(plain, "cache-lengths-dropped", CacheBuiltWrong::Bug::lengths_dropped);
  const auto no_shift = std::make_shared<Float16SoftmaxUnshifted>(plain, "float16-softmax-no-max-shift");
  const auto position_dropped = std::make_shared<CacheBuiltWrong>(plain, "cache-position-dropped", CacheBuiltWrong::Bug::position_dropped);

  l.checks.push_back({"masking.masked-weights-zero", "hidden weights exactly 0, rows sum to 1, 6 shapes × 2 alignments × 2 score scales",
                      masked_weights_zero,
                      {broken_backend("mask lets one future key through", future),
                       broken_backend("mask applied after the softmax", after),
                       broken_backend("−1e4 in place of −∞", finite)}});
  l.checks.push_back({"masking.masked-weights-zero", "generated cases: every mask, window, GQA group, Sq ≠ Sk, softcap, key lengths",
                      masked_weights_generated,
                      {broken_backend("mask lets one future key through", future),
                       broken_backend("window one key wider", window_wide),
                       broken_backend("window one key narrower", window_narrow),
                       broken_backend("key-padding mask ignored", padding_dropped),
                       broken_backend("cache lengths ignored", lengths_dropped),
                       broken_backend("a visible key dropped, the rest renormalised (no row sum shows it)",
                                      std::make_shared<VisibleKeyDropped>(plain, "visible-key-dropped"))}});

  const std::vector<NegativeControl> first_position_controls = {broken_backend("mask shifted: diagonal blocked", diagonal),
                                                                  broken_backend("mask lets one future key through", future)};
  l.checks.push_back({"masking.first-position-self", "query 0: weight 1.0 on key 0, output v_0 bit for bit",
                      first_position_self, first_position_controls});
  l.checks.push_back({"masking.first-position-self", "generated cases: GQA, keys past the last query, masks, window, softcap, scale",
                      first_position_generated, first_position_controls});

  // A leak from a later key: the controls of the claims about one causal pass's rows.
  const std::vector<NegativeControl> leak_controls = {broken_backend("mask lets one future key through", future),
                                                      broken_backend("mask applied after the softmax", after)};
  l.checks.push_back({"masking.prefix-unchanged", "positions ≥ p redrawn: outputs before p bit for bit, the others move",
                      prefix_unchanged,
                      leak_controls});
  l.checks.push_back({"masking.prefix-unchanged", "generated cases: positions ≥ p redrawn under any other mask, window, GQA group",
                      prefix_generated,
                      leak_controls});

  l.checks.push_back({"masking.one-pass-equals-decoding", "one causal pass vs. token-by-token decoding with a KV cache",
                      one_pass_equals_decoding,
                      leak_controls});
  l.checks.push_back({"masking.one-pass-equals-decoding", "generated cases: decoding steps with the other masks' rows, window, GQA group",
                      one_pass_generated,
                      leak_controls});

  const std::vector<NegativeControl> alignment_controls = {broken_backend("alignment ignored: always top-left", top_left),
                                                           broken_backend("alignment ignored: always bottom-right", bottom_right)};
  l.checks.push_back({"masking.alignment", "query blocks with Sq < Sk against rows of the full causal pass",
                      alignment,
                      alignment_controls});
  l.checks.push_back({"masking.alignment", "generated cases: query blocks with the other masks' rows, window, GQA group",
                      alignment_generated,
                      alignment_controls});

  const std::vector<NegativeControl> padding_controls = {broken_backend("key-padding mask ignored", padding_dropped)};
  l.checks.push_back({"masking.padding-ignored", "padding keys: weight 0, redrawn keys/values change nothing",
                      padding_ignored,
                      padding_controls});
  l.checks.push_back({"masking.padding-ignored", "generated cases: a key-padding mask on top of any mask, window, alignment, GQA group",
                      padding_generated,
                      padding_controls});

  l.checks.push_back({"masking.fully-masked-row-zero", "rows with no visible key: zero weights, zero output, no NaN",
                      fully_masked_row_zero,
                      {broken_backend("−1e4 in place of −∞", finite),
                       broken_backend("softmax without the guard (NaN, as torch)", unguarded)}});
  l.checks.push_back({"masking.fully-masked-row-zero", "generated cases: rows that no mask, window, alignment or key length leaves a key",
                      fully_masked_generated,
                      {broken_backend("−1e4 in place of −∞", finite),
                       broken_backend("softmax without the guard (NaN, as torch)", unguarded),
                       broken_backend("cache lengths ignored", lengths_dropped)}});

  using NoKey = MhaRowWithoutKey::Bug;
  const std::vector<NegativeControl> mha_controls = {
      broken_backend("NaN at a row with no visible key, as torch's module",
                     std::make_shared<MhaRowWithoutKey>(plain, "mha-no-key-nan", NoKey::nan_as_torch)),
      broken_backend("zero output at a row with no visible key: out_proj.bias dropped",
                     std::make_shared<MhaRowWithoutKey>(plain, "mha-no-key-bias-dropped", NoKey::bias_dropped))};
  l.checks.push_back({"masking.mha-fully-masked-row", "nn.MultiheadAttention, a query with no visible key: zero weights, y = out_proj.bias",
                      mha_fully_masked_row,
                      mha_controls});
  l.checks.push_back({"masking.mha-fully-masked-row", "generated cases: heads, head width, S, batch, drawn masks, padding, causal",
                      mha_fully_masked_row_generated,
                      mha_controls});

  l.checks.push_back({"masking.window-independent", "sliding window w: keys more than w back redrawn, those outputs bit for bit",
                      window_independent,
                      {broken_backend("window one key wider", window_wide),
                       broken_backend("window one key narrower", window_narrow),
                       broken_backend("window dropped", window_dropped)}});
  l.checks.push_back({"masking.window-independent", "generated cases: a hidden key moves no output, a visible one does",
                      window_generated,
                      // Not "one key narrower": in bfloat16 and float16 a small weight's move can round away, so this
                      // check requires moves in float64 and float32 only; the sweep above and the weights' generated
                      // check reject it in every precision.
                      {broken_backend("window one key wider", window_wide),
                       broken_backend("window dropped", window_dropped),
                       broken_backend("mask lets one future key through", future)}});

  using NanWhere = NanSilenced::Where;
  l.checks.push_back({"masking.nan-propagates", "generated cases: a NaN in a query, a key or a value a query sees reaches its output",
                      nan_generated,
                      {broken_backend("NaN outputs silenced to 0", std::make_shared<NanSilenced>(plain, "nan-output-silenced", NanWhere::output)),
                       broken_backend("NaN inputs read as 0", std::make_shared<NanSilenced>(plain, "nan-inputs-silenced", NanWhere::inputs))}});

  l.checks.push_back({"masking.narrow-formats-round-once", "the doubles either side of every float16 midpoint and of 7,808 bfloat16 ones",
                      narrow_formats_round_once,
                      {broken_code("rounded twice: double → float → the format", rounded_through_float)}});

  const std::vector<NegativeControl> cache_controls = {broken_backend("nonpad_kv_seqlen ignored: the padding attended", lengths_dropped),
                                                       broken_backend("past length ignored: the queries at position 0", position_dropped),
                                                       broken_backend("mask lets one future key through", future)};
  l.checks.push_back({"masking.cache-decoding", "one causal pass vs. chunks decoded through past_key and through nonpad_kv_seqlen",
                      cache_decoding,
                      cache_controls});
  l.checks.push_back({"masking.cache-decoding", "generated cases: chunks of p queries with the other masks' rows, window, GQA group",
                      cache_generated,
                      cache_controls});

  const std::vector<NegativeControl> float16_controls = {broken_backend("float16 softmax without the max shift (exp overflows)", no_shift)};
  l.checks.push_back({"masking.float16-bound", "float16 storage vs float64: |O16 − O64| within the bound derived from u = 2^-11",
                      float16_bound,
                      float16_controls});
  l.checks.push_back({"masking.float16-bound", "generated cases: GQA, Sq ≠ Sk, boolean masks, windows, key lengths, inputs × 1 … 8",
                      float16_generated,
                      float16_controls});

  // The claims about the weights, judged also through the outputs alone (lessons/outputs_only.hpp).
  add_outputs_only(l, {"masking.masked-weights-zero", "masking.first-position-self", "masking.padding-ignored",
                       "masking.fully-masked-row-zero", "masking.mha-fully-masked-row"});
  return l;
}

}  // namespace vl::lessons::masking
