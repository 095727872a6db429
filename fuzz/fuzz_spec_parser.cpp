// libFuzzer target: bytes -> a temporary spec file -> vl::parse_spec.
// A malformed spec must be refused with vl::InputError ("file:line: what is wrong"); any other
// exception, a crash, a hang or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/errors.hpp"
#include "engine/spec.hpp"

namespace {
// One temporary file per process, in RAM (/dev/shm) when available.
const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/vl_fuzz_spec." + std::to_string(::getpid()) + ".md";
  }();
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = temp_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
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
