#pragma once
// SHA-256 (FIPS 180-4): hex digests of byte buffers and files, as Python's hashlib.sha256
// gives them (64 lowercase hex characters). Used to compare long random streams with NumPy's
// without storing them, and to check the golden files against reference_outputs/manifest.json.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace vl {

/// Incremental SHA-256: update() with any number of byte blocks, then hex_digest() once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  /// Pads, finishes and returns the digest as lowercase hex; the object must not be reused.
  std::string hex_digest();

 private:
  void compress(const unsigned char* block);

  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

/// sha256 of n bytes at data, as lowercase hex.
std::string sha256_hex(const void* data, std::size_t n);

/// sha256 of a file's bytes, as lowercase hex; throws vl::InputError naming the file when it
/// cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace vl
