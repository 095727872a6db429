#include <boost/test/unit_test.hpp>

// prepare_to_fill (numeric/fresh_memory.hpp): advice that keeps what memory holds, on any range
// (unaligned ends, small ranges), and on Linux ≥ 5.14 maps fresh memory's pages at once, so that
// writing it whole then takes (almost) no page faults, where it took one per 4 KiB page.
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "numeric/fresh_memory.hpp"

BOOST_AUTO_TEST_SUITE(test_numeric_fresh_memory)

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Fresh anonymous memory of `bytes` (never touched), unmapped when it goes.
struct Fresh {
  explicit Fresh(std::size_t n) : bytes(n), data(static_cast<unsigned char*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {}
  ~Fresh() {
    if (data != MAP_FAILED) munmap(data, bytes);
  }
  std::size_t bytes;
  unsigned char* data;
};

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

BOOST_AUTO_TEST_CASE(fresh_memory_written_without_a_fault_per_page) {
  const std::size_t bytes = 8 << 20, pages = bytes / 4096;
  Fresh advised(bytes), plain(bytes);
  BOOST_TEST_REQUIRE(advised.data != MAP_FAILED);
  BOOST_TEST_REQUIRE(plain.data != MAP_FAILED);
  madvise(plain.data, bytes, MADV_NOHUGEPAGE);  // 4 KiB pages, also where the system gives huge pages unasked
  long start = minor_faults();
  std::memset(plain.data, 1, bytes);
  const long plain_faults = minor_faults() - start;
  vl::prepare_to_fill(advised.data + 100, bytes - 200);  // its ends unaligned, as a heap buffer's
  start = minor_faults();
  std::memset(advised.data, 1, bytes);
  const long advised_faults = minor_faults() - start;
  BOOST_TEST_MESSAGE("writing 8 MiB: " << plain_faults << " page faults fresh, " << advised_faults << " after prepare_to_fill");
  // Where the kernel has no MADV_POPULATE_WRITE (before Linux 5.14) the advice is declined, as documented.
  if (madvise(plain.data, 4096, MADV_POPULATE_WRITE) != 0) {
    BOOST_TEST_MESSAGE("fresh memory faults: not judged, this kernel declines MADV_POPULATE_WRITE");
    return;
  }
  BOOST_TEST(plain_faults >= long(pages));  // the control: the count sees a fault per page
  BOOST_TEST(advised_faults <= 4);              // at most the two partial pages at the ends (and their neighbours)
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_fresh_memory
