#include "util/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cstdint>

#include "util/error.h"

namespace egg {
namespace {

std::string to_hex(const unsigned char* data, unsigned len) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

void update_length(EVP_MD_CTX* ctx, std::uint64_t n) {
  std::array<unsigned char, 8> bytes{};
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(n >> (8 * (7 - i)));
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
}

}  // namespace

FieldHasher::FieldHasher() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw InternalError("OpenSSL could not initialise SHA-256");
}

FieldHasher::~FieldHasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void FieldHasher::add(std::string_view name, std::string_view value) {
  auto* ctx = static_cast<EVP_MD_CTX*>(ctx_);
  update_length(ctx, name.size());
  EVP_DigestUpdate(ctx, name.data(), name.size());
  update_length(ctx, value.size());
  EVP_DigestUpdate(ctx, value.data(), value.size());
}

std::string FieldHasher::finish() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest.data(), &len);
  return to_hex(digest.data(), len);
}

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1)
    throw InternalError("OpenSSL SHA-256 failed");
  return to_hex(digest.data(), len);
}

}  // namespace egg
