#include <boost/test/unit_test.hpp>

// prepare_to_fill (numeric/fresh_memory.hpp): advice that keeps what memory holds, on any range
// (unaligned ends, small ranges); on fresh memory, where the kernel takes the advice, every whole
// page of the range is mapped before anything writes it (mincore), and its whole 2 MiB ranges
// carry the huge-page advice (VmFlags "hg" in /proc/self/smaps).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "numeric/fresh_memory.hpp"

BOOST_AUTO_TEST_SUITE(test_numeric_fresh_memory)

namespace {

constexpr std::size_t kPage = 4096, kHugePage = std::size_t(2) << 20;

// Fresh anonymous memory of `bytes` (never touched), unmapped when it goes.
struct Fresh {
  explicit Fresh(std::size_t n)
      : bytes(n), data(static_cast<unsigned char*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {
    BOOST_TEST_REQUIRE(data != static_cast<unsigned char*>(MAP_FAILED));
  }
  ~Fresh() { munmap(data, bytes); }
  std::size_t bytes;
  unsigned char* data;
};

// How many of the pages [first, first + pages·4096) are in memory (first page-aligned).
std::size_t resident_pages(const unsigned char* first, std::size_t pages) {
  std::vector<unsigned char> in(pages);
  BOOST_TEST_REQUIRE(mincore(const_cast<unsigned char*>(first), pages * kPage, in.data()) == 0);
  std::size_t n = 0;
  for (const unsigned char v : in) n += v & 1;
  return n;
}

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if not found).
std::string vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) inside = lo <= at && at < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(contents_kept_on_any_range) {
  std::vector<unsigned char> buffer(9 << 20);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::vector<unsigned char> before = buffer;
  for (const std::size_t offset : {std::size_t(0), std::size_t(100), std::size_t(4096), std::size_t(5000)})
    for (const std::size_t length : {std::size_t(0), std::size_t(1), std::size_t(4095), std::size_t(70000), std::size_t(3 << 20), std::size_t(8 << 20)})
      vl::prepare_to_fill(buffer.data() + offset, length);
  BOOST_TEST(buffer == before);
}

BOOST_AUTO_TEST_CASE(fresh_memory_mapped_before_it_is_written) {
  const std::size_t bytes = 8 << 20, pages = bytes / kPage;
  Fresh advised(bytes), plain(bytes), probe(kHugePage);
  BOOST_TEST(resident_pages(plain.data, pages) == 0u);  // the control: fresh memory is not in memory
  vl::prepare_to_fill(advised.data + 100, bytes - 200);  // its ends unaligned, as a heap buffer's
  // Where the kernel declines MADV_POPULATE_WRITE (before Linux 5.14, or under valgrind) nothing
  // is mapped, as documented.
#ifdef MADV_POPULATE_WRITE
  if (madvise(probe.data, kPage, MADV_POPULATE_WRITE) != 0) {
    BOOST_TEST_MESSAGE("mapped at once: not judged, this kernel declines MADV_POPULATE_WRITE");
  } else {
    BOOST_TEST(resident_pages(advised.data + kPage, pages - 2) == pages - 2);  // every whole page
    BOOST_TEST(resident_pages(plain.data, pages) == 0u);                        // the control, still
  }
#else
  BOOST_TEST_MESSAGE("mapped at once: not judged, these headers lack MADV_POPULATE_WRITE");
#endif
  // The huge-page advice on the whole 2 MiB ranges inside (one at least, in 8 MiB less 200 bytes).
  const auto first_huge = (reinterpret_cast<std::uintptr_t>(advised.data + 100) + kHugePage - 1) / kHugePage * kHugePage;
  const std::string advised_flags = vm_flags_at(reinterpret_cast<void*>(first_huge)), plain_flags = vm_flags_at(plain.data);
  BOOST_TEST_MESSAGE("VmFlags of the advised range: " << advised_flags << "; of fresh memory: " << plain_flags);
  if (madvise(probe.data, kHugePage, MADV_HUGEPAGE) != 0 || advised_flags.empty()) {
    BOOST_TEST_MESSAGE("huge-page advice: not judged, this kernel declines MADV_HUGEPAGE or shows no VmFlags");
    return;
  }
  BOOST_TEST(advised_flags.find(" hg") != std::string::npos);
  BOOST_TEST(plain_flags.find(" hg") == std::string::npos);  // the control
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_fresh_memory
