// The operations' names, as reports, `lessons backends` and Unsupported's messages print them:
// each operation has its own, so that "not applicable: <op>" names the one that is missing.
// (Found by mutation testing: a name copied from its neighbour broke no other test.)
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>

#include "backends/backend.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_backends_op_names).
BOOST_AUTO_TEST_SUITE(test_backends_op_names)

BOOST_AUTO_TEST_CASE(every_operation_has_its_own_name) {
  std::set<std::string> names;
  for (const vl::backends::Op op : vl::backends::kAllOps) {
    const std::string name = vl::backends::to_string(op);
    BOOST_TEST(name != "?");
    BOOST_TEST(names.insert(name).second, "two operations are both called '" << name << "'");
  }
  BOOST_TEST(names.size() == std::size(vl::backends::kAllOps));
  // The names the docs and the CLI tests use.
  BOOST_TEST(vl::backends::to_string(vl::backends::Op::linear_recurrent) == "linear-recurrent");
  BOOST_TEST(vl::backends::to_string(vl::backends::Op::linear_chunked) == "linear-chunked");
  BOOST_TEST(vl::backends::to_string({vl::backends::Op::attention, vl::backends::Option::weights}) == "attention-weights");
}

BOOST_AUTO_TEST_SUITE_END()  // test_backends_op_names
