// Each operation's result shape, checked (shape_checked.hpp) against its op header's result_shapes.
#include "backends/shape_checked.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vl::backends {

namespace {
// Throws WrongShape at the first array whose shape is not the one the operation defines.
void expect(const Backend& b, const std::vector<ops::ResultShape>& shapes) {
  for (const ops::ResultShape& s : shapes)
    if (s.got != s.want)
      throw WrongShape(fmt::format("backend '{}' returned {} of shape ({}); the operation defines ({})", b.name(), s.what,
                                   fmt::join(s.got, ", "), fmt::join(s.want, ", ")));
}
}  // namespace

ShapeChecked::ShapeChecked(std::shared_ptr<const Backend> base) : Decorator(base, base->name()) {}

std::shared_ptr<const Backend> ShapeChecked::stored_in(Precision p, std::shared_ptr<const Backend>) const {
  return std::make_shared<ShapeChecked>(base().stored_in(p, base_shared()));
}

#define VL_DEFINE_CHECKED(OP, R, NAME, PARAMETERS, ARGUMENTS) \
  R ShapeChecked::NAME PARAMETERS const {                     \
    R r = base().NAME ARGUMENTS;                              \
    expect(*this, OP::result_shapes(r, VL_UNPACK ARGUMENTS));  \
    return r;                                                 \
  }
VL_OPERATIONS(VL_NO_OP, VL_DEFINE_CHECKED)
#undef VL_DEFINE_CHECKED

}  // namespace vl::backends
