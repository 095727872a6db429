// Permutations other than the identity; see permutations.hpp.
#include "lessons/permutations.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace vl::lessons {

std::vector<std::vector<std::int64_t>> non_identity_permutations(torch_rng::Generator& gen, std::int64_t n, std::size_t count,
                                                                 const char* what, int tries) {
  std::vector<std::vector<std::int64_t>> perms;
  for (int t = 0; perms.size() < count && t < tries; ++t) {
    std::vector<std::int64_t> perm = torch_rng::randperm(gen, n);
    if (!std::is_sorted(perm.begin(), perm.end())) perms.push_back(std::move(perm));
  }
  if (perms.size() < count)
    throw std::logic_error(fmt::format("{}: {} of the {} permutations of {} other than the identity in {} draws", what, perms.size(),
                                       count, n, tries));
  return perms;
}

}  // namespace vl::lessons
