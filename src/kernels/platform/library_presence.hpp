#pragma once
// Whether a shared library is in this process, asked many times a second (the fused kernels ask
// whether OpenBLAS is, on every call: kernels/platform/blas_threads.hpp). dlopen(RTLD_NOLOAD)
// answers, but reads ld.so.cache and opens the library's file to do so; the cache's map and unmap
// interrupt every core the process runs on (the unmap's TLB shootdown): ~0.03 ms of each fused
// forward's 1.45 ms at n = 1024 (issue 40's note). Its answer can change only when the dynamic
// loader loads or unloads an object, which glibc counts (dl_iterate_phdr's dlpi_adds and
// dlpi_subs, read without a system call): the answer is kept with the counts it was asked at.
#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace vl {

/// Whether the library of a file name (a soname: "libopenblas.so.0") is in the process, loaded by
/// anyone; asking opens nothing. An answer is kept until the loader next loads or unloads an
/// object. In a process forked from the one that made it, every call asks dlopen again (glibc
/// does not reset, at fork, the lock dl_iterate_phdr takes: a thread the fork left behind may
/// hold it).
class LibraryPresence {
 public:
  explicit LibraryPresence(const char* soname);
  bool operator()();

 private:
  bool ask() const;
  const char* soname_;
  const pid_t owner_;
  // The loader's count of loads and unloads it was asked at, from bit 2; bit 1: loaded; bit 0: asked.
  std::atomic<std::uint64_t> answer_{0};
};

}  // namespace vl
