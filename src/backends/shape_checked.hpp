#pragma once
// A backend whose every result is checked against the shape its operation defines (see
// backend.hpp) before a check reads it: a backend that returns the wrong shape is an error
// naming the operation and both shapes, never an out-of-bounds read. The audit judges every
// backend, and every control, through it.
#include "backends/backend.hpp"

namespace vl::backends {

class ShapeChecked : public Decorator {
 public:
  explicit ShapeChecked(std::shared_ptr<const Backend> base);
  std::string summary() const override { return base().summary(); }

  VL_BACKEND_OPERATIONS(VL_DECLARE_OVERRIDE)  // every operation: operation_list.hpp
};

}  // namespace vl::backends
