// The linear family's three forms on one head, instantiated once for float and double: linear_family.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/linear_family.hpp"

namespace vl {

template FamilyHeadResult<float> family_recurrent<float, OnnxStep>(UpdateRule, const FamilyHead<float>&, float);
template FamilyHeadResult<float> family_parallel<float>(UpdateRule, const FamilyHead<float>&, float);
template FamilyHeadResult<float> family_chunked<float, UtTransform>(UpdateRule, const FamilyHead<float>&, float, std::size_t);
template FamilyHeadResult<double> family_recurrent<double, OnnxStep>(UpdateRule, const FamilyHead<double>&, double);
template FamilyHeadResult<double> family_parallel<double>(UpdateRule, const FamilyHead<double>&, double);
template FamilyHeadResult<double> family_chunked<double, UtTransform>(UpdateRule, const FamilyHead<double>&, double, std::size_t);

}  // namespace vl
