// The names and options of the operations, from their headers (ops/all.hpp).
#include "ops/all.hpp"

#include <iterator>

namespace vl::ops {

namespace {
template <class OP>
std::vector<Option> listed_options() {
  if constexpr (requires { OP::options; }) return {std::begin(OP::options), std::end(OP::options)};
  else return {};
}
}  // namespace

std::string to_string(Op op) {
  switch (op) {
#define VL_OP_NAME(OP, NAME) \
  case Op::NAME: return OP::name;
    VL_OPERATIONS(VL_OP_NAME, VL_NO_SIGNATURE)
#undef VL_OP_NAME
  }
  return "?";
}

std::vector<Option> options_of(Op op) {
  switch (op) {
#define VL_OP_OPTIONS(OP, NAME) \
  case Op::NAME: return listed_options<OP>();
    VL_OPERATIONS(VL_OP_OPTIONS, VL_NO_SIGNATURE)
#undef VL_OP_OPTIONS
  }
  return {};
}

std::string to_string(Need need) {
  const std::string op = to_string(need.op);
  return need.option == Option::none ? op : op + "-" + to_string(need.option);
}

std::vector<Need> all_needs() {
  std::vector<Need> needs;
  for (Op op : kAllOps) {
    needs.emplace_back(op);
    for (Option option : options_of(op)) needs.emplace_back(op, option);
  }
  return needs;
}

}  // namespace vl::ops
