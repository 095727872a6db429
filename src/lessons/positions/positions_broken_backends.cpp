// Lesson positions: the broken backends (see positions_broken_backends.hpp). Each table bug is
// the base backend's table, edited.
#include "lessons/positions/positions_broken_backends.hpp"

#include <utility>

#include <xtensor/xview.hpp>

#include "kernels/reference/positional_encoding.hpp"

namespace vl::lessons::positions {

template <class T>
ops::MatrixOf<T> SinCosSwapped::table(const std::vector<T>& positions, std::size_t d) const {
  ops::MatrixOf<T> pe = base().positional_encoding(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) std::swap(pe(r, 2 * i), pe(r, 2 * i + 1));
  return pe;
}

template <class T>
ops::MatrixOf<T> ExponentIOverD::table(const std::vector<T>& positions, std::size_t d) const {
  // 10000^(i/d) = 10000^(2i/(2d)): the wrong table is the first d columns of the one for 2d.
  return xt::view(base().positional_encoding(positions, 2 * d), xt::all(), xt::range(0, d));
}

template <class T>
ops::MatrixOf<T> CosReplacedBySin::table(const std::vector<T>& positions, std::size_t d) const {
  ops::MatrixOf<T> pe = base().positional_encoding(positions, d);
  for (std::size_t r = 0; r < pe.shape(0); ++r)
    for (std::size_t i = 0; 2 * i + 1 < d; ++i) pe(r, 2 * i + 1) = pe(r, 2 * i);
  return pe;
}

Matrix Float32Table::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  const std::vector<float> p(positions.begin(), positions.end());
  return xt::cast<double>(positional_encoding_at<float>(p, d));
}

template <class T>
ops::MatrixOf<T> Pe0Everywhere::table(const std::vector<T>& positions, std::size_t d) const {
  return base().positional_encoding(std::vector<T>(positions.size(), T(0)), d);
}

Matrix PositionsAfterAttention::positional_encoding(const std::vector<double>& positions, std::size_t d) const {
  return xt::zeros<double>({positions.size(), d});
}
ops::MatrixOf<float> PositionsAfterAttention::positional_encoding(const std::vector<float>& positions, std::size_t d) const {
  return xt::zeros<float>({positions.size(), d});
}

template <class T>
MhaResult<T, 3> PositionsAfterAttention::broken(const ops::Tensor3Of<T>& query, const ops::Tensor3Of<T>& key,
                                                const ops::Tensor3Of<T>& value, const MhaParameters<T>& p, std::size_t heads,
                                                const MhaOptions<T>& o) const {
  // output (B, Sq, d) += PE (Sq, d), broadcast over the batch
  MhaResult<T, 3> r = base().multi_head_attention(query, key, value, p, heads, o);
  std::vector<T> rows(query.shape(1));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = T(i);
  r.output += base().positional_encoding(rows, query.shape(2));
  return r;
}
VL_MHA_BREAK_PRECISIONS(PositionsAfterAttention)

template <class T>
MhaResult<T, 3> CausalMaskForced::broken(const ops::Tensor3Of<T>& query, const ops::Tensor3Of<T>& key, const ops::Tensor3Of<T>& value,
                                         const MhaParameters<T>& p, std::size_t heads, const MhaOptions<T>& o) const {
  MhaOptions<T> forced = o;
  forced.causal = causal_;
  return base().multi_head_attention(query, key, value, p, heads, forced);
}
VL_MHA_BREAK_PRECISIONS(CausalMaskForced)

// The table controls' two precisions.
#define VL_TABLE_BREAK_PRECISIONS(Class)                                                                  \
  template ops::MatrixOf<double> Class::table<double>(const std::vector<double>&, std::size_t) const;     \
  template ops::MatrixOf<float> Class::table<float>(const std::vector<float>&, std::size_t) const;
VL_TABLE_BREAK_PRECISIONS(SinCosSwapped)
VL_TABLE_BREAK_PRECISIONS(ExponentIOverD)
VL_TABLE_BREAK_PRECISIONS(CosReplacedBySin)
VL_TABLE_BREAK_PRECISIONS(Pe0Everywhere)

}  // namespace vl::lessons::positions
