#pragma once
// Operation `positional_encoding`: the sinusoidal table (Vaswani et al. 2017, §3.5) at given
// positions (kernels/reference/positional_encoding.hpp computes it).
//
//   in   positions (n), the width d      out  PE (n, d)
//   vl-candidate/1  request "positional_encoding": attrs length, dim, base [, positions] → pe
#include <cstddef>
#include <type_traits>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "ops/result_shape.hpp"
#include "ops/tensors.hpp"

namespace vl::ops {

struct PositionalEncoding {
  static constexpr const char* name = "positional-encoding";
  static constexpr const char* request = "positional_encoding";

  template <class T>
  static std::vector<ResultShape> result_shapes(const MatrixOf<T>& pe, const std::vector<T>& positions, std::size_t d) {
    return {{"pe", "a positional-encoding table", shape_of(pe), {positions.size(), d}}};
  }
  /// The first version's request is the table at 0 … length − 1; rows at other positions need
  /// the attr `positions`, sent only to a candidate whose hello lists it (docs/candidates.md):
  /// to another such a request is refused (not applicable), never sent with a field it ignores.
  template <class Request, class T>
  static void encode(Request& r, const std::vector<T>& positions, std::size_t d) {
    bool in_order = true;
    for (std::size_t i = 0; i < positions.size(); ++i) in_order = in_order && positions[i] == T(i);
    r.attrs["length"] = positions.size();
    r.attrs["dim"] = d;
    r.attrs["base"] = 10000;
    // No floating input carries the precision: outside float64 only the "dtype" attr does, and a
    // candidate must say it reads it (a hello listing "dtypes" before that attr existed wrote its
    // outputs in its inputs' dtype, float64 here): to another the request is refused, N/A.
    if constexpr (!std::is_same_v<T, double>)
      if (!r.knows("dtype"))
        r.refuse("its hello lists no attr 'dtype' (vl-candidate/1's precision of a request without a floating input)");
    r.template precision<T>();
    if (!in_order) {
      if (!r.knows("positions"))
        r.refuse("its hello lists no attr 'positions' (vl-candidate/1's rows at given positions; the first version's table "
                 "starts at 0)");
      r.attrs["positions"] = std::vector<double>(positions.begin(), positions.end());
    }
    r.output("pe");
  }
  template <class Request, class T>
  static MatrixOf<T> decode(Request& r, const std::vector<T>&, std::size_t) {
    return r.template result<T, 2>("pe");
  }
};

}  // namespace vl::ops
