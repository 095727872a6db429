// library_presence.hpp's answers.
#include "kernels/platform/library_presence.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

namespace vl {

namespace {

// The loader's counts of objects loaded and unloaded so far, packed as LibraryPresence keeps
// them (they would wrap after 2³¹ loads).
std::uint64_t loader_counts() {
  std::uint64_t counts = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uint64_t*>(out) = (std::uint64_t(info->dlpi_adds & 0x7fffffffu) << 2) | (std::uint64_t(info->dlpi_subs & 0x7fffffffu) << 33);
        return 1;  // the first object's copy of the counters is enough
      },
      &counts);
  return counts;
}

}  // namespace

LibraryPresence::LibraryPresence(const char* soname) : soname_(soname), owner_(::getpid()) {}

bool LibraryPresence::ask() const {
  void* h = dlopen(soname_, RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

bool LibraryPresence::operator()() {
  if (::getpid() != owner_) return ask();
  // One atomic word, no lock: racing callers each ask and store; the last store stands, and its
  // counts are from before its question, so an object loaded meanwhile makes the next call ask.
  const std::uint64_t now = loader_counts();
  const std::uint64_t kept = answer_.load(std::memory_order_acquire);
  if ((kept & 1) && (kept & ~std::uint64_t(3)) == now) return (kept & 2) != 0;
  const bool loaded = ask();
  answer_.store(now | (loaded ? 2 : 0) | 1, std::memory_order_release);
  return loaded;
}

}  // namespace vl
