// The sinusoidal positional encoding, instantiated once for float and double: positional_encoding.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/positional_encoding.hpp"

namespace vl {

template xt::xtensor<float, 1> pe_frequencies<float>(std::size_t, float);
template xt::xtensor<float, 2> positional_encoding_at<float>(const std::vector<float>&, std::size_t, float);
template xt::xtensor<float, 2> positional_encoding<float>(std::size_t, std::size_t, float);
template xt::xtensor<float, 2> pe_rotation<float>(float, float);
template xt::xtensor<float, 1> pe_wavelengths<float>(std::size_t, float);
template xt::xtensor<float, 2> permute_rows<float>(const xt::xtensor<float, 2>&, const std::vector<std::int64_t>&);
template xt::xtensor<double, 1> pe_frequencies<double>(std::size_t, double);
template xt::xtensor<double, 2> positional_encoding_at<double>(const std::vector<double>&, std::size_t, double);
template xt::xtensor<double, 2> positional_encoding<double>(std::size_t, std::size_t, double);
template xt::xtensor<double, 2> pe_rotation<double>(double, double);
template xt::xtensor<double, 1> pe_wavelengths<double>(std::size_t, double);
template xt::xtensor<double, 2> permute_rows<double>(const xt::xtensor<double, 2>&, const std::vector<std::int64_t>&);

}  // namespace vl
