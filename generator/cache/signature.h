// Signatures of shared-cache entries: HMAC-SHA256 (OpenSSL) with the team's key
// ($EGG_REMOTE_CACHE_KEY), over the entry's key and every file's name and SHA-256, as
// length-prefixed fields. Whoever holds the key can write entries that readers accept; a reader
// without it uses no remote entry at all (docs/remote-cache.md).
//
// In an entry's JSON: "signature": {"alg": "hmac-sha256", "value": <64 hex digits>}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cache/store.h"

namespace egg::cache {

// Signs and checks entries with one secret.
class EntrySigner {
 public:
  // A UserError when the secret is shorter than 16 bytes (it would be guessable).
  explicit EntrySigner(std::string secret);

  // The "signature" object for an entry with these files.
  nlohmann::json sign(const std::string& key, const Files& files) const;
  // True when `signature` is this secret's signature of the entry (compared in constant time).
  bool verify(const std::string& key, const Files& files, const nlohmann::json& signature) const;

 private:
  std::string mac_hex(const std::string& key, const Files& files) const;
  std::string secret_;
};

}  // namespace egg::cache
