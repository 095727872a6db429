#pragma once
// What an operation's result must look like: for each array it returns, the shape its inputs
// define. Each op header (ops/*.hpp) writes its own once, in result_shapes(result, inputs...);
// the shape checker (backends/shape_checked.hpp) and the candidate backend both compare against it.
#include <cstddef>
#include <string>
#include <vector>

namespace vl::ops {

using Shape = std::vector<std::size_t>;

struct ResultShape {
  const char* output;  ///< its name in vl-candidate/1 ("y", "weights", "dq", …)
  const char* what;    ///< in words, for an error: "an attention output"
  Shape got, want;
};

template <class E>
Shape shape_of(const E& e) {
  return {e.shape().begin(), e.shape().end()};
}

/// An operation that keeps its input's shape (the Transformer layers: (B, S, d) in, (B, S, d) out).
template <class Y, class X>
std::vector<ResultShape> same_shape(const char* what, const Y& y, const X& x) {
  return {{"y", what, shape_of(y), shape_of(x)}};
}

}  // namespace vl::ops
