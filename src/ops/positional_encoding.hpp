#pragma once
// Operation `positional_encoding`: the sinusoidal table (Vaswani et al. 2017, §3.5) at given
// positions (kernels/reference/positional_encoding.hpp computes it).
//
//   in   positions (n), the width d      out  PE (n, d)
//   vl-candidate/1  request "positional_encoding": attrs length, dim, base, positions → pe
#include <cstddef>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

namespace vl::ops {

struct PositionalEncoding {
  static constexpr const char* name = "positional-encoding";
  static constexpr const char* request = "positional_encoding";

  static std::vector<ResultShape> result_shapes(const Matrix& pe, const std::vector<double>& positions, std::size_t d) {
    return {{"pe", "a positional-encoding table", shape_of(pe), {positions.size(), d}}};
  }
  template <class Request>
  static void encode(Request& r, const std::vector<double>& positions, std::size_t d) {
    r.attrs["length"] = positions.size();
    r.attrs["dim"] = d;
    r.attrs["base"] = 10000;
    r.attrs["positions"] = positions;  // an addition to the first fields: rows at these positions (default 0 … length − 1)
    r.output("pe");
  }
  template <class Request>
  static Matrix decode(Request& r, const std::vector<double>&, std::size_t) {
    return r.template result<double, 2>("pe");
  }
};

}  // namespace vl::ops
