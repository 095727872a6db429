#pragma once
// SHA-256 (FIPS 180-4) from libcrypto (Debian's OpenSSL, EVP_sha256): hex digests of byte
// buffers and files, as Python's hashlib.sha256 gives them (64 lowercase hex characters).
// Used to compare long random streams with NumPy's without storing them, and to check the
// golden files against reference_outputs/manifest.json. The OpenSSL types stay out of this
// header: only sha256.cpp includes <openssl/evp.h>.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace vl {

/// Incremental SHA-256: update() with any number of byte blocks, then hex_digest() once.
/// Movable, not copyable (it owns a libcrypto digest context).
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  /// Finishes and returns the digest as lowercase hex; the object must not be reused.
  std::string hex_digest();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> ctx_;
};

/// sha256 of n bytes at data, as lowercase hex.
std::string sha256_hex(const void* data, std::size_t n);

/// sha256 of a file's bytes (read in 64 KiB blocks), as lowercase hex; throws vl::InputError
/// naming the file when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace vl
