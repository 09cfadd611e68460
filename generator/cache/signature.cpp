#include "cache/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "util/error.h"
#include "util/sha256.h"

namespace egg::cache {

namespace {

constexpr const char* kAlgorithm = "hmac-sha256";

// One length-prefixed field, so ("ab","c") and ("a","bc") sign differently.
void add_field(std::string& text, const std::string& value) {
  text += std::to_string(value.size());
  text += ':';
  text += value;
}

}  // namespace

EntrySigner::EntrySigner(std::string secret) : secret_(std::move(secret)) {
  if (secret_.size() < 16)
    throw UserError("EGG_REMOTE_CACHE_KEY is too short (" + std::to_string(secret_.size()) +
                        " bytes) to sign shared-cache entries",
                    "use a random team key of at least 16 bytes, e.g. `openssl rand -hex 32`");
}

std::string EntrySigner::mac_hex(const std::string& key, const Files& files) const {
  std::string text;
  add_field(text, "egg-remote-cache-entry-v1");
  add_field(text, key);
  for (const auto& [name, content] : files) {  // std::map: sorted by name
    add_field(text, name);
    add_field(text, sha256_hex(content));
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
            reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &size))
    throw InternalError("OpenSSL HMAC-SHA256 failed");
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += digits[mac[i] >> 4];
    hex += digits[mac[i] & 15];
  }
  return hex;
}

nlohmann::json EntrySigner::sign(const std::string& key, const Files& files) const {
  return {{"alg", kAlgorithm}, {"value", mac_hex(key, files)}};
}

bool EntrySigner::verify(const std::string& key, const Files& files,
                         const nlohmann::json& signature) const {
  if (!signature.is_object() || signature.value("alg", "") != kAlgorithm ||
      !signature.contains("value") || !signature["value"].is_string())
    return false;
  const std::string expected = mac_hex(key, files);
  const std::string& given = signature["value"].get_ref<const std::string&>();
  return given.size() == expected.size() &&
         CRYPTO_memcmp(given.data(), expected.data(), expected.size()) == 0;
}

}  // namespace egg::cache
