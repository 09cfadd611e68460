// Cache keys: SHA-256 over length-prefixed, named fields, with the fields kept for `explain`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace egg::cache {

// The version of the cache's key and entry layout; bump it when either changes.
inline constexpr int kCacheSchema = 1;

// Builds a key from named fields in a fixed order.
class KeyBuilder {
 public:
  // Adds a field; order matters and is part of the key.
  void add(const std::string& name, const std::string& value);
  // The hex SHA-256 key over all fields.
  std::string key() const;
  // The fields as {name: {sha256, bytes, preview}} for entry.json and `explain`.
  nlohmann::json describe() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Names of fields whose digests differ between two describe() results (for "why did it miss").
std::vector<std::string> changed_fields(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace egg::cache
