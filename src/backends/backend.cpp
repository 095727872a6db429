// The operations' defaults (Unsupported), the forwarding decorator and the shorthands.
#include "backends/backend.hpp"

#include <xtensor/xview.hpp>

namespace vl::backends {

std::string to_string(Op op) {
  switch (op) {
    case Op::attention: return "attention";
    case Op::attention_weights: return "attention-weights";
    case Op::attention_scores: return "attention-scores";
    case Op::attention_storage_rounding: return "attention-storage-rounding";
    case Op::attention_backward: return "attention-backward";
    case Op::multi_head_attention: return "multi-head-attention";
    case Op::positional_encoding: return "positional-encoding";
    case Op::linear_parallel: return "linear-parallel";
    case Op::linear_recurrent: return "linear-recurrent";
    case Op::linear_chunked: return "linear-chunked";
    case Op::layer_norm: return "layer-norm";
    case Op::encoder_layer: return "encoder-layer";
    case Op::decoder_layer: return "decoder-layer";
    case Op::decoder_step: return "decoder-step";
    case Op::shift_right: return "shift-right";
    case Op::linear_family: return "linear-family";
  }
  return "?";
}

void Backend::lacks(Op op, const std::string& why) const { throw Unsupported(op, lacking(op, why)); }
std::string Backend::lacking(Op op, const std::string& why) const {
  return "backend '" + name() + "' has no " + to_string(op) + (why.empty() ? "" : " (" + why + ")");
}

// The defaults: a backend that does not override an operation lacks it. (The parameters are
// named for the forwarding call below, and unused here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define VL_DEFINE_LACKING(R, NAME, PARAMETERS, ARGUMENTS) \
  R Backend::NAME PARAMETERS const { lacks(Op::NAME); }
VL_BACKEND_OPERATIONS(VL_DEFINE_LACKING)
#undef VL_DEFINE_LACKING
#pragma GCC diagnostic pop

Decorator::Decorator(std::shared_ptr<const Backend> base, std::string name) : base_(std::move(base)), name_(std::move(name)) {}

// The decorator: every operation goes to the base.
#define VL_DEFINE_FORWARD(R, NAME, PARAMETERS, ARGUMENTS) \
  R Decorator::NAME PARAMETERS const { return base_->NAME ARGUMENTS; }
VL_BACKEND_OPERATIONS(VL_DEFINE_FORWARD)
#undef VL_DEFINE_FORWARD

MhaResult<double, 2> multi_head_attention_2d(const Backend& b, const Matrix& query, const Matrix& key, const Matrix& value,
                                             const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o) {
  auto as3 = [](const Matrix& x) -> xt::xtensor<double, 3> {
    return xt::reshape_view(x, std::array<std::size_t, 3>{1, x.shape(0), x.shape(1)});
  };
  const MhaResult<double, 3> r = b.multi_head_attention(as3(query), as3(key), as3(value), p, heads, o);
  MhaResult<double, 2> out;
  out.output = xt::view(r.output, 0);
  if (o.need_weights) out.weights = xt::view(r.weights, 0);
  return out;
}

Matrix positional_encoding_table(const Backend& b, std::size_t n, std::size_t d) {
  std::vector<double> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = double(i);
  return b.positional_encoding(positions, d);
}

}  // namespace vl::backends
