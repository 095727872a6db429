#pragma once
// NumPy's broadcasting rule, for one shape stretched to a given target shape.
#include <cstddef>
#include <span>

namespace vl::numpy {

/// True when an array of `shape` broadcasts to `target` without changing the target:
/// aligned at the trailing dimensions, each dimension equals the target's or is 1, and `shape`
/// has no more dimensions than `target` (numpy.broadcast_to(a, target) succeeds).
inline bool broadcasts_to(std::span<const std::size_t> shape, std::span<const std::size_t> target) {
  if (shape.size() > target.size()) return false;
  const std::size_t lead = target.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && shape[i] != target[lead + i]) return false;
  return true;
}

}  // namespace vl::numpy
