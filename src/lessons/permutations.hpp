#pragma once
// Permutations other than the identity, drawn as torch draws them: the equivariance claims
// (positions, encoder/decoder) compare layer(x[perm]) with layer(x)[perm], which the identity
// satisfies whatever the layer does.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numeric/torch_random.hpp"

namespace vl::lessons {

/// torch.randperm(n, generator=gen) drawn until `count` of the draws are not the identity (each
/// identity drawn is skipped), at most `tries` draws in all. Throws std::logic_error naming `what`
/// when they do not give `count` (n < 2 has no other permutation).
std::vector<std::vector<std::int64_t>> non_identity_permutations(torch_rng::Generator& gen, std::int64_t n, std::size_t count,
                                                                 const char* what, int tries = 50);

}  // namespace vl::lessons
