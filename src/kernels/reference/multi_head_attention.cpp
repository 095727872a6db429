// Multi-head attention, instantiated once for float and double: multi_head_attention.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/multi_head_attention.hpp"

namespace vl {

template MhaResult<float, 3> multi_head_attention<float>(const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const xt::xtensor<float, 3>&, const MhaParameters<float>&, std::size_t, const MhaOptions<float>&);
template MhaResult<float, 2> multi_head_attention<float>(const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 2>&, const MhaParameters<float>&, std::size_t, const MhaOptions<float>&);
template MhaResult<double, 3> multi_head_attention<double>(const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const xt::xtensor<double, 3>&, const MhaParameters<double>&, std::size_t, const MhaOptions<double>&);
template MhaResult<double, 2> multi_head_attention<double>(const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const xt::xtensor<double, 2>&, const MhaParameters<double>&, std::size_t, const MhaOptions<double>&);

}  // namespace vl
