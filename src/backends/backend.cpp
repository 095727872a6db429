// The operations' defaults (Unsupported), the forwarding decorator and the shorthands.
#include "backends/backend.hpp"

#include <xtensor/xview.hpp>

#include "backends/in_precision.hpp"

namespace vl::backends {

void Backend::lacks(Need need, const std::string& why) const { throw Unsupported(need, lacking(need, why)); }
std::string Backend::lacking(Need need, const std::string& why) const {
  return "backend '" + name() + "' has no " + to_string(need) + (why.empty() ? "" : " (" + why + ")");
}

// The defaults: a backend that does not override an operation lacks it. (The parameters are
// named for the forwarding call below, and unused here.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define VL_DEFINE_LACKING(OP, R, NAME, PARAMETERS, ARGUMENTS) \
  R Backend::NAME PARAMETERS const { lacks(Op::NAME); }
VL_OPERATIONS(VL_NO_OP, VL_DEFINE_LACKING)
#undef VL_DEFINE_LACKING
#pragma GCC diagnostic pop

std::shared_ptr<const Backend> Backend::stored_in(Precision p, std::shared_ptr<const Backend> self) const {
  return std::make_shared<StoredIn>(p, std::move(self));
}

Decorator::Decorator(std::shared_ptr<const Backend> base, std::string name) : base_(std::move(base)), name_(std::move(name)) {}

// The decorator: every operation goes to the base.
#define VL_DEFINE_FORWARD(OP, R, NAME, PARAMETERS, ARGUMENTS) \
  R Decorator::NAME PARAMETERS const { return base_->NAME ARGUMENTS; }
VL_OPERATIONS(VL_NO_OP, VL_DEFINE_FORWARD)
#undef VL_DEFINE_FORWARD

MhaResult<double, 2> multi_head_attention_2d(const Backend& b, const Matrix& query, const Matrix& key, const Matrix& value,
                                             const MhaParameters<double>& p, std::size_t heads, const MhaOptions<double>& o) {
  auto as3 = [](const Matrix& x) -> xt::xtensor<double, 3> {
    return xt::reshape_view(x, std::array<std::size_t, 3>{1, x.shape(0), x.shape(1)});
  };
  const MhaResult<double, 3> r = b.multi_head_attention(as3(query), as3(key), as3(value), p, heads, o);
  MhaResult<double, 2> out;
  out.output = xt::view(r.output, 0);
  if (o.need_weights) out.weights = xt::view(r.weights, 0);
  return out;
}

Matrix positional_encoding_table(const Backend& b, std::size_t n, std::size_t d) {
  std::vector<double> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = double(i);
  return b.positional_encoding(positions, d);
}

}  // namespace vl::backends
