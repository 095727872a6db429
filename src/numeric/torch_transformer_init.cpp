// nn.TransformerEncoderLayer's and TransformerDecoderLayer's initial parameters, in torch's
// construction order (see torch_transformer_init.hpp).
#include "numeric/torch_transformer_init.hpp"

#include <stdexcept>
#include <string>

namespace vl::torch_rng {

namespace {
void check_sizes(const char* what, std::size_t d, std::size_t heads, std::size_t d_ff) {
  if (d == 0 || heads == 0 || d_ff == 0 || d % heads != 0)
    throw std::invalid_argument(std::string(what) + ": d_model " + std::to_string(d) + ", heads " + std::to_string(heads) +
                                ", dim_feedforward " + std::to_string(d_ff) +
                                ": all must be positive and heads must divide d_model");
}
}  // namespace

template <class T>
EncoderLayerParameters<T> encoder_layer_init(Generator& gen, std::size_t d, std::size_t heads, std::size_t d_ff) {
  check_sizes("encoder_layer_init", d, heads, d_ff);
  EncoderLayerParameters<T> p;
  p.self_attn = mha_init<T>(gen, d, heads);
  p.linear1 = linear_init<T>(gen, d, d_ff);
  p.linear2 = linear_init<T>(gen, d_ff, d);
  p.norm1 = layer_norm_init<T>(d);
  p.norm2 = layer_norm_init<T>(d);
  return p;
}

template <class T>
DecoderLayerParameters<T> decoder_layer_init(Generator& gen, std::size_t d, std::size_t heads, std::size_t d_ff) {
  check_sizes("decoder_layer_init", d, heads, d_ff);
  DecoderLayerParameters<T> p;
  p.self_attn = mha_init<T>(gen, d, heads);
  p.multihead_attn = mha_init<T>(gen, d, heads);
  p.linear1 = linear_init<T>(gen, d, d_ff);
  p.linear2 = linear_init<T>(gen, d_ff, d);
  p.norm1 = layer_norm_init<T>(d);
  p.norm2 = layer_norm_init<T>(d);
  p.norm3 = layer_norm_init<T>(d);
  return p;
}

template EncoderLayerParameters<double> encoder_layer_init<double>(Generator&, std::size_t, std::size_t, std::size_t);
template EncoderLayerParameters<float> encoder_layer_init<float>(Generator&, std::size_t, std::size_t, std::size_t);
template DecoderLayerParameters<double> decoder_layer_init<double>(Generator&, std::size_t, std::size_t, std::size_t);
template DecoderLayerParameters<float> decoder_layer_init<float>(Generator&, std::size_t, std::size_t, std::size_t);

}  // namespace vl::torch_rng
