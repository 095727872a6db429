// The position-wise feed-forward network, instantiated once for float and double: feed_forward.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/feed_forward.hpp"

namespace vl {

template xt::xtensor<float, 3> linear<float>(const xt::xtensor<float, 3>&, const LinearParameters<float>&, const char*);
template xt::xtensor<float, 3> feed_forward<float>(const xt::xtensor<float, 3>&, const LinearParameters<float>&, const LinearParameters<float>&, Activation);
template xt::xtensor<double, 3> linear<double>(const xt::xtensor<double, 3>&, const LinearParameters<double>&, const char*);
template xt::xtensor<double, 3> feed_forward<double>(const xt::xtensor<double, 3>&, const LinearParameters<double>&, const LinearParameters<double>&, Activation);

}  // namespace vl
