#pragma once
// A backend whose every result is checked against the shape its operation defines (its op
// header's result_shapes, ops/*.hpp) before a check reads it: a backend that returns the wrong shape is an error
// naming the operation and both shapes, never an out-of-bounds read. The audit judges every
// backend, and every control, through it.
#include "backends/backend.hpp"

namespace vl::backends {

/// A backend returned a result whose shape is not the one its operation defines. A check may
/// catch it to count the call as answered wrongly (a layer that should have refused its input
/// but returned a result); the audit reports it uncaught as an error of the backend.
class WrongShape : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShapeChecked : public Decorator {
 public:
  explicit ShapeChecked(std::shared_ptr<const Backend> base);
  std::string summary() const override { return base().summary(); }
  /// The base stored in p (a candidate speaking p), checked likewise.
  std::shared_ptr<const Backend> stored_in(Precision p, std::shared_ptr<const Backend> self) const override;

  VL_OPERATIONS(VL_NO_OP, VL_DECLARE_OVERRIDE)  // every operation: ops/all.hpp
};

}  // namespace vl::backends
