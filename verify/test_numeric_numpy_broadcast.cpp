#include <boost/test/unit_test.hpp>

// numpy::broadcasts_to against NumPy's rule. Each expectation was checked with
// numpy.broadcast_to(np.zeros(shape), target) (NumPy 1.24): it succeeds exactly where true.
#include <cstddef>
#include <vector>

#include "numeric/numpy_broadcast.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_numpy_broadcast).
BOOST_AUTO_TEST_SUITE(test_numeric_numpy_broadcast)

namespace {
struct Case {
  std::vector<std::size_t> shape, target;
  bool broadcasts;
};
}  // namespace

BOOST_AUTO_TEST_CASE(numpy_broadcast_to_rule) {
  const std::vector<Case> cases = {
      {{}, {3, 4}, true},                  // a scalar goes anywhere
      {{1}, {3, 4}, true},                 // size 1 stretches
      {{4}, {3, 4}, true},                 // aligned at the trailing dimension
      {{3}, {3, 4}, false},                // ... not the leading one
      {{2, 1, 4}, {3, 4}, false},          // more dimensions than the target
      {{3, 1}, {2, 3, 4}, true},           // missing leading dimensions are added
      {{0}, {0}, true},                    // empty to empty
      {{0}, {3}, false},                   // 0 is not 1
      {{1}, {0}, true},                    // size 1 stretches to 0 too
      {{2, 3}, {2, 3}, true},              // the same shape
      {{1, 1, 1, 1}, {2, 3, 4, 5}, true},  // all ones
      {{2, 1, 4, 1}, {2, 3, 4, 5}, true},  // mixed
      {{2, 3, 4, 6}, {2, 3, 4, 5}, false}, // the last dimension differs
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("shape of rank " << c.shape.size() << " to target of rank " << c.target.size()) {
      BOOST_TEST(vl::numpy::broadcasts_to(c.shape, c.target) == c.broadcasts);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_numpy_broadcast
