// Attention's input rules (ops/attention.hpp): the one copy the kernels check.
#include "ops/attention.hpp"

#include <stdexcept>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "numeric/numpy_broadcast.hpp"

namespace vl {

using Shape4 = std::array<std::size_t, 4>;

void check_attention_inputs(const Shape4& q, const Shape4& k, const Shape4& v, const std::optional<std::vector<std::size_t>>& kv_lengths) {
  const std::size_t B = q[0], Hq = q[1], D = q[3], Hkv = k[1], Sk = k[2];
  if (k[0] != B || v[0] != B || k[3] != D || v[1] != Hkv || v[2] != Sk) {
    throw std::invalid_argument(fmt::format(
        "attention: inconsistent shapes Q ({}), K ({}), V ({}); expected Q (B, Hq, Sq, D), "
        "K (B, Hkv, Sk, D), V (B, Hkv, Sk, Dv)",
        fmt::join(q, ", "), fmt::join(k, ", "), fmt::join(v, ", ")));
  }
  if (Hkv == 0 || Hq % Hkv != 0) {
    throw std::invalid_argument(fmt::format("attention: {} query heads is not a multiple of {} key/value heads", Hq, Hkv));
  }
  if (kv_lengths) {
    if (kv_lengths->size() != B)
      throw std::invalid_argument(fmt::format("attention: {} key lengths for a batch of {}", kv_lengths->size(), B));
    for (std::size_t b = 0; b < B; ++b)
      if ((*kv_lengths)[b] > Sk)
        throw std::invalid_argument(fmt::format("attention: key length {} of batch {} exceeds the {} keys", (*kv_lengths)[b], b, Sk));
  }
}

void check_mask_broadcasts(const std::vector<std::size_t>& s, const std::array<std::size_t, 4>& target, const char* what) {
  if (!numpy::broadcasts_to(s, target))
    throw std::invalid_argument(fmt::format("attention: the {} mask of shape ({}) does not broadcast to "
                                            "(B, Hq, Sq, Sk) = ({})",
                                            what, fmt::join(s, ", "), fmt::join(target, ", ")));
}

}  // namespace vl
