// The linear family over batches and heads, instantiated once for float and double: linear_family_heads.hpp declares these
// extern, and holds the equations, the shapes and the definitions.
#include "kernels/reference/linear_family_heads.hpp"

namespace vl {

template FamilyHead<float> family_head<float>(const FamilyInputs<float>&, UpdateRule, std::size_t, std::size_t, std::size_t);
template void check_family_inputs<float>(const FamilyInputs<float>&, const FamilyOptions&);
template FamilyResult<float> linear_family<float, OnnxStep, UtTransform>(const FamilyInputs<float>&, const FamilyOptions&);
template FamilyHead<double> family_head<double>(const FamilyInputs<double>&, UpdateRule, std::size_t, std::size_t, std::size_t);
template void check_family_inputs<double>(const FamilyInputs<double>&, const FamilyOptions&);
template FamilyResult<double> linear_family<double, OnnxStep, UtTransform>(const FamilyInputs<double>&, const FamilyOptions&);

}  // namespace vl
