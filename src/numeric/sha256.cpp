// SHA-256 through libcrypto's EVP digest interface (OpenSSL 3, Debian's libssl-dev):
// EVP_DigestInit_ex(EVP_sha256()), EVP_DigestUpdate per block, EVP_DigestFinal_ex once.
#include "numeric/sha256.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <fstream>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"

namespace vl {

namespace {

// A libcrypto call that failed: not the user's doing (no InputError), with OpenSSL's reason.
[[noreturn]] void crypto_failure(const char* what) {
  char reason[256] = "no reason queued";
  if (const unsigned long code = ERR_get_error()) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw std::runtime_error(std::string("sha256: ") + what + " failed: " + reason);
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw std::bad_alloc();
  if (EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) crypto_failure("EVP_DigestInit_ex");
}

void Sha256::update(const void* data, std::size_t n) {
  if (n == 0) return;
  if (EVP_DigestUpdate(ctx_.get(), data, n) != 1) crypto_failure("EVP_DigestUpdate");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1) crypto_failure("EVP_DigestFinal_ex");
  static const char* digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(digits[digest[i] >> 4]);
    hex.push_back(digits[digest[i] & 0xfu]);
  }
  return hex;
}

std::string sha256_hex(const void* data, std::size_t n) {
  Sha256 sha;
  sha.update(data, n);
  return sha.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open the file to hash it");
  Sha256 sha;
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    sha.update(block.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(path.string() + ": read error while hashing the file");
  return sha.hex_digest();
}

}  // namespace vl
