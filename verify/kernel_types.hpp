#pragma once
// What the kernel tests share: the two precisions every kernel template is instantiated for (the
// type list of BOOST_AUTO_TEST_CASE_TEMPLATE) and their machine epsilon.
#include <limits>

#include <boost/mpl/list.hpp>

namespace vl::verify {

using FloatTypes = boost::mpl::list<float, double>;

/// Machine epsilon of T: 2⁻²³ for float, 2⁻⁵² for double.
template <class T>
inline constexpr T kEps = std::numeric_limits<T>::epsilon();

}  // namespace vl::verify
