// library_presence.hpp's answers.
#include "kernels/platform/library_presence.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

namespace vl {

namespace {

// How many objects the loader has loaded plus how many it has unloaded so far: both only grow,
// so their sum changes exactly when either does. Shifted clear of LibraryPresence's two flag bits.
std::uint64_t loader_events() {
  std::uint64_t events = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uint64_t*>(out) = std::uint64_t(info->dlpi_adds + info->dlpi_subs) << 2;
        return 1;  // the first object's copy of the counters is enough
      },
      &events);
  return events;
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
  const std::uint64_t now = loader_events();
  const std::uint64_t kept = answer_.load(std::memory_order_acquire);
  if ((kept & 1) && (kept & ~std::uint64_t(3)) == now) return (kept & 2) != 0;
  const bool loaded = ask();
  answer_.store(now | (loaded ? 2 : 0) | 1, std::memory_order_release);
  return loaded;
}

}  // namespace vl
