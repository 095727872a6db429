#pragma once
// Integer-valued command-line options (seeds, sizes, shapes), checked strictly: a bad value is
// a vl::InputError naming the option.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vl::cli {

/// Most elements one command may draw (2^31): keeps a typo from filling the disk.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 31;

/// A non-negative decimal integer that fits in uint64 (no sign, no spaces, no exponent).
std::uint64_t parse_unsigned(const std::string& text, const std::string& option);

/// "A,B,C" -> {A, B, C}: decimal dimensions (zero allowed only if allow_zero), at most
/// kMaxElements elements in all.
std::vector<std::size_t> parse_shape_option(const std::string& text, bool allow_zero);

}  // namespace vl::cli
