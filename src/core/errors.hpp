#pragma once
// The ground floor (every component may include it; it includes nothing of ours).
// Errors the user can act on: bad input files, bad arguments, malformed specs.
// Each message names the file or argument and says what is wrong; the CLI prints it
// on stderr and exits with a non-zero status (see src/cli/main.cpp).
#include <stdexcept>
#include <string>

namespace vl {

/// A problem with something the user gave us (a file, an argument, a spec).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace vl
