#pragma once
// The fuzzers' input written to one temporary file per process (in RAM, /dev/shm, when
// available), for readers that only take a path.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

/// Writes `data` to the process's temporary file named vl_fuzz_<tag>.<pid><suffix>; returns its path.
inline const std::string& write_fuzz_input(const std::uint8_t* data, std::size_t size, const char* tag, const char* suffix) {
  static const std::string path = [&] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/vl_fuzz_" + tag + "." + std::to_string(::getpid()) + suffix;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}
