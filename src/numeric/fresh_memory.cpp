// fresh_memory.hpp's advice.
#include "numeric/fresh_memory.hpp"

#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace vl {

namespace {

// [data, data + bytes) shrunk to whole `unit`s: its first and last partial units may hold other
// objects, whose pages are not ours to advise on.
struct Range {
  std::uintptr_t begin, end;
};
Range whole_units(void* data, std::size_t bytes, std::uintptr_t unit) {
  const auto first = reinterpret_cast<std::uintptr_t>(data);
  return {(first + unit - 1) / unit * unit, (first + bytes) / unit * unit};
}

}  // namespace

void prepare_to_fill(void* data, std::size_t bytes) {
  constexpr std::size_t kWorthIt = 16 * 4096;  // below this, a few faults cost less than the calls
  if (bytes < kWorthIt) return;
#ifdef __linux__
  static const auto page = std::uintptr_t(::sysconf(_SC_PAGESIZE) > 0 ? ::sysconf(_SC_PAGESIZE) : 4096);
#endif
  // Each advice on its own: headers older than glibc 2.35 lack MADV_POPULATE_WRITE, not MADV_HUGEPAGE.
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // 2 MiB: x86-64's huge page (and ARM64's, with 4 KiB pages).
  if (const Range huge = whole_units(data, bytes, std::uintptr_t(2) << 20); huge.end > huge.begin)
    (void)::madvise(reinterpret_cast<void*>(huge.begin), huge.end - huge.begin, MADV_HUGEPAGE);
#endif
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (const Range pages = whole_units(data, bytes, page); pages.end > pages.begin)
    (void)::madvise(reinterpret_cast<void*>(pages.begin), pages.end - pages.begin, MADV_POPULATE_WRITE);
#endif
  (void)data;
}

}  // namespace vl
