#include "cli/numeric_options.hpp"

#include <limits>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace vl::cli {

std::uint64_t parse_unsigned(const std::string& text, const std::string& option) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(fmt::format("{}: '{}' is not a non-negative integer", option, text));
  std::uint64_t v = 0;
  for (char c : text) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw InputError(fmt::format("{}: '{}' is larger than 2^64 - 1", option, text));
    v = v * 10 + digit;
  }
  return v;
}

std::vector<std::size_t> parse_shape_option(const std::string& text, bool allow_zero) {
  if (text.empty()) throw InputError("--shape: empty; expected dimensions A[,B,...]");
  std::vector<std::size_t> shape;
  std::uint64_t total = 1;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.empty()) throw InputError(fmt::format("--shape: '{}' has an empty dimension", text));
    if (part.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(fmt::format("--shape: '{}': dimension '{}' is not a {} integer", text, part,
                                   allow_zero ? "non-negative" : "positive"));
    const std::uint64_t dim = parse_unsigned(part, "--shape");
    if (dim == 0 && !allow_zero) throw InputError(fmt::format("--shape: '{}': dimensions must be positive", text));
    if (dim > kMaxElements || (dim != 0 && total > kMaxElements / dim))
      throw InputError(fmt::format("--shape: '{}' has more than {} elements", text, kMaxElements));
    total *= dim;
    shape.push_back(static_cast<std::size_t>(dim));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

}  // namespace vl::cli
