#include <boost/test/unit_test.hpp>
// vl::sha256_hex / vl::sha256_file against the FIPS 180-2 / NIST example vectors, split
// updates, and the manifest's recorded digests of the NumPy goldens.
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "numeric/sha256.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_numeric_sha256).
BOOST_AUTO_TEST_SUITE(test_numeric_sha256)

namespace {
std::string hex(const std::string& s) { return vl::sha256_hex(s.data(), s.size()); }
}  // namespace

BOOST_AUTO_TEST_CASE(nist_short_messages) {
  BOOST_TEST(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the padding no longer fits in the block, a second block is needed.
  BOOST_TEST(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  BOOST_TEST(hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqkl"
                 "mnopqrlmnopqrsmnopqrstnopqrstu") ==
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

BOOST_AUTO_TEST_CASE(nist_one_million_a) {
  const std::string m(1000000, 'a');
  BOOST_TEST(hex(m) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // The same message fed in uneven pieces gives the same digest.
  vl::Sha256 sha;
  std::size_t pos = 0, step = 1;
  while (pos < m.size()) {
    const std::size_t n = std::min(step, m.size() - pos);
    sha.update(m.data() + pos, n);
    pos += n;
    step = step * 3 + 1;
  }
  BOOST_TEST(sha.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

BOOST_AUTO_TEST_CASE(one_bit_changes_the_digest) {
  BOOST_TEST(hex("abd") != hex("abc"));
  BOOST_TEST(hex(std::string(64, 'x')) != hex(std::string(65, 'x')));
}

BOOST_AUTO_TEST_CASE(file_digest) {
  const auto path = std::filesystem::temp_directory_path() / "vl_test_sha256.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << "abc";
  }
  BOOST_TEST(vl::sha256_file(path) == hex("abc"));
  // Longer than the 64 KiB blocks sha256_file reads: the blocks join into one message.
  const std::string big(3 * 65536 + 17, 'q');
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << big;
  }
  BOOST_TEST(vl::sha256_file(path) == hex(big));
  std::filesystem::remove(path);
  BOOST_CHECK_THROW(vl::sha256_file(path), vl::InputError);
}

BOOST_AUTO_TEST_CASE(manifest_digests_of_numpy_goldens) {
  const std::filesystem::path root = VL_SOURCE_DIR "/reference_outputs";
  std::ifstream in(root / "manifest.json");
  BOOST_REQUIRE(in);
  const auto manifest = nlohmann::json::parse(in);
  int checked = 0;
  for (const auto& [rel, entry] : manifest.at("files").items()) {
    if (rel.rfind("numpy/", 0) != 0) continue;
    BOOST_TEST_CONTEXT(rel) { BOOST_TEST(vl::sha256_file(root / rel) == entry.at("sha256").get<std::string>()); }
    ++checked;
  }
  BOOST_TEST(checked >= 3);
}

BOOST_AUTO_TEST_SUITE_END()  // test_numeric_sha256
