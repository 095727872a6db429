// Splitting and merging heads, instantiated once for float and double: heads.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/heads.hpp"

namespace vl {

template xt::xtensor<float, 4> split_heads<float>(const xt::xtensor<float, 3>&, std::size_t);
template xt::xtensor<float, 3> merge_heads<float>(const xt::xtensor<float, 4>&);
template xt::xtensor<float, 4> split_heads<float>(const xt::xtensor<float, 2>&, std::size_t);
template xt::xtensor<float, 2> merge_heads_2d<float>(const xt::xtensor<float, 4>&);
template xt::xtensor<double, 4> split_heads<double>(const xt::xtensor<double, 3>&, std::size_t);
template xt::xtensor<double, 3> merge_heads<double>(const xt::xtensor<double, 4>&);
template xt::xtensor<double, 4> split_heads<double>(const xt::xtensor<double, 2>&, std::size_t);
template xt::xtensor<double, 2> merge_heads_2d<double>(const xt::xtensor<double, 4>&);

}  // namespace vl
