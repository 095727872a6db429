// Lesson positions: the broken backends (see positions_broken_backends.hpp). Each table bug is
// the base backend's table, edited.
#include "lessons/positions/positions_broken_backends.hpp"

#include <utility>

#include <xtensor/xview.hpp>

#include "kernels/reference/positional_encoding.hpp"

namespace vl::lessons::positions {

Matrix SinCosSwapped::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  Matrix pe = base().positional_encoding(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) std::swap(pe(r, 2 * i), pe(r, 2 * i + 1));
  return pe;
}

Matrix ExponentIOverD::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  // 10000^(i/d) = 10000^(2i/(2d)): the wrong table is the first d columns of the one for 2d.
  return xt::view(base().positional_encoding(positions, 2 * d), xt::all(), xt::range(0, d));
}

Matrix CosReplacedBySin::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  Matrix pe = base().positional_encoding(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) pe(r, 2 * i + 1) = pe(r, 2 * i);
  return pe;
}

Matrix Float32Table::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  const std::vector<float> p(positions.begin(), positions.end());
  return xt::cast<double>(positional_encoding_at<float>(p, d));
}

Matrix Pe0Everywhere::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return base().positional_encoding(std::vector<double>(positions.size(), 0.0), d);
}

Matrix PositionsAfterAttention::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return xt::zeros<double>({positions.size(), d});
}

MhaResult<double, 3> PositionsAfterAttention::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                                   const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                                   std::size_t heads, const MhaOptions<double>& o) const {
  // output (B, Sq, d) += PE (Sq, d), broadcast over the batch
  MhaResult<double, 3> r = base().multi_head_attention(query, key, value, p, heads, o);
  r.output += backends::positional_encoding_table(base(), query.shape(1), query.shape(2));
  return r;
}

MhaResult<double, 3> EncoderWithCausalMask::multi_head_attention(const xt::xtensor<double, 3>& query, const xt::xtensor<double, 3>& key,
                                                                 const xt::xtensor<double, 3>& value, const MhaParameters<double>& p,
                                                                 std::size_t heads, const MhaOptions<double>& o) const {
  MhaOptions<double> causal = o;
  causal.causal = true;
  return base().multi_head_attention(query, key, value, p, heads, causal);
}

}  // namespace vl::lessons::positions
