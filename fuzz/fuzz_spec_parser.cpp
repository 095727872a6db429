// libFuzzer target: bytes -> a temporary spec file -> vl::parse_spec.
// A malformed spec must be refused with vl::InputError ("file:line: what is wrong"); any other
// exception, a crash, a hang or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/errors.hpp"
#include "fuzz_input_file.hpp"
#include "engine/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = write_fuzz_input(data, size, "spec", ".md");
  try {
    const vl::Spec spec = vl::parse_spec(path);
    // Touch what the audit would read.
    for (const auto& o : spec.outputs)
      for (const auto& r : o.rules) (void)r.covers(1);
  } catch (const vl::InputError&) {
    // the expected way to refuse a malformed spec
  }
  std::remove(path.c_str());  // leave nothing in /dev/shm (fork mode starts many processes)
  return 0;
}
