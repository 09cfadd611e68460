// SHA-256 digests (OpenSSL) as lowercase hex.
#pragma once

#include <string>
#include <string_view>

namespace egg {

// Hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);

// Incremental SHA-256 over length-prefixed fields, so ("ab","c") and ("a","bc") differ.
class FieldHasher {
 public:
  FieldHasher();
  ~FieldHasher();
  FieldHasher(const FieldHasher&) = delete;
  FieldHasher& operator=(const FieldHasher&) = delete;

  // Adds one field: its name, its length and its bytes.
  void add(std::string_view name, std::string_view value);
  // The hex digest; the hasher cannot be used afterwards.
  std::string finish();

 private:
  void* ctx_;
};

}  // namespace egg
